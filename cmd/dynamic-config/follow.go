package main

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"

	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
)

// followFlags are the follower flags of `decider` (spec 09 §1): the
// front door's decider-client flags with a leader prefix, plus the
// follower's own.
type followFlags struct {
	target   string
	leader   deciderClientFlags
	id       string
	stateDir string
	maxStale time.Duration
}

func (f *followFlags) register(fs *flagSet) {
	fs.stringVar(&f.target, "follow", "DYNAMIC_CONFIG_DECIDER_FOLLOW", "", "follow the leader decider at this gRPC target (host:port, dns:///name:port, static:///a,b): mirror its installation instead of reading one (excludes --installation and every installation variable)")
	f.leader.register(fs, "leader", "DYNAMIC_CONFIG_DECIDER_LEADER_", "the leader", "the target's host")
	fs.stringVar(&f.id, "follower-id", "DYNAMIC_CONFIG_DECIDER_FOLLOWER_ID", "", "this follower's id, a lower-case DNS name (default: the host name, in a pod the pod name)")
	fs.stringVar(&f.stateDir, "state-dir", "DYNAMIC_CONFIG_DECIDER_STATE_DIR", "", "where the follower keeps its last good snapshot and starts from when the leader is unreachable (empty = nowhere)")
	fs.durationVar(&f.maxStale, "max-stale", "DYNAMIC_CONFIG_DECIDER_MAX_STALE", 0, "a follower that heard neither a snapshot nor a heartbeat for longer turns NOT_SERVING and refuses to decide (0 = never)")
}

// followOnly are the flags that mean nothing without --follow.
var followOnly = []string{"leader-plaintext", "leader-ca", "leader-server-name", "leader-client-cert", "leader-client-key",
	"leader-token-file", "follower-id", "state-dir", "max-stale"}

// check validates the follower flags against the rest (spec 09 §1): a
// follower reads no installation of its own.
func (f *followFlags) check(fs *flagSet, environ []string) error {
	if f.target == "" {
		for _, name := range followOnly {
			if fs.isSet(name) {
				return fmt.Errorf("--%s is a follower flag: add --follow LEADER", name)
			}
		}
		return nil
	}
	if fs.isSet("installation") {
		return errors.New("--follow excludes --installation: a follower takes its installation from its leader " + f.target)
	}
	fol := deciderd.Follow{Leader: f.target, ID: f.id, StateDir: f.stateDir, MaxStale: f.maxStale}
	err := fol.Check(environ)
	f.id = fol.ID
	return err
}

// config is the follower part of the decider's Config; nil without --follow.
func (f *followFlags) config(maxRequest int64) *deciderd.Follow {
	if f.target == "" {
		return nil
	}
	leader := f.leader.budgeted(f.target, maxRequest)
	return &deciderd.Follow{
		Leader: f.target,
		Dial: func() (grpc.ClientConnInterface, error) {
			c, err := client.New(leader)
			if err != nil {
				return nil, err
			}
			return c.Conn(), nil
		},
		ID:       f.id,
		StateDir: f.stateDir,
		MaxStale: f.maxStale,
	}
}
