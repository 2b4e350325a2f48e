package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// errUnauthenticated is the one answer to a missing, malformed or wrong
// token; it never says which.
var errUnauthenticated = status.Error(codes.Unauthenticated, "a valid bearer token is required")

// needsToken selects the calls the token guards: everything except health
// and reflection (spec 06 §7), which stay behind mTLS only.
func needsToken(_ context.Context, call interceptors.CallMeta) bool {
	return guardedService(call.Service)
}

// guardedService is needsToken by service name.
func guardedService(service string) bool {
	return service != healthpb.Health_ServiceDesc.ServiceName &&
		!strings.HasPrefix(service, "grpc.reflection.")
}

// bearerToken reads the one "authorization: Bearer <token>" of md. present
// is false when there is none; a second authorization header is refused,
// never ignored (a proxy or a client can add one; which one counts would
// otherwise be an accident of order).
func bearerToken(md metadata.MD) (token string, present bool, err error) {
	values := md.Get("authorization")
	switch {
	case len(values) == 0:
		return "", false, nil
	case len(values) > 1:
		return "", true, status.Error(codes.Unauthenticated, fmt.Sprintf("exactly one authorization header is accepted; this call carries %d", len(values)))
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", true, errUnauthenticated
	}
	return token, true, nil
}

// bearerCheck checks the authorization of md against the token file.
func bearerCheck(token *tokenFile) func(metadata.MD) error {
	return func(md metadata.MD) error {
		presented, present, err := bearerToken(md)
		if err != nil {
			return err
		}
		if !present || !token.Matches(presented) {
			return errUnauthenticated
		}
		return nil
	}
}

// bearerAuth is bearerCheck as an interceptor's AuthFunc (the tap handle
// already refused what it refuses; this keeps the guard when a call reaches
// the server some other way, e.g. ServeHTTP).
func bearerAuth(token *tokenFile) auth.AuthFunc {
	check := bearerCheck(token)
	return func(ctx context.Context) (context.Context, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if err := check(md); err != nil {
			return nil, err
		}
		return ctx, nil
	}
}
