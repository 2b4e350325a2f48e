package server

import (
	"log/slog"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/selector"
	"google.golang.org/grpc"

	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/logsample"
)

// chain returns the unary and stream chains in the order of spec 06
// §7: metrics, logging, auth, recovery — recovery innermost, so a panic in a
// handler becomes INTERNAL and is still logged and counted.
func chain(m *metrics.Decider, logger *slog.Logger, refused *logsample.Sampler, authFn auth.AuthFunc) ([]grpc.UnaryServerInterceptor, []grpc.StreamServerInterceptor) {
	var unary []grpc.UnaryServerInterceptor
	var stream []grpc.StreamServerInterceptor

	if gm := m.GRPCServer(); gm != nil {
		unary = append(unary, gm.UnaryServerInterceptor())
		stream = append(stream, gm.StreamServerInterceptor())
	}

	logUnary, logStream := callLogging(logger, refused)
	unary = append(unary, logUnary)
	stream = append(stream, logStream)

	if authFn != nil {
		unary = append(unary, selector.UnaryServerInterceptor(auth.UnaryServerInterceptor(authFn), selector.MatchFunc(needsToken)))
		stream = append(stream, selector.StreamServerInterceptor(auth.StreamServerInterceptor(authFn), selector.MatchFunc(needsToken)))
	}

	rec := recovery.WithRecoveryHandlerContext(recoverPanic(logger))
	unary = append(unary, decisionIDs, recovery.UnaryServerInterceptor(rec))
	stream = append(stream, recovery.StreamServerInterceptor(rec))
	return unary, stream
}
