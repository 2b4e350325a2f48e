package server

import (
	"context"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
)

// errUnknownCaller is the one answer to credentials the callers file does
// not know; it never says which part was wrong, nor who is known.
var errUnknownCaller = status.Error(codes.Unauthenticated, "a credential of a known caller is required")

// callersAuth identifies the caller from its verified client certificate
// and its bearer token against the callers file, and puts it in the
// context; the service then checks the cluster the request names.
func callersAuth(file *callers.File) auth.AuthFunc {
	return func(ctx context.Context) (context.Context, error) {
		var p callers.Presented
		if len(metadata.ValueFromIncomingContext(ctx, "authorization")) > 0 {
			token, err := auth.AuthFromMD(ctx, "bearer")
			if err != nil || token == "" {
				return nil, errUnknownCaller // a malformed authorization is never ignored
			}
			p.Token, p.HasToken = token, true
		}
		if pr, ok := peer.FromContext(ctx); ok {
			if info, ok := pr.AuthInfo.(credentials.TLSInfo); ok && len(info.State.VerifiedChains) > 0 && len(info.State.VerifiedChains[0]) > 0 {
				leaf := info.State.VerifiedChains[0][0]
				for _, u := range leaf.URIs {
					p.URIs = append(p.URIs, u.String())
				}
				p.DNSNames = leaf.DNSNames
			}
		}
		c, ok := file.Current().Authenticate(p)
		if !ok {
			return nil, errUnknownCaller
		}
		return callers.WithCaller(ctx, c), nil
	}
}
