package classes

import "sync/atomic"

// Store holds the class set in force. A nil *Store means classes are off;
// a store made by NewPendingStore is on but holds no set until the watch's
// first sync. It is safe for concurrent use.
type Store struct {
	set atomic.Pointer[Set]
}

// NewStore returns a store holding set (a --classes-file).
func NewStore(set *Set) *Store {
	s := &Store{}
	s.set.Store(set)
	return s
}

// NewPendingStore returns a store that holds no set until Swap (the watch).
func NewPendingStore() *Store { return &Store{} }

// Enabled reports whether classes are on.
func (s *Store) Enabled() bool { return s != nil }

// Current is the set in force; nil when classes are off or not synced yet.
func (s *Store) Current() *Set {
	if s == nil {
		return nil
	}
	return s.set.Load()
}

// Synced reports whether classes are off or the set is held: whether the
// decider may serve as far as classes go.
func (s *Store) Synced() bool { return s == nil || s.set.Load() != nil }

// Swap puts set in force.
func (s *Store) Swap(set *Set) { s.set.Store(set) }
