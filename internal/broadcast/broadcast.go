// Package broadcast wakes every waiter at once when something changes: a
// channel closed on each change and replaced by a fresh one. The decider's
// installation and class stores announce their swaps with it, so that a
// WatchRevision stream announces a new revision when it is put in force
// instead of at its next heartbeat.
package broadcast

import "sync"

// Broadcast is a change signal. The zero value is ready to use; it must not
// be copied after first use.
type Broadcast struct {
	mu sync.Mutex
	ch chan struct{} // nil until someone waits
}

// Changed returns a channel that is closed at the next Notify. A waiter
// takes the channel BEFORE it reads the state it watches: a change between
// the two then still closes the channel it holds.
func (b *Broadcast) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// Notify wakes every waiter of the channel Changed has handed out. The
// changed state must be visible before Notify is called.
func (b *Broadcast) Notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
