package client

import (
	"context"
	"fmt"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/tokenfile"
)

// tokenRecheck bounds how often the token file is stat'ed for a change
// (a variable so tests can shorten it).
var tokenRecheck = time.Second

// bearerToken sends "authorization: Bearer <token>" with every call, the
// token of a file re-read when it changes (internal/tokenfile).
type bearerToken struct {
	file       *tokenfile.File[string]
	requireTLS bool
}

func newBearerToken(path string, requireTLS bool) (*bearerToken, error) {
	f, err := tokenfile.Open(path, tokenRecheck, func(token []byte) string { return "Bearer " + string(token) })
	if err != nil {
		return nil, fmt.Errorf("decider client: %w", err)
	}
	return &bearerToken{file: f, requireTLS: requireTLS}, nil
}

// GetRequestMetadata implements credentials.PerRPCCredentials: a rotated
// file is sent from the first call after its re-check is due.
func (t *bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": t.file.Fresh()}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials: TLS is
// required except for the plaintext loopback hop New allowed.
func (t *bearerToken) RequireTransportSecurity() bool { return t.requireTLS }
