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

// callersCheck refuses, in the tap handle, every call the callers file can
// never accept, before its message is read (issue 38: grpc-go read and
// unmarshalled up to the message budget of a junk-token call before the
// interceptor refused it): a malformed authorization or more than one, a
// token the file does not list (one atomic load of the set in force and one
// map lookup), and a call without a token when the file lists no
// certificate identity. A call with a listed token, or without a token when
// certificates can identify callers, goes on to the interceptor, which
// needs the peer's certificate (callersAuth).
func callersCheck(file *callers.File) func(metadata.MD) error {
	return func(md metadata.MD) error {
		token, present, err := bearerToken(md)
		if err != nil {
			return authorizationRefusal(err)
		}
		set := file.Current()
		switch {
		case present && !set.KnowsToken(token):
			return errUnknownCaller
		case !present && !set.UsesCertificates():
			return errUnknownCaller
		}
		return nil
	}
}

// authorizationRefusal is the callers file's answer to a bad authorization:
// errUnknownCaller, except that a second header says so.
func authorizationRefusal(err error) error {
	if err == errUnauthenticated {
		return errUnknownCaller
	}
	return err
}

// callersAuth identifies the caller from its verified client certificate
// and its bearer token against the callers file, and puts it in the
// context; the service then checks the cluster the request names.
func callersAuth(file *callers.File) auth.AuthFunc {
	return func(ctx context.Context) (context.Context, error) {
		var p callers.Presented
		md, _ := metadata.FromIncomingContext(ctx)
		token, present, err := bearerToken(md)
		if err != nil {
			return nil, authorizationRefusal(err) // a malformed authorization is never ignored
		}
		p.Token, p.HasToken = token, present
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
