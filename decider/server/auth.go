package server

import (
	"context"
	"strings"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// errUnauthenticated is the one answer to a missing, malformed or wrong
// token; it never says which.
var errUnauthenticated = status.Error(codes.Unauthenticated, "a valid bearer token is required")

// needsToken selects the calls the token guards: everything except health
// and reflection (spec 06 §7), which stay behind mTLS only.
func needsToken(_ context.Context, call interceptors.CallMeta) bool {
	return call.Service != healthpb.Health_ServiceDesc.ServiceName &&
		!strings.HasPrefix(call.Service, "grpc.reflection.")
}

// bearerAuth checks the authorization: Bearer <token> metadata against the
// token file.
func bearerAuth(token *tokenFile) auth.AuthFunc {
	return func(ctx context.Context) (context.Context, error) {
		presented, err := auth.AuthFromMD(ctx, "bearer")
		if err != nil || !token.Matches(presented) {
			return nil, errUnauthenticated
		}
		return ctx, nil
	}
}
