// Package logline writes the per-call log lines of the hot path (the
// front door's admission line, the decider's decision and call lines)
// without the cost slog's Logger methods add to every call: they unwind the
// caller's stack for its program counter (runtime.Callers, ~2 % of a
// decision's CPU) even though no handler of this binary adds the source.
package logline

import (
	"context"
	"log/slog"
	"time"
)

// Write writes one record of level and msg with attrs to logger's handler,
// as logger.LogAttrs would but with no source position. The caller checks
// logger.Enabled first, so that a line nobody writes builds no attributes.
// A handler's error is dropped, as slog's own methods drop it.
func Write(ctx context.Context, logger *slog.Logger, level slog.Level, msg string, attrs ...slog.Attr) {
	r := slog.NewRecord(time.Now(), level, msg, 0)
	r.AddAttrs(attrs...)
	_ = logger.Handler().Handle(ctx, r)
}
