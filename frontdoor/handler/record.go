package handler

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	"github.com/dynamic-config-admission/dynamic-config/internal/logline"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
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
	// traceID and spanID are the review's server span's (tracing on); off,
	// traceID is the API server's traceparent's, when it sent one.
	traceID, spanID string
	// extra are the failure's own fields (grpc_code, detail, cluster).
	extra []slog.Attr
}

// finish counts the admission and writes its record, with the answer's
// warning count.
func (a *admission) finish(resp *review.Response) {
	r := &a.rec
	elapsed := time.Since(a.start)
	a.h.metrics.Admission(a.webhook, r.outcome, elapsed)
	if a.span.Recording() {
		a.traced()
	}
	ctx := context.Background()
	if !a.h.log.Enabled(ctx, r.level) {
		return
	}
	attrs := make([]slog.Attr, 0, 18+len(r.extra))
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
		slog.String("trace_id", r.traceID),
		slog.String("span_id", r.spanID),
	)
	logline.Write(ctx, a.h.log, r.level, "admission", append(attrs, r.extra...)...)
}

// traced sets the admission's attributes on its server span: ids, slugs,
// names and counts only — never an annotation value or a message.
func (a *admission) traced() {
	r := &a.rec
	a.span.SetAttributes(
		attribute.String(tracing.AttrWebhook, a.webhook),
		attribute.String(tracing.AttrUID, a.req.UID),
		attribute.String(tracing.AttrKind, r.kind),
		attribute.String(tracing.AttrNamespace, r.namespace),
		attribute.String(tracing.AttrOperation, a.req.Operation),
		attribute.String(tracing.AttrOutcome, r.outcome),
		attribute.String(tracing.AttrReason, r.reason),
		attribute.String(tracing.AttrCheck, r.check),
		attribute.String(tracing.AttrDecisionID, r.decisionID),
		attribute.String(tracing.AttrRevision, r.revision),
		attribute.Int(tracing.AttrPatchOps, r.patchOps),
	)
	if r.outcome == metrics.OutcomeDeciderErrorDenied || r.outcome == metrics.OutcomeDeciderErrorAllowed {
		a.span.Fail(r.outcome)
	}
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
