package fleetstatus

import (
	"context"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// AskTarget asks every replica target names (Addresses, resolved within
// timeout) for its installation, each over base with the replica's address
// as its target and, when base names no server, the target's name to verify
// TLS against. The error is the target's (a usage error: nothing was asked).
func AskTarget(ctx context.Context, target string, base client.Config, timeout time.Duration) ([]Replica, error) {
	resolveCtx, cancel := context.WithTimeout(ctx, timeout)
	addrs, name, err := Addresses(resolveCtx, target)
	cancel()
	if err != nil {
		return nil, err
	}
	if base.ServerName == "" {
		base.ServerName = name
	}
	return AskAll(ctx, addrs, func(addr string) client.Config {
		cfg := base
		cfg.Target = "passthrough:///" + addr
		return cfg
	}, timeout), nil
}

// Addr is the replica's address.
func (r Replica) Addr() string { return r.addr }

// Response is what the replica answered (nil when it did not: Err).
func (r Replica) Response() *deciderv1.GetInstallationResponse { return r.resp }

// Err is why the replica did not answer (nil when it did).
func (r Replica) Err() error { return r.err }

// NewReplica is the answer of the replica at addr, or why it gave none
// (for the tests of the doors that read replicas).
func NewReplica(addr string, resp *deciderv1.GetInstallationResponse, err error) Replica {
	return Replica{addr: addr, resp: resp, err: err}
}

// Followers are the followers the replicas report, each once (a follower
// streams from one replica at a time: the connected, else the latest
// report, wins), sorted by follower id, then caller.
func Followers(replicas []Replica) []*deciderv1.FollowerState {
	byID, keys := followersByID(replicas)
	out := make([]*deciderv1.FollowerState, len(keys))
	for i, k := range keys {
		out[i] = byID[k].state
	}
	return out
}
