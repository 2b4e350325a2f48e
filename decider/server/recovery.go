package server

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// recoverPanic turns a panic in a handler into INTERNAL (service.Recovered:
// a generic message naming the decision id, the panic and its stack logged
// under it).
func recoverPanic(logger *slog.Logger) func(ctx context.Context, p any) error {
	return func(ctx context.Context, p any) error { return service.Recovered(ctx, logger, p) }
}

// decisionIDs gives every Decide call its decision id before the handler
// and the recovery run, so both name the same one.
func decisionIDs(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if info.FullMethod == deciderv1.DeciderService_Decide_FullMethodName {
		ctx = service.WithDecisionID(ctx)
	}
	return handler(ctx, req)
}
