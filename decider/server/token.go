package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"os"
	"sync"
	"time"
)

// tokenRecheck bounds how often the token file is stat'ed for a change
// (a variable so tests can shorten it).
var tokenRecheck = time.Second

// tokenFile holds the expected bearer token, re-read when the file changes
// (a Secret update swaps it under a running pod). Only the token's digest is
// kept; a file that becomes unreadable or empty keeps the last good token.
type tokenFile struct {
	path string

	mu        sync.Mutex
	checkedAt time.Time
	modTime   time.Time
	size      int64
	digest    [sha256.Size]byte
}

// newTokenFile reads path; it must hold a non-empty token.
func newTokenFile(path string) (*tokenFile, error) {
	t := &tokenFile{path: path}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth token file: %w", err)
	}
	if err := t.load(info); err != nil {
		return nil, err
	}
	t.checkedAt = time.Now()
	return t, nil
}

// load reads the token; the caller holds mu (or owns t).
func (t *tokenFile) load(info os.FileInfo) error {
	raw, err := os.ReadFile(t.path)
	if err != nil {
		return fmt.Errorf("auth token file: %w", err)
	}
	token := bytes.TrimSpace(raw)
	if len(token) == 0 {
		return fmt.Errorf("auth token file %s is empty", t.path)
	}
	t.digest = sha256.Sum256(token)
	t.modTime, t.size = info.ModTime(), info.Size()
	return nil
}

// current returns the digest of the token in force, re-reading the file
// when it changed since the last check.
func (t *tokenFile) current() [sha256.Size]byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now := time.Now(); now.Sub(t.checkedAt) >= tokenRecheck {
		t.checkedAt = now
		if info, err := os.Stat(t.path); err == nil && (!info.ModTime().Equal(t.modTime) || info.Size() != t.size) {
			_ = t.load(info) // on failure the last good token stays
		}
	}
	return t.digest
}

// Matches compares presented with the token in constant time (over digests,
// so neither content nor length leaks through timing).
func (t *tokenFile) Matches(presented string) bool {
	want := t.current()
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}
