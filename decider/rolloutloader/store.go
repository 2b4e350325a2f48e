package rolloutloader

import (
	"sync/atomic"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// Store holds the rollout in force (nil: none). Readers take a snapshot
// with Current and use it for a whole decision; a swap never changes a
// snapshot in use.
type Store struct {
	current    atomic.Pointer[rollout.Rollout]
	lastReload atomic.Pointer[installationloader.ReloadStatus]
}

// NewStore returns a store holding r (nil: no rollout).
func NewStore(r *rollout.Rollout) *Store {
	s := &Store{}
	if r != nil {
		s.current.Store(r)
	}
	return s
}

// Current returns the rollout in force, nil when there is none. A nil
// *Store holds none.
func (s *Store) Current() *rollout.Rollout {
	if s == nil {
		return nil
	}
	return s.current.Load()
}

// Swap puts r in force (nil: no rollout) and returns the previous one.
func (s *Store) Swap(r *rollout.Rollout) *rollout.Rollout { return s.current.Swap(r) }

// LastReload returns the latest load attempt of the rollout document, nil
// before any.
func (s *Store) LastReload() *installationloader.ReloadStatus {
	if s == nil {
		return nil
	}
	return s.lastReload.Load()
}

// RecordReload records a load attempt.
func (s *Store) RecordReload(r installationloader.ReloadStatus) { s.lastReload.Store(&r) }

// Observer is told about every rollout put in force (nil: the rollout was
// removed): by Watch after a reload, by a follower after a snapshot.
// Implementations must be safe for concurrent use.
type Observer interface {
	RolloutInForce(r *rollout.Rollout)
}

// Observers tells every one of its observers, in order.
type Observers []Observer

// RolloutInForce implements Observer.
func (o Observers) RolloutInForce(r *rollout.Rollout) {
	for _, x := range o {
		if x != nil {
			x.RolloutInForce(r)
		}
	}
}
