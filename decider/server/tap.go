package server

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/dynamic-config-admission/dynamic-config/internal/logsample"
)

// refusedLogInterval bounds the tap's refusal lines: an anonymous flood
// writes one line per interval, with the count it suppressed.
const refusedLogInterval = 10 * time.Second

// authTap is the transport's tap handle (issue 23): it runs on the
// connection's read loop with the call's headers only, before a stream is
// created, so a call check refuses is answered without its message being
// read. check sees only metadata; what needs the peer's certificate (the
// callers file) stays in the auth interceptor. check must not block.
func authTap(check func(metadata.MD) error, logger *slog.Logger, sampler *logsample.Sampler) tap.ServerInHandle {
	return func(ctx context.Context, info *tap.Info) (context.Context, error) {
		service, method := splitMethod(info.FullMethodName)
		if !guardedService(service) {
			return ctx, nil
		}
		err := check(info.Header)
		if err == nil {
			return ctx, nil
		}
		if write, suppressed := sampler.Allow(); write {
			code := status.Code(err)
			logger.LogAttrs(ctx, callLevel(code), "grpc call refused before its message was read",
				slog.String("grpc_service", service),
				slog.String("grpc_method", method),
				slog.String("grpc_code", code.String()),
				slog.Int("suppressed", suppressed))
		}
		return nil, err
	}
}
