package classes

import (
	"sync/atomic"

	"github.com/dynamic-config-admission/dynamic-config/internal/broadcast"
)

// Store holds the class set in force. A nil *Store means classes are off;
// a store made by NewPendingStore is on but holds no set until the watch's
// first sync. It is safe for concurrent use.
type Store struct {
	state   atomic.Pointer[storeState]
	swapped broadcast.Broadcast
}

type storeState struct {
	on  bool
	set *Set // nil while pending
}

// NewStore returns a store holding set (a --classes-file).
func NewStore(set *Set) *Store {
	s := &Store{}
	s.Swap(set)
	return s
}

// NewPendingStore returns a store that is on and holds no set until Swap (the watch).
func NewPendingStore() *Store {
	s := &Store{}
	s.state.Store(&storeState{on: true})
	return s
}

// Enabled reports whether classes are on.
func (s *Store) Enabled() bool { return s != nil && s.state.Load().on }

// Current is the set in force; nil when classes are off or not synced yet.
func (s *Store) Current() *Set {
	if s == nil {
		return nil
	}
	return s.state.Load().set
}

// Synced reports whether classes are off or the set is held: whether the
// decider may serve as far as classes go.
func (s *Store) Synced() bool { return !s.Enabled() || s.Current() != nil }

// Swap puts set in force (classes on) and wakes the waiters of Changed.
func (s *Store) Swap(set *Set) {
	s.state.Store(&storeState{on: true, set: set})
	s.swapped.Notify()
}

// TurnOff turns classes off (a test decider that answers for several
// installations in turn) and wakes the waiters of Changed.
func (s *Store) TurnOff() {
	s.state.Store(&storeState{})
	s.swapped.Notify()
}

// Changed returns a channel closed at the next Swap or TurnOff (a revision
// watch announces the new classes revision at once); nil — never closed —
// when classes are off for good (a nil *Store). Take it before reading
// Current.
func (s *Store) Changed() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.swapped.Changed()
}
