package client

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// tokenRecheck bounds how often the token file is stat'ed for a change
// (a variable so tests can shorten it).
var tokenRecheck = time.Second

// bearerToken sends "authorization: Bearer <token>" with every call. The
// file is re-read when it changes; a file that becomes unreadable or empty
// keeps the last good token.
type bearerToken struct {
	path       string
	requireTLS bool

	mu        sync.Mutex
	checkedAt time.Time
	modTime   time.Time
	size      int64
	header    string
}

func newBearerToken(path string, requireTLS bool) (*bearerToken, error) {
	t := &bearerToken{path: path, requireTLS: requireTLS}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("decider client: token file: %w", err)
	}
	if err := t.load(info); err != nil {
		return nil, err
	}
	t.checkedAt = time.Now()
	return t, nil
}

func (t *bearerToken) load(info os.FileInfo) error {
	raw, err := os.ReadFile(t.path)
	if err != nil {
		return fmt.Errorf("decider client: token file: %w", err)
	}
	token := bytes.TrimSpace(raw)
	if len(token) == 0 {
		return fmt.Errorf("decider client: token file %s is empty", t.path)
	}
	t.header = "Bearer " + string(token)
	t.modTime, t.size = info.ModTime(), info.Size()
	return nil
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t *bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now := time.Now(); now.Sub(t.checkedAt) >= tokenRecheck {
		t.checkedAt = now
		if info, err := os.Stat(t.path); err == nil && (!info.ModTime().Equal(t.modTime) || info.Size() != t.size) {
			_ = t.load(info) // on failure the last good token stays
		}
	}
	return map[string]string{"authorization": t.header}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: TLS is
// required except for the plaintext loopback hop New allowed.
func (t *bearerToken) RequireTransportSecurity() bool { return t.requireTLS }
