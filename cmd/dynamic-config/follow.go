package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
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
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		for _, v := range installation.Variables() {
			if name == v && installation.Trim(value) != "" {
				return fmt.Errorf("--follow excludes the installation variable %s: a follower takes its installation from its leader %s", name, f.target)
			}
		}
	}
	if err := follower.CheckMaxStale(f.maxStale); err != nil {
		return err
	}
	if f.id == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("--follower-id: no host name to default to (%w); set --follower-id", err)
		}
		f.id = strings.ToLower(host)
	}
	if !dnsname.IsSubdomain(f.id) {
		return fmt.Errorf("--follower-id is %q: a lower-case DNS name", f.id)
	}
	if f.stateDir != "" {
		if err := os.MkdirAll(f.stateDir, 0o700); err != nil {
			return fmt.Errorf("--state-dir: %w", err)
		}
	}
	return nil
}

// setup is the follower part of the decider's setup; nil without --follow.
func (f *followFlags) setup(maxRequest int64) *followSetup {
	if f.target == "" {
		return nil
	}
	return &followSetup{
		client:   f.leaderClient(maxRequest),
		id:       f.id,
		stateDir: f.stateDir,
		maxStale: f.maxStale,
	}
}

// leaderClient is the client configuration of the stream to the leader.
func (f *followFlags) leaderClient(maxRequest int64) client.Config {
	cfg := f.leader.config(f.target)
	cfg.MaxMessageBytes = msgbudget.Bytes(maxRequest)
	return cfg
}

// followSetup is what a follower needs to start.
type followSetup struct {
	client   client.Config
	id       string
	stateDir string
	maxStale time.Duration
	backoff  follower.Backoff // zero = the default (tests shorten it)
}

// start dials the leader (lazily), serves the saved state if any and
// returns the follower; Run starts following.
func (s *followSetup) start(store *installationloader.Store, setup deciderSetup, m *metrics.Decider, onChange func()) (*follower.Follower, error) {
	c, err := client.New(s.client)
	if err != nil {
		return nil, fmt.Errorf("decider: --follow: %w", err)
	}
	f := follower.New(follower.Config{
		Conn:     c.Conn(),
		Leader:   s.client.Target,
		ID:       s.id,
		Cluster:  setup.cluster,
		StateDir: s.stateDir,
		MaxStale: s.maxStale,
		Store:    store,
		Observer: m,
		Metrics:  metrics.NewFollower(setup.registry),
		Logger:   setup.logger,
		Backoff:  s.backoff,
		OnChange: onChange,
	})
	f.Start()
	return f, nil
}
