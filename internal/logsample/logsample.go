// Package logsample bounds a log line that an outsider can make the
// process write at will (a refused call, a refused certificate): the first
// occurrence is logged, then at most one per interval, carrying how many
// were suppressed since the last one written.
package logsample

import (
	"sync"
	"time"
)

// Sampler decides which occurrences of one line are written. The zero
// value is not usable; use New.
type Sampler struct {
	interval time.Duration
	now      func() time.Time

	mu         sync.Mutex
	last       time.Time
	logged     bool
	suppressed int
}

// New returns a sampler writing at most one line per interval; now is the
// clock (nil = time.Now).
func New(interval time.Duration, now func() time.Time) *Sampler {
	if now == nil {
		now = time.Now
	}
	return &Sampler{interval: interval, now: now}
}

// Allow records one occurrence. It reports whether this one is written and,
// when it is, how many were suppressed since the last one written.
func (s *Sampler) Allow() (write bool, suppressed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.logged && now.Sub(s.last) < s.interval {
		s.suppressed++
		return false, 0
	}
	suppressed, s.suppressed = s.suppressed, 0
	s.last, s.logged = now, true
	return true, suppressed
}
