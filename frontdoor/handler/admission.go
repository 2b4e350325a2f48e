package handler

import (
	"context"
	"log/slog"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// admission is one review being answered, and its record.
type admission struct {
	h       *handler
	webhook string
	req     *review.Request
	start   time.Time
	facts   *deciderv1.PodFacts
	rec     record
	// span is the review's server span (the zero Span: tracing off).
	span tracing.Span
	// cached says how the decision came from the decision cache (zero: from the decider).
	cached cached
}

// answer runs the path's steps (spec 01 §8.1 A-steps, §8.2 V-steps, 07 §3.2)
// and writes the admission's record once, on the way out. A panic leaves
// resp nil: the handler answers it (recovered) and that writes the record.
func (a *admission) answer(ctx context.Context) (resp *review.Response) {
	defer func() {
		if resp != nil {
			a.finish(resp)
		}
	}()
	a.rec.kind, a.rec.namespace, a.rec.name = a.req.Kind.Kind, a.req.Namespace, a.req.Name
	if a.webhook == metrics.WebhookValidate {
		return a.validate(ctx)
	}
	return a.mutate(ctx)
}

func (a *admission) mutate(ctx context.Context) *review.Response {
	if !a.req.HasObject() { // A1
		return a.withoutRPC()
	}
	kind := facts.MutateKind(a.req)
	if kind == nil { // A2
		return a.withoutRPC()
	}
	if !facts.MayHavePrefixedAnnotation(a.req.Object) { // A3 without decoding
		return a.withoutRPC()
	}
	// The object is decoded once: its annotations answer A3 when it
	// decodes; when it does not, the lenient read of the annotations alone
	// decides between A3 (allowed) and malformed, as A3 comes first.
	_, span := a.h.tracing.Start(ctx, SpanFacts)
	obj, err := facts.Decode(a.req, kind, a.req.Object)
	span.End()
	if err != nil {
		if !facts.HasPrefixedAnnotation(a.req.Object) { // A3
			return a.withoutRPC()
		}
		return a.malformed(err)
	}
	if len(obj.Facts.GetAnnotations()) == 0 { // A3: a Pod's facts carry exactly its prefixed annotations
		return a.withoutRPC()
	}
	a.routed(obj)
	d, f := a.decide(ctx, deciderv1.Purpose_PURPOSE_MUTATE)
	if f != nil {
		return a.failedOrTooLarge(f)
	}
	return a.decided(ctx, d, obj)
}

func (a *admission) validate(ctx context.Context) *review.Response {
	if !a.req.HasObject() { // V1
		return a.withoutRPC()
	}
	kind := facts.ValidateKind(a.req)
	if kind == nil { // V2
		return a.withoutRPC()
	}
	a.rec.kind = kind.Name
	_, span := a.h.tracing.Start(ctx, SpanFacts)
	obj, err := facts.Decode(a.req, kind, a.req.Object)
	if err != nil {
		span.End()
		return a.malformed(err)
	}
	a.routed(obj)
	if a.req.Operation == "UPDATE" && a.req.HasOldObject() { // V3
		// An oldObject that does not decode is not a reason to deny: the
		// decider judges the new object.
		if old, err := facts.Decode(a.req, kind, a.req.OldObject); err == nil && facts.EnvUnchanged(obj, old) {
			span.End()
			return a.withoutRPC()
		}
	}
	span.End()
	d, f := a.decide(ctx, deciderv1.Purpose_PURPOSE_VALIDATE)
	if f != nil {
		return a.failedOrTooLarge(f)
	}
	return a.decided(ctx, d, obj)
}

func (a *admission) routed(obj *facts.Object) {
	a.facts = obj.Facts
	a.rec.kind = obj.Kind.Name
	a.rec.namespace = obj.Facts.GetNamespace()
	a.rec.name = obj.Facts.GetName()
	if a.rec.name == "" {
		a.rec.name = obj.Facts.GetGenerateName()
	}
}

// withoutRPC allows a review the decider need not see (A1–A3, V1–V3).
func (a *admission) withoutRPC() *review.Response {
	a.rec.outcome, a.rec.level = metrics.OutcomeSkipped, slog.LevelDebug
	return allowed(a.req.UID)
}
