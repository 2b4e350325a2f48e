package installationloader

import (
	"sync/atomic"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
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

// Swap puts inst in force and returns the previous one.
func (s *Store) Swap(inst *installation.Installation) *installation.Installation {
	return s.current.Swap(inst)
}

// LastReload returns the latest reload attempt, nil before any.
func (s *Store) LastReload() *ReloadStatus { return s.lastReload.Load() }

// RecordReload records a reload attempt.
func (s *Store) RecordReload(r ReloadStatus) { s.lastReload.Store(&r) }
