package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
)

// RolloutFileVariable and RolloutFlagHelp are --rollout's (decider, serve;
// spec 10 §2).
const (
	RolloutFileVariable = "DYNAMIC_CONFIG_DECIDER_ROLLOUT_FILE"
	RolloutFlagHelp     = "the rollout document (spec 10): a candidate installation decided beside this one, in shadow or a canary of workloads (re-read on change; a bad one keeps the last good one; missing = no rollout)"
)

// Errors of a rollout document on a decider that reads no installation
// document: a follower (its leader's snapshots carry the leader's rollout)
// or a given installation (the offline doors).
var (
	errRolloutOnFollower = errors.New("decider: --follow excludes --rollout: a follower takes the rollout from its leader's snapshots")
	errRolloutOnGiven    = errors.New("decider: a rollout document goes with an installation document read and watched, not with a given installation")
)

// checkRollout refuses a rollout document where no document is read.
func (cfg Config) checkRollout() error {
	switch {
	case cfg.Installation.Rollout == "":
		return nil
	case cfg.Follow != nil:
		return errRolloutOnFollower
	case cfg.Installation.Given != nil:
		return errRolloutOnGiven
	}
	return nil
}

// rollouts is the decider's rollout (spec 10): its store and its state.
type rollouts struct {
	store *rolloutloader.Store
	state *rolloutstate.State
}

// startRollouts reads a leader's rollout document (Installation.Rollout)
// with the installation's environment into a store that the service, the
// leader's snapshots and a follower's mirror share. A follower starts
// with none: its leader's snapshots bring it. The document is read settled,
// as the installation's (issue 38). An invalid document does not stop the
// decider — a rollout is an experiment beside the installation, never a
// reason not to admit —: it starts without a rollout, every problem logged
// at ERROR and in GetInstallation.rollout.last_reload, and the watch takes
// the document once it is fixed.
func (cfg Config) startRollouts(inForce *installationloader.Store, m *metrics.Decider, logger *slog.Logger) rollouts {
	store := rolloutloader.NewStore(nil)
	if path := cfg.Installation.Rollout; path != "" && cfg.Follow == nil {
		r, err := rolloutloader.LoadSettled(cfg.rolloutOptions())
		at := time.Now()
		var p *rollout.Problems
		switch {
		case errors.As(err, &p):
			logger.Error("rollout refused; starting without one", "document", path, "attempted_revision", p.AttemptedRevision,
				"problem_count", len(p.Lines), "problems", p.Lines)
			store.RecordReload(installationloader.ReloadStatus{At: at, Problems: p.Lines, Items: p.Items, AttemptedRevision: p.AttemptedRevision})
		case err != nil:
			logger.Error("rollout refused; starting without one", "document", path, "error", err.Error())
			store.RecordReload(installationloader.ReloadStatus{At: at, Problems: []string{err.Error()}})
		case r != nil:
			store.Swap(r)
			store.RecordReload(installationloader.ReloadStatus{OK: true, At: at, AttemptedRevision: r.Candidate.Revision})
			rolloutloader.LogLoaded(logger, r, "")
		}
	}
	return rollouts{store: store, state: rolloutstate.New(rolloutstate.Config{
		Rollouts: store, Installation: inForce, Logger: logger, Metrics: m.Rollout(),
	})}
}

// rolloutOptions are where the rollout document comes from: its path and
// the installation's environment.
func (cfg Config) rolloutOptions() rolloutloader.Options {
	return rolloutloader.Options{Path: cfg.Installation.Rollout, Environ: cfg.Installation.Load.Environ}
}

// watch keeps a leader's rollout in step with its document until ctx ends
// (one of the loops Shutdown waits for);
// every rollout put in force goes to the state and to obs (the leader's
// streams).
func (r rollouts) watch(ctx context.Context, cfg Config, loops *sync.WaitGroup, obs ...rolloutloader.Observer) {
	if cfg.Installation.Rollout == "" || cfg.Follow != nil || cfg.Installation.Given != nil {
		return
	}
	loops.Go(func() {
		rolloutloader.Watch(ctx, r.store, cfg.rolloutOptions(), cfg.Installation.ReloadInterval, cfg.Logger,
			append(rolloutloader.Observers{r.state}, obs...))
	})
}

// Rollouts is the decider's rollout state (spec 10): the rollout in force,
// what this decider found comparing it, and Token/Changes — the rollout
// state a cache of answers keys on. Never nil: a decider without a rollout
// has a state whose Token is "".
func (d *Decider) Rollouts() *rolloutstate.State { return d.rollouts }
