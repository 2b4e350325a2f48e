package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/internal/logline"
	"github.com/dynamic-config-admission/dynamic-config/internal/logsample"
)

// callLogging returns the interceptors that write one "grpc call" line per
// finished call with method, code and duration only (spec 07 §4): payloads,
// peers and error texts are never logged. Successful calls log at debug, so
// at the default level a call costs a time.Now and one Enabled check — no
// field lists are built for a line nobody writes. A refused call's line
// (UNAUTHENTICATED, PERMISSION_DENIED: what a caller without the right
// credential makes the decider write at will) goes through refused, the
// sampler the tap's refusal line shares (issue 38).
func callLogging(logger *slog.Logger, refused *logsample.Sampler) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		logCall(ctx, logger, refused, info.FullMethod, err, time.Since(start))
		return resp, err
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		logCall(ss.Context(), logger, refused, info.FullMethod, err, time.Since(start))
		return err
	}
	return unary, stream
}

// logCall writes the call line: grpc_service, grpc_method, grpc_code and
// duration_ms (milliseconds with microsecond precision); a refused call's
// line only when refused lets it through, with the count it suppressed.
func logCall(ctx context.Context, logger *slog.Logger, refused *logsample.Sampler, fullMethod string, err error, elapsed time.Duration) {
	if errors.Is(err, io.EOF) {
		err = nil
	}
	code := status.Code(err)
	level := callLevel(code)
	if !logger.Enabled(ctx, level) {
		return
	}
	service, method := splitMethod(fullMethod)
	attrs := []slog.Attr{
		slog.String("grpc_service", service),
		slog.String("grpc_method", method),
		slog.String("grpc_code", code.String()),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000), // a number, as the admission line's (issue 20)
	}
	if refusal(code) {
		write, suppressed := refused.Allow()
		if !write {
			return
		}
		attrs = append(attrs, slog.Int("suppressed", suppressed))
	}
	logline.Write(ctx, logger, level, "grpc call", attrs...)
}

// refusal reports whether code refuses the caller (its credential, or what
// it may ask for).
func refusal(code codes.Code) bool {
	return code == codes.Unauthenticated || code == codes.PermissionDenied
}

// splitMethod splits "/package.Service/Method".
func splitMethod(fullMethod string) (service, method string) {
	service, method, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !ok {
		return "unknown", "unknown"
	}
	return service, method
}

// callLevel logs successful calls at debug (every Decide already logs its
// decision line), client mistakes at info, server trouble at warn and error.
func callLevel(code codes.Code) slog.Level {
	switch code {
	case codes.OK:
		return slog.LevelDebug
	case codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
		codes.Unauthenticated, codes.PermissionDenied, codes.DeadlineExceeded,
		codes.FailedPrecondition, codes.OutOfRange, codes.Aborted:
		return slog.LevelInfo
	case codes.Unavailable, codes.ResourceExhausted, codes.Unimplemented:
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}
