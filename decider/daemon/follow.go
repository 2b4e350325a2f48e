package daemon

import (
	"fmt"

	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
)

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
