package handler

// The call and the failure policy: the decider is asked within the
// deadline, its answer is checked, and what is not a usable decision follows
// --on-decider-error(-validate) (spec 04 §5) — or, for a message above the
// budget, refuses the pod as malformed (issue 17).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/patch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// failure is the reason no usable decision was obtained.
type failure struct {
	// code is the gRPC code name of a failed RPC; empty for an unusable answer.
	code   string
	detail string
	// oversized is set when a message of the call did not fit the budget
	// (gRPC's own words): the pod is refused as malformed, no decider error.
	oversized string
}

// tooLarge reports whether err refuses a message of the call above the
// budget. The question is refused before it is sent, with a typed error
// (frontdoor/client's guard, *msgbudget.OverBudgetError), and the decider
// turns its own answer above the budget into a malformed refusal (a
// decision). What is left is grpc-go refusing a received message above its
// limit (the two ends' budgets differ): grpc-go gives that status no detail,
// so it is recognised by its words — the fallback.
func tooLarge(err error) bool {
	if msgbudget.IsOverBudget(err) {
		return true
	}
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.ResourceExhausted && strings.Contains(st.Message(), "message larger than max")
}

// decide calls the decider with the deadline min(timeout, request context)
// (spec 07 §2.1).
func (a *admission) decide(ctx context.Context, purpose deciderv1.Purpose) (*deciderv1.Decision, *failure) {
	limit := a.h.timeout
	if deadline, ok := ctx.Deadline(); ok {
		if left := time.Until(deadline); left < limit {
			limit = max(left, 0)
		}
	}
	ctx, span := a.h.tracing.Start(ctx, SpanDecide)
	defer span.End()
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	// The answer is built from the plan view: no provenance, gate rulings or
	// env-policy results cross the wire on the admission path (06 §2.1, view).
	req := &deciderv1.DecisionRequest{
		Purpose: purpose, Pod: a.facts, Cluster: a.h.cluster, View: deciderv1.DecisionView_DECISION_VIEW_PLAN}
	// The decision cache (nil: off) may know the answer; it is asked before
	// the decider and told what the decider answered.
	lookup, remembered, hit := a.h.cache.Lookup(req)
	defer lookup.Done()
	if hit {
		a.fromCache(remembered, codes.OK)
		a.tracedDecision(span, a.cached.id, remembered.Decision.GetInstallationRevision())
		return remembered.Decision, nil
	}
	t0 := time.Now()
	resp, err := a.h.decider.Decide(ctx, req)
	a.rec.rpc = time.Since(t0)
	code := status.Code(err)
	a.h.metrics.DeciderRPC(code.String(), a.rec.rpc)
	if tooLarge(err) {
		// The pod's question or its answer does not fit the message budget
		// of --max-request-bytes: the pod is too big, the decider is fine.
		return nil, &failure{oversized: status.Convert(err).Message()}
	}
	if err != nil {
		span.Fail(code.String())
		if staleIfError(code) {
			if stale, ok := lookup.Stale(); ok {
				a.fromCache(stale, code)
				a.tracedDecision(span, a.cached.id, stale.Decision.GetInstallationRevision())
				return stale.Decision, nil
			}
		}
		detail := status.Convert(err).Message()
		if code == codes.DeadlineExceeded {
			// The bound that applied: --decider-timeout, or what was left of
			// the HTTP request when that was sooner (04 §5).
			detail = "no answer within " + limit.Round(time.Millisecond).String()
		}
		return nil, &failure{code: code.String(), detail: detail}
	}
	d := resp.GetDecision()
	a.tracedDecision(span, d.GetDecisionId(), d.GetInstallationRevision())
	if problem := unusable(d, a.webhook); problem != "" {
		span.Fail(unusableAnswer)
		return nil, &failure{detail: problem}
	}
	lookup.Remember(d)
	return d, nil
}

// tracedDecision sets the decision's id and revision on the decide span.
func (a *admission) tracedDecision(span tracing.Span, id, revision string) {
	if !span.Recording() {
		return
	}
	span.SetAttributes(attribute.String(tracing.AttrDecisionID, id), attribute.String(tracing.AttrRevision, revision))
	if a.cached.source != "" {
		span.SetAttributes(attribute.String(tracing.AttrDecisionSource, a.cached.source))
	}
}

// unusable says what makes a decision unusable on this path ("" = usable).
func unusable(d *deciderv1.Decision, webhook string) string {
	if d == nil {
		return "the answer carries no decision"
	}
	switch d.GetOutcome() {
	case deciderv1.Outcome_OUTCOME_SKIP:
	case deciderv1.Outcome_OUTCOME_INJECT:
		if webhook != metrics.WebhookMutate {
			return "an inject outcome on /validate"
		}
		if d.GetPlan() == nil {
			return "an inject outcome without a plan"
		}
	case deciderv1.Outcome_OUTCOME_ALLOW:
		if webhook != metrics.WebhookValidate {
			return "an allow outcome on /mutate"
		}
	case deciderv1.Outcome_OUTCOME_REFUSE:
		if len(d.GetRefusals()) == 0 {
			return "a refusal outcome with no refusal"
		}
		r := d.GetRefusals()[0]
		if r.GetReasonSlug() == "" || r.GetHttpCode() < 400 || r.GetHttpCode() > 599 {
			return "a refusal without a reason slug and an HTTP error code"
		}
	default:
		return "the outcome is unspecified"
	}
	return ""
}

// decided answers a usable decision: an inject's patch is built here, and a
// plan that does not fit the pod is an unusable answer (spec 04 §5).
func (a *admission) decided(ctx context.Context, d *deciderv1.Decision, obj *facts.Object) *review.Response {
	a.rec.decisionID, a.rec.revision = d.GetDecisionId(), d.GetInstallationRevision()
	if a.cached.source != decisioncache.SourceStaleCache {
		// A stale answer is no sign of a decider holding its revision.
		a.h.metrics.RevisionAnswered(a.rec.revision)
	}
	var p *builtPatch
	if d.GetOutcome() == deciderv1.Outcome_OUTCOME_INJECT {
		_, span := a.h.tracing.Start(ctx, SpanPatch)
		target, err := patch.TargetFor(d.GetPlan(), obj.Pod, a.req.Object)
		if err == nil {
			p, err = a.patchFor(d.GetPlan(), target)
		}
		var tooMany *patch.TooManyOpsError
		if errors.As(err, &tooMany) {
			// The pod, not the decider: refused whatever the failure flags say.
			span.End()
			return a.malformed(err)
		}
		if err != nil {
			span.Fail(unusableAnswer)
			span.End()
			return a.failed(&failure{detail: err.Error()})
		}
		if span.Recording() {
			span.SetAttributes(attribute.Int(tracing.AttrPatchOps, p.ops))
		}
		span.End()
	}
	v := fromDecision(a.req.UID, d, p)
	a.rec.level = slog.LevelInfo
	if a.cached.source != "" {
		a.markCached(&v, d)
	}
	if p != nil {
		a.h.metrics.PatchBytes(len(v.resp.Patch))
	}
	if v.refusal != "" {
		a.h.metrics.Refusal(v.refusal)
	}
	a.rec.outcome, a.rec.reason, a.rec.check, a.rec.patchOps = v.outcome, v.reason, v.check, v.patchOps
	return v.resp
}

// Frontdoor-only denials (spec 04 §2, §5, §6).
const (
	slugMalformed          = "DynamicConfigMalformed"
	slugDeciderUnavailable = "DynamicConfigDeciderUnavailable"
	slugInternal           = "DynamicConfigInternal"
	unusableAnswer         = "unusable-answer"
	detailInternal         = "internal error"
	maxDetail              = 200
)

// failureFlag is the flag that rules a failure on this path and what the
// failure cost the object.
func (a *admission) failureFlag() (flag, what string) {
	if a.webhook == metrics.WebhookValidate {
		return "--on-decider-error-validate", "this " + a.rec.kind + " could not be checked against the environment-variable policy"
	}
	return "--on-decider-error", "this pod could not be decided"
}

// failed applies --on-decider-error(-validate) (spec 04 §5) — except to a
// decider that refused this front door as a caller, which always denies.
func (a *admission) failed(f *failure) *review.Response {
	if f.callerRefused() {
		return a.refusedAsCaller(f)
	}
	flag, what := a.failureFlag()
	detail := cut(redact.URL(f.detail), maxDetail)
	causeOf := func(detail string) string {
		if f.code != "" {
			return fmt.Sprintf("the decider was unavailable (%s: %s)", f.code, detail)
		}
		return fmt.Sprintf("the decider's answer could not be used (%s)", detail)
	}
	cause := causeOf(detail)
	a.rec.reason, a.rec.check, a.rec.patchOps = "", "", 0
	a.rec.level = slog.LevelWarn
	a.rec.extra = []slog.Attr{slog.String("grpc_code", f.code), slog.String("detail", detail)}
	if a.h.allowOnError[a.webhook] {
		code := f.code
		if code == "" {
			code = unusableAnswer
		}
		warning := func(detail string) string {
			return fmt.Sprintf("dynamic-config.rs: %s; admitted without a decision because this front door is set to %s=allow", causeOf(detail), flag)
		}
		w := warning(detail)
		if over := len(w) - review.MaxWarningBytes; over > 0 {
			// The detail gives way, so that the warning still says why the
			// pod was admitted and which flag did it (API server limits).
			w = warning(cutBytes(detail, len(detail)-over-len("…")) + "…")
		}
		a.rec.outcome = metrics.OutcomeDeciderErrorAllowed
		return errored(a.req.UID, code, w)
	}
	httpCode, slug, label := int32(503), slugDeciderUnavailable, refusallabel.DeciderUnavailable
	if f.code == "" {
		httpCode, slug, label = 500, slugInternal, refusallabel.Internal
	}
	a.rec.outcome, a.rec.reason = metrics.OutcomeDeciderErrorDenied, slug
	a.h.metrics.Refusal(label)
	return denied(a.req.UID, httpCode, slug,
		fmt.Sprintf("dynamic-config.rs: %s, so %s; this front door denies in that case (%s=deny)", cause, what, flag))
}

// failedOrTooLarge answers a call that gave no usable decision: a message
// above the budget refuses the pod as malformed (issue 17), anything else
// follows the failure rules.
func (a *admission) failedOrTooLarge(f *failure) *review.Response {
	if f.oversized == "" {
		return a.failed(f)
	}
	return a.malformed(fmt.Errorf("this %s is too large to decide within the %d-byte message budget (twice --max-request-bytes=%d): %s",
		a.rec.kind, msgbudget.Bytes(a.h.maxRequestBytes), a.h.maxRequestBytes, f.oversized))
}

// recovered answers a review whose handling panicked after it was
// decoded, as an unusable decision, and writes its record.
func (a *admission) recovered(detail string) *review.Response {
	resp := a.failed(&failure{detail: detail})
	a.finish(resp)
	return resp
}

// malformed denies an object that does not decode as its kind (04 §6).
func (a *admission) malformed(err error) *review.Response {
	a.rec.outcome, a.rec.reason, a.rec.level = metrics.OutcomeRefused, slugMalformed, slog.LevelInfo
	a.h.metrics.Refusal(refusallabel.Malformed)
	return denied(a.req.UID, 400, slugMalformed, "dynamic-config.rs: "+redact.URL(err.Error()))
}
