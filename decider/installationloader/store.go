package installationloader

import (
	"sync/atomic"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/broadcast"
)

// ReloadStatus is the outcome of the latest reload attempt.
type ReloadStatus struct {
	OK       bool
	At       time.Time
	Problems []string
	// Items are Problems typed (installation.Problem), in the same order;
	// a problem that is not an installation's (the file could not be
	// loaded at all) has none.
	Items             []installation.Problem
	AttemptedRevision string
}

// Store holds the installation in force. Readers take a snapshot with Current
// and use it for a whole decision; a swap never changes a snapshot in use.
type Store struct {
	current    atomic.Pointer[installation.Installation]
	lastReload atomic.Pointer[ReloadStatus]
	swapped    broadcast.Broadcast
}

// NewStore returns a store holding inst (which may be nil until the first load).
func NewStore(inst *installation.Installation) *Store {
	s := &Store{}
	if inst != nil {
		s.current.Store(inst)
	}
	return s
}

// Current returns the installation in force, nil when none is held yet.
func (s *Store) Current() *installation.Installation { return s.current.Load() }

// Revision returns the revision of the installation in force, "" when none is
// held yet: what a log line, a metric or a follower's SyncRequest names.
func (s *Store) Revision() string {
	if inst := s.current.Load(); inst != nil {
		return inst.Revision
	}
	return ""
}

// Swap puts inst in force and returns the previous one; it wakes the
// waiters of Changed once inst is in force.
func (s *Store) Swap(inst *installation.Installation) *installation.Installation {
	old := s.current.Swap(inst)
	s.swapped.Notify()
	return old
}

// Changed returns a channel closed at the next Swap (a revision watch
// announces the new revision at once). Take it before reading Current.
func (s *Store) Changed() <-chan struct{} { return s.swapped.Changed() }

// LastReload returns the latest reload attempt, nil before any.
func (s *Store) LastReload() *ReloadStatus { return s.lastReload.Load() }

// RecordReload records a reload attempt.
func (s *Store) RecordReload(r ReloadStatus) { s.lastReload.Store(&r) }
