package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/tokenfile"
)

// tokenRecheck bounds how often the token file is stat'ed for a change
// (a variable so tests can shorten it).
var tokenRecheck = time.Second

// tokenFile holds the expected bearer token (internal/tokenfile): only its
// digest is kept. Readers never wait and never do I/O (Current): the check
// runs in the transport's tap handle, on a connection's read loop (issue 23).
type tokenFile struct {
	file *tokenfile.File[[sha256.Size]byte]
}

// newTokenFile reads path; it must hold a non-empty token.
func newTokenFile(path string) (*tokenFile, error) {
	f, err := tokenfile.Open(path, tokenRecheck, func(token []byte) [sha256.Size]byte { return sha256.Sum256(token) })
	if err != nil {
		return nil, fmt.Errorf("auth %w", err)
	}
	return &tokenFile{file: f}, nil
}

// Matches compares presented with the token in constant time (over digests,
// so neither content nor length leaks through timing).
func (t *tokenFile) Matches(presented string) bool {
	want := t.file.Current()
	got := sha256.Sum256([]byte(presented))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}
