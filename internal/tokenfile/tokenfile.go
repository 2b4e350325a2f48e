// Package tokenfile holds a bearer token read from a file and re-read when
// the file changes (a Secret update swaps it under a running pod): the
// decider checks presented tokens against one (decider/server), the front
// door sends one (frontdoor/client). Each keeps only what it derives from
// the token (the decider a digest, the front door its header). A file that
// becomes unreadable or empty keeps the last good token. A rotated file is
// put in force only once it has settled (issue 38, internal/stablefile):
// read stable, with the same content at two re-checks one settle interval
// apart, or unwritten for that long — a token written in place is never
// taken half written.
package tokenfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// MaxBytes bounds a token file: a bearer token crosses the hop as one
// header, and the decider bounds a call's whole header block to 32 KiB. A
// larger file is refused unread (at Open) or left out of force (a rotation).
const MaxBytes = 64 << 10

// File is a token file and the value derived from the token in force.
type File[T any] struct {
	path    string
	recheck time.Duration
	derive  func(token []byte) T

	state      atomic.Pointer[state[T]]
	checkedAt  atomic.Int64 // unix nanoseconds of the last re-check
	rechecking atomic.Bool
	// pending and waiting belong to the one re-check running (rechecking).
	pending stablefile.Debounce
	waiting bool // a rotation is read but has not settled
}

// state is one reading of the file.
type state[T any] struct {
	modTime time.Time
	size    int64
	digest  [sha256.Size]byte
	value   T
}

// Open reads path, which must hold a non-empty token (surrounding white
// space is not part of it); derive turns the token into what is kept.
// recheck bounds how often the file is stat'ed for a change.
func Open[T any](path string, recheck time.Duration, derive func(token []byte) T) (*File[T], error) {
	f := &File[T]{path: path, recheck: recheck, derive: derive}
	s, err := stablefile.ReadSettled(path, MaxBytes, 0)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	st, err := f.derived(s)
	if err != nil {
		return nil, err
	}
	f.state.Store(st)
	f.checkedAt.Store(time.Now().UnixNano())
	return f, nil
}

// derived derives the token of a read of the file.
func (f *File[T]) derived(s stablefile.Snapshot) (*state[T], error) {
	token := bytes.TrimSpace(s.Data)
	if len(token) == 0 {
		return nil, fmt.Errorf("token file %s is empty", f.path)
	}
	return &state[T]{modTime: s.ModTime, size: int64(len(s.Data)), digest: s.Digest, value: f.derive(token)}, nil
}

// due claims a re-check when one is due and none runs.
func (f *File[T]) due() bool {
	return time.Now().UnixNano()-f.checkedAt.Load() >= int64(f.recheck) && f.rechecking.CompareAndSwap(false, true)
}

// Current returns the value in force without waiting or doing I/O: a due
// re-check runs on its own goroutine and swaps the new value in (for a
// check on a connection's read loop).
func (f *File[T]) Current() T {
	st := f.state.Load()
	if f.due() {
		go f.recheckFrom(st)
	}
	return st.value
}

// Fresh returns the value in force after a due re-check, which runs on the
// caller's goroutine (a rotated file that has settled is in force for this
// very call).
func (f *File[T]) Fresh() T {
	if st := f.state.Load(); f.due() {
		f.recheckFrom(st)
	}
	return f.state.Load().value
}

// recheckFrom re-reads the file when it changed since st (or a rotation
// read earlier has not settled), and puts the new token in force once it
// has settled; on any failure the last good token stays.
func (f *File[T]) recheckFrom(st *state[T]) {
	defer f.rechecking.Store(false)
	defer f.checkedAt.Store(time.Now().UnixNano())
	info, err := os.Stat(f.path)
	if err != nil || !f.waiting && info.ModTime().Equal(st.modTime) && info.Size() == st.size {
		return
	}
	s, err := stablefile.Read(f.path, MaxBytes)
	switch {
	case errors.Is(err, stablefile.ErrUnstable):
		f.pending.Reset()
		f.waiting = true
		return
	case err != nil:
		f.pending.Reset()
		f.waiting = false
		return
	case s.Digest == st.digest:
		f.waiting = false // touched, not rotated
		f.state.Store(&state[T]{modTime: s.ModTime, size: int64(len(s.Data)), digest: st.digest, value: st.value})
		return
	case !f.pending.Settled(s, time.Now()):
		f.waiting = true // read again at the next re-check
		return
	}
	f.waiting = false
	if next, err := f.derived(s); err == nil {
		f.state.Store(next)
	}
}
