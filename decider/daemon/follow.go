package daemon

import (
	"fmt"
	"os"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
)

// Check checks a follower's settings against the process (spec 09 §1), as
// the decider's flags name them: no installation variable set in environ (a
// follower takes its installation from its leader), MaxStale 0 or at least
// three heartbeats, an ID that is a lower-case DNS name (the host name when
// empty; Check sets it), and a StateDir it can create.
func (f *Follow) Check(environ []string) error {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		for _, v := range installation.Variables() {
			if name == v && installation.Trim(value) != "" {
				return fmt.Errorf("--follow excludes the installation variable %s: a follower takes its installation from its leader %s", name, f.Leader)
			}
		}
	}
	if err := follower.CheckMaxStale(f.MaxStale); err != nil {
		return err
	}
	if f.ID == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("--follower-id: no host name to default to (%w); set --follower-id", err)
		}
		f.ID = strings.ToLower(host)
	}
	if !dnsname.IsSubdomain(f.ID) {
		return fmt.Errorf("--follower-id is %q: a lower-case DNS name", f.ID)
	}
	if f.StateDir != "" {
		if err := os.MkdirAll(f.StateDir, 0o700); err != nil {
			return fmt.Errorf("--state-dir: %w", err)
		}
	}
	return nil
}

// startFollower dials the leader (a lazy dial: no connection yet), puts
// the saved state in force if there is one and returns the follower; Run
// starts following.
func (cfg Config) startFollower(store *installationloader.Store, ro rollouts, m *metrics.Decider, onChange func()) (*follower.Follower, error) {
	f := cfg.Follow
	if f.Dial == nil {
		return nil, fmt.Errorf("decider: --follow: no way to dial the leader %s", f.Leader)
	}
	conn, err := f.Dial()
	if err != nil {
		return nil, fmt.Errorf("decider: --follow: %w", err)
	}
	fol := follower.New(follower.Config{
		Conn:     conn,
		Leader:   f.Leader,
		ID:       f.ID,
		Cluster:  cfg.Cluster,
		StateDir: f.StateDir,
		MaxStale: f.MaxStale,
		Store:    store,
		Observer: installationloader.Observers{m, ro.state},
		Metrics:  metrics.NewFollower(cfg.Registry),
		Logger:   cfg.Logger,
		Backoff:  f.Backoff,
		OnChange: onChange,
		// spec 10 §6: the leader's rollout, applied to this cluster
		Rollouts:     ro.store,
		RolloutState: ro.state,
	})
	fol.Start()
	return fol, nil
}
