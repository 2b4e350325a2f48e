package service

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/google/uuid"
)

type decisionIDKey struct{}

// WithDecisionID returns ctx carrying a fresh decision id: the server gives
// every Decide call one before the handler runs, so that a recovered panic
// is answered and logged under the id the decision would have carried.
func WithDecisionID(ctx context.Context) context.Context {
	return context.WithValue(ctx, decisionIDKey{}, uuid.NewString())
}

// DecisionID is the call's decision id: the one WithDecisionID put in ctx,
// else a fresh one.
func DecisionID(ctx context.Context) string {
	if id, ok := ctx.Value(decisionIDKey{}).(string); ok {
		return id
	}
	return uuid.NewString()
}

// Recovered is the answer to a panic in a handler (spec 06 §6), the one
// recovery of the decider (the server's interceptor calls it): INTERNAL with
// a generic message naming the decision id, the panic and its stack logged
// under that id, never sent to the caller.
func Recovered(ctx context.Context, logger *slog.Logger, p any) error {
	id := DecisionID(ctx)
	logger.ErrorContext(ctx, "panic recovered",
		slog.String("decision_id", id),
		slog.String("panic", fmt.Sprint(p)),
		slog.String("stack", string(debug.Stack())))
	return internalError(id)
}
