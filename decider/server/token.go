package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// tokenRecheck bounds how often the token file is stat'ed for a change
// (a variable so tests can shorten it).
var tokenRecheck = time.Second

// tokenFile holds the expected bearer token, re-read when the file changes
// (a Secret update swaps it under a running pod). Only the token's digest is
// kept; a file that becomes unreadable or empty keeps the last good token.
// Readers never wait and never do I/O: a due re-check runs on its own
// goroutine and swaps the new token in atomically (issue 23), because the
// check runs in the transport's tap handle, on a connection's read loop.
type tokenFile struct {
	path string

	state      atomic.Pointer[tokenState]
	checkedAt  atomic.Int64 // unix nanoseconds of the last re-check
	rechecking atomic.Bool
}

// tokenState is one reading of the file.
type tokenState struct {
	modTime time.Time
	size    int64
	digest  [sha256.Size]byte
}

// newTokenFile reads path; it must hold a non-empty token.
func newTokenFile(path string) (*tokenFile, error) {
	t := &tokenFile{path: path}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth token file: %w", err)
	}
	st, err := readToken(path, info)
	if err != nil {
		return nil, err
	}
	t.state.Store(st)
	t.checkedAt.Store(time.Now().UnixNano())
	return t, nil
}

// readToken reads and digests the token of path.
func readToken(path string, info os.FileInfo) (*tokenState, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth token file: %w", err)
	}
	token := bytes.TrimSpace(raw)
	if len(token) == 0 {
		return nil, fmt.Errorf("auth token file %s is empty", path)
	}
	return &tokenState{modTime: info.ModTime(), size: info.Size(), digest: sha256.Sum256(token)}, nil
}

// current returns the digest of the token in force; when a re-check is due
// it starts one in the background (at most one at a time).
func (t *tokenFile) current() [sha256.Size]byte {
	st := t.state.Load()
	if time.Now().UnixNano()-t.checkedAt.Load() >= int64(tokenRecheck) && t.rechecking.CompareAndSwap(false, true) {
		go t.recheck(st)
	}
	return st.digest
}

// recheck re-reads the file when it changed since st.
func (t *tokenFile) recheck(st *tokenState) {
	defer t.rechecking.Store(false)
	defer t.checkedAt.Store(time.Now().UnixNano())
	info, err := os.Stat(t.path)
	if err != nil || info.ModTime().Equal(st.modTime) && info.Size() == st.size {
		return
	}
	if next, err := readToken(t.path, info); err == nil {
		t.state.Store(next) // on failure the last good token stays
	}
}

// Matches compares presented with the token in constant time (over digests,
// so neither content nor length leaks through timing).
func (t *tokenFile) Matches(presented string) bool {
	want := t.current()
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}
