// Package tokenfile holds a bearer token read from a file and re-read when
// the file changes (a Secret update swaps it under a running pod): the
// decider checks presented tokens against one (decider/server), the front
// door sends one (frontdoor/client). Each keeps only what it derives from
// the token (the decider a digest, the front door its header). A file that
// becomes unreadable or empty keeps the last good token.
package tokenfile

import (
	"bytes"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// File is a token file and the value derived from the token in force.
type File[T any] struct {
	path    string
	recheck time.Duration
	derive  func(token []byte) T

	state      atomic.Pointer[state[T]]
	checkedAt  atomic.Int64 // unix nanoseconds of the last re-check
	rechecking atomic.Bool
}

// state is one reading of the file.
type state[T any] struct {
	modTime time.Time
	size    int64
	value   T
}

// Open reads path, which must hold a non-empty token (surrounding white
// space is not part of it); derive turns the token into what is kept.
// recheck bounds how often the file is stat'ed for a change.
func Open[T any](path string, recheck time.Duration, derive func(token []byte) T) (*File[T], error) {
	f := &File[T]{path: path, recheck: recheck, derive: derive}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	st, err := f.read(info)
	if err != nil {
		return nil, err
	}
	f.state.Store(st)
	f.checkedAt.Store(time.Now().UnixNano())
	return f, nil
}

// read reads and derives the token of the file described by info.
func (f *File[T]) read(info os.FileInfo) (*state[T], error) {
	raw, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	token := bytes.TrimSpace(raw)
	if len(token) == 0 {
		return nil, fmt.Errorf("token file %s is empty", f.path)
	}
	return &state[T]{modTime: info.ModTime(), size: info.Size(), value: f.derive(token)}, nil
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
// caller's goroutine (a rotated file is in force for this very call).
func (f *File[T]) Fresh() T {
	if st := f.state.Load(); f.due() {
		f.recheckFrom(st)
	}
	return f.state.Load().value
}

// recheckFrom re-reads the file when it changed since st.
func (f *File[T]) recheckFrom(st *state[T]) {
	defer f.rechecking.Store(false)
	defer f.checkedAt.Store(time.Now().UnixNano())
	info, err := os.Stat(f.path)
	if err != nil || info.ModTime().Equal(st.modTime) && info.Size() == st.size {
		return
	}
	if next, err := f.read(info); err == nil {
		f.state.Store(next) // on failure the last good token stays
	}
}
