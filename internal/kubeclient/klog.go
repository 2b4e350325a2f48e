package kubeclient

import (
	"context"
	"log/slog"

	"k8s.io/klog/v2"
)

// QuietKlog routes client-go's klog lines (API server warnings, client-side
// throttling, reflector errors) into logger at debug level: a command
// prints none on stdout or stderr unless asked with --log-level debug
// (issue 40). Long-running processes that want them at their own level
// (the audit reporter, leader election) set klog.SetSlogLogger after it.
func QuietKlog(logger *slog.Logger) {
	klog.SetSlogLogger(slog.New(debugHandler{logger.Handler()}))
}

// debugHandler hands every record on at debug level.
type debugHandler struct{ next slog.Handler }

func (h debugHandler) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.next.Enabled(ctx, slog.LevelDebug)
}

func (h debugHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return h.next.Handle(ctx, r)
}

func (h debugHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugHandler{h.next.WithAttrs(attrs)}
}

func (h debugHandler) WithGroup(name string) slog.Handler {
	return debugHandler{h.next.WithGroup(name)}
}
