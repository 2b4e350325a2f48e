package handler

import (
	"context"
	"log/slog"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
)

// record is what an admission's one log line says (spec 07 §4): keys,
// slugs, check ids and counts only — never values or messages. The steps
// fill it in as they go; finish writes it once, on the way out.
type record struct {
	level      slog.Level
	kind       string // Pod, Deployment, … (the request's kind until routed)
	namespace  string
	name       string
	outcome    string
	reason     string
	check      string
	decisionID string
	revision   string
	rpc        time.Duration
	patchOps   int
	// extra are the failure's own fields (grpc_code, detail, cluster).
	extra []slog.Attr
}

// finish counts the admission and writes its record, with the answer's
// warning count.
func (a *admission) finish(resp *review.Response) {
	r := &a.rec
	elapsed := time.Since(a.start)
	a.h.metrics.Admission(a.webhook, r.outcome, elapsed)
	ctx := context.Background()
	if !a.h.log.Enabled(ctx, r.level) {
		return
	}
	attrs := make([]slog.Attr, 0, 16+len(r.extra))
	attrs = append(attrs,
		slog.String("webhook", a.webhook),
		slog.String("uid", a.req.UID),
		slog.String("kind", r.kind),
		slog.String("namespace", r.namespace),
		slog.String("name", r.name),
		slog.String("operation", a.req.Operation),
		slog.Bool("dry_run", a.req.IsDryRun()),
		slog.String("outcome", r.outcome),
		slog.String("reason", r.reason),
		slog.String("check", r.check),
		slog.String("decision_id", r.decisionID),
		slog.String("revision", r.revision),
		slog.Float64("duration_ms", millis(elapsed)),
		slog.Float64("rpc_ms", millis(r.rpc)),
		slog.Int("patch_ops", r.patchOps),
		slog.Int("warnings", len(resp.Warnings)),
	)
	a.h.log.LogAttrs(ctx, r.level, "admission", append(attrs, r.extra...)...)
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
