package server

import (
	"context"
	"log/slog"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc/codes"
)

// callFields are the only interceptor fields logged: method, code and
// duration (spec 07 §4). Payloads, peers and error texts are dropped.
var callFields = map[string]string{
	logging.ServiceFieldKey: "grpc_service",
	logging.MethodFieldKey:  "grpc_method",
	"grpc.code":             "grpc_code",
	"grpc.time_ms":          "duration_ms",
}

// callLogger adapts slog to the middleware's logging.Logger, keeping only
// callFields.
func callLogger(logger *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, level logging.Level, msg string, fields ...any) {
		lvl := slog.Level(level)
		if !logger.Enabled(ctx, lvl) {
			return
		}
		attrs := make([]slog.Attr, 0, len(callFields))
		for i := 0; i+1 < len(fields); i += 2 {
			key, ok := fields[i].(string)
			if !ok {
				continue
			}
			if name, keep := callFields[key]; keep {
				attrs = append(attrs, slog.Any(name, fields[i+1]))
			}
		}
		logger.LogAttrs(ctx, lvl, "grpc call", attrs...)
	})
}

// callLevel logs successful calls at debug (every Decide already logs its
// decision line), client mistakes at info, server trouble at warn and error.
func callLevel(code codes.Code) logging.Level {
	switch code {
	case codes.OK:
		return logging.LevelDebug
	case codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
		codes.Unauthenticated, codes.PermissionDenied, codes.DeadlineExceeded,
		codes.FailedPrecondition, codes.OutOfRange, codes.Aborted:
		return logging.LevelInfo
	case codes.Unavailable, codes.ResourceExhausted, codes.Unimplemented:
		return logging.LevelWarn
	default:
		return logging.LevelError
	}
}
