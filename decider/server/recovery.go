package server

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// recoverPanic turns a panic in a handler into INTERNAL with a generic
// message naming a fresh decision id; the panic and its stack are logged
// under that id, never sent to the caller (spec 06 §6).
func recoverPanic(logger *slog.Logger) func(ctx context.Context, p any) error {
	return func(ctx context.Context, p any) error {
		id := uuid.NewString()
		logger.ErrorContext(ctx, "panic recovered",
			slog.String("decision_id", id),
			slog.String("panic", fmt.Sprint(p)),
			slog.String("stack", string(debug.Stack())))
		return status.Errorf(codes.Internal, "internal error (decision %s)", id)
	}
}
