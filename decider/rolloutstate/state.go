// Package rolloutstate is what one decider replica knows of the rollout in
// force (spec 10 §3–4, §6): the rollout it reads from its store, and per
// candidate revision a Tracker of what the comparisons found — the counts by
// result, the last 256 differing workloads, one log line per differing
// workload, and the halt. A halt lives in memory only (a restarted replica
// starts un-halted) and lasts until the candidate revision changes.
//
// State.Token is the one rollout state a cache of answers needs: an opaque
// string that changes whenever a rollout could change an answer (the
// candidate revision, the stage, the slice, the guard, a halt), "" while no
// rollout can change one; State.Changes announces each change.
package rolloutstate

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
)

// Config configures a State.
type Config struct {
	// Rollouts holds the rollout in force (Watch, or a follower's snapshots).
	Rollouts *rolloutloader.Store
	// Installation holds the active installation: a candidate of its
	// revision is inert.
	Installation *installationloader.Store
	Logger       *slog.Logger
	Metrics      *metrics.Rollout
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// State is one replica's rollout state. A nil *State has no rollout.
type State struct {
	cfg Config

	bound atomic.Pointer[binding]

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced when Token changes
	lastToken string
	// inertLogged is the id of the inert rollout last said so ("" none).
	inertLogged string
}

// binding is the rollout in force and the tracker of its candidate.
type binding struct {
	r *rollout.Rollout
	t *Tracker
}

// New returns the state over cfg.Rollouts.
func New(cfg Config) *State {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &State{cfg: cfg, changed: make(chan struct{})}
	s.bind()
	s.refresh()
	return s
}

// Current returns the rollout that acts on a decision by the installation
// of activeRevision, and its tracker: nil, nil when there is no rollout or
// its candidate is that installation (inert). It costs two atomic loads
// when nothing changed.
func (s *State) Current(activeRevision string) (*rollout.Rollout, *Tracker) {
	if s == nil {
		return nil, nil
	}
	b := s.bind()
	if b.r == nil || b.r.Inert(activeRevision) {
		return nil, nil
	}
	return b.r, b.t
}

// bind returns the binding of the rollout in force, making a new one when
// the store holds another rollout: the tracker is kept while the candidate
// revision is the same (a change of stage or slice keeps counts and halt),
// and a new candidate gets a new tracker, un-halted.
func (s *State) bind() *binding {
	r := s.cfg.Rollouts.Current()
	if b := s.bound.Load(); b != nil && b.r == r {
		return b
	}
	s.mu.Lock()
	b := s.bound.Load()
	if b != nil && b.r == r {
		s.mu.Unlock()
		return b
	}
	nb := &binding{r: r}
	switch {
	case r == nil:
		s.cfg.Metrics.Candidate("")
	case b != nil && b.t != nil && b.t.candidate == r.Candidate.Revision:
		nb.t = b.t
	default:
		nb.t = newTracker(r.Candidate.Revision, s.cfg.Metrics.Candidate(r.Candidate.Revision), s)
	}
	s.bound.Store(nb)
	s.mu.Unlock()
	s.refresh()
	return nb
}

// RolloutInForce implements rolloutloader.Observer: the rollout in force
// changed.
func (s *State) RolloutInForce(*rollout.Rollout) {
	s.bind()
	s.refresh()
}

// The installationloader.ReloadObserver methods: an installation put in
// force can make the rollout inert, or active again.

// ReloadOK implements installationloader.ReloadObserver.
func (s *State) ReloadOK(string, string) {}

// ReloadRejected implements installationloader.ReloadObserver.
func (s *State) ReloadRejected(int) {}

// ReloadUnchanged implements installationloader.ReloadObserver.
func (s *State) ReloadUnchanged() {}

// InForce implements installationloader.ReloadObserver.
func (s *State) InForce(*installation.Installation) { s.refresh() }

// Token is the rollout state a cache of answers keys on (spec 10 §3–4): an
// opaque string that changes whenever the rollout could change an answer —
// another candidate revision, stage, slice or guard, or a halt — and is ""
// while no rollout can change one (none, or its candidate is the active
// installation). Answers decided under one installation revision and one
// Token are the same answers, except that in the canary stage the answer
// depends on the workload (its key's slice) as well.
func (s *State) Token() string {
	if s == nil {
		return ""
	}
	b := s.bind()
	return token(b, s.active())
}

// active is the active installation (nil: none yet, or no store).
func (s *State) active() *installation.Installation {
	if s.cfg.Installation == nil {
		return nil
	}
	return s.cfg.Installation.Current()
}

func token(b *binding, active *installation.Installation) string {
	if b.r == nil || (active != nil && b.r.Inert(active.Revision)) {
		return ""
	}
	if b.t.Halted() {
		return b.r.ID + "/halted"
	}
	return b.r.ID
}

// Status is what GetInstallation.rollout reports.
type Status struct {
	// Rollout is the rollout in force (nil: none).
	Rollout *rollout.Rollout
	// Inert: its candidate is the active installation.
	Inert bool
	// Report is the tracker's (zero without a rollout).
	Report Report
	// LastReload is the rollout document's latest load attempt (nil: none).
	LastReload *installationloader.ReloadStatus
}

// Status copies the state for a report; ok is false when there is nothing
// to report (no rollout and no load attempt).
func (s *State) Status() (st Status, ok bool) {
	if s == nil {
		return Status{}, false
	}
	b := s.bind()
	st.Rollout, st.LastReload = b.r, s.cfg.Rollouts.LastReload()
	if b.r != nil {
		if a := s.active(); a != nil {
			st.Inert = b.r.Inert(a.Revision)
		}
		st.Report = b.t.Report()
	}
	return st, b.r != nil || st.LastReload != nil
}

// Changes returns a channel closed at the next change of Token (take a new
// one after each).
func (s *State) Changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// refresh announces a change of Token.
func (s *State) refresh() {
	b := s.bound.Load()
	if b == nil {
		return
	}
	active := s.active()
	t := token(b, active)
	s.mu.Lock()
	defer s.mu.Unlock()
	if inert := b.r != nil && active != nil && b.r.Inert(active.Revision); inert && s.inertLogged != b.r.ID {
		s.inertLogged = b.r.ID
		s.cfg.Logger.Info("rollout inert: its candidate is the active installation; nothing is compared",
			"candidate_revision", b.r.Candidate.Revision)
	} else if !inert {
		s.inertLogged = ""
	}
	if t == s.lastToken {
		return
	}
	s.lastToken = t
	close(s.changed)
	s.changed = make(chan struct{})
}
