package handler

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/patch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// admission is one review being answered, and what its log line says.
type admission struct {
	h       *handler
	webhook string
	req     *review.Request
	start   time.Time

	kind      string // Pod, Deployment, … (the request's kind until routed)
	namespace string
	name      string
	facts     *deciderv1.PodFacts

	// The log line's decision fields.
	outcome    string
	reason     string
	check      string
	decisionID string
	revision   string
	rpc        time.Duration
	patchOps   int
	warnings   int
}

// answer runs the path's steps (spec 01 §8.1 A-steps, §8.2 V-steps, 07 §3.2).
func (a *admission) answer(ctx context.Context) *review.Response {
	a.kind, a.namespace, a.name = a.req.Kind.Kind, a.req.Namespace, a.req.Name
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
	obj, err := facts.Decode(a.req, kind, a.req.Object)
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
	return a.decided(d, obj)
}

func (a *admission) validate(ctx context.Context) *review.Response {
	if !a.req.HasObject() { // V1
		return a.withoutRPC()
	}
	kind := facts.ValidateKind(a.req)
	if kind == nil { // V2
		return a.withoutRPC()
	}
	a.kind = kind.Name
	obj, err := facts.Decode(a.req, kind, a.req.Object)
	if err != nil {
		return a.malformed(err)
	}
	a.routed(obj)
	if a.req.Operation == "UPDATE" && a.req.HasOldObject() { // V3
		// An oldObject that does not decode is not a reason to deny: the
		// decider judges the new object.
		if old, err := facts.Decode(a.req, kind, a.req.OldObject); err == nil && facts.EnvUnchanged(obj, old) {
			return a.withoutRPC()
		}
	}
	d, f := a.decide(ctx, deciderv1.Purpose_PURPOSE_VALIDATE)
	if f != nil {
		return a.failedOrTooLarge(f)
	}
	return a.decided(d, obj)
}

func (a *admission) routed(obj *facts.Object) {
	a.facts = obj.Facts
	a.kind = obj.Kind.Name
	a.namespace = obj.Facts.GetNamespace()
	a.name = obj.Facts.GetName()
	if a.name == "" {
		a.name = obj.Facts.GetGenerateName()
	}
}

// failure is the reason no usable decision was obtained.
type failure struct {
	// code is the gRPC code name of a failed RPC; empty for an unusable answer.
	code   string
	detail string
	// oversized is set when a message of the call did not fit the budget
	// (gRPC's own words): the pod is refused as malformed, no decider error.
	oversized string
}

// tooLarge reports whether err is gRPC's refusal of a message above a size
// limit, on either end of the call (sending or receiving).
func tooLarge(err error) bool {
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
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	t0 := time.Now()
	// The answer is built from the plan view: no provenance, gate rulings or
	// env-policy results cross the wire on the admission path (06 §2.1, view).
	resp, err := a.h.decider.Decide(ctx, &deciderv1.DecisionRequest{
		Purpose: purpose, Pod: a.facts, Cluster: a.h.cluster, View: deciderv1.DecisionView_DECISION_VIEW_PLAN})
	a.rpc = time.Since(t0)
	code := status.Code(err)
	a.h.metrics.DeciderRPC(code.String(), a.rpc)
	if tooLarge(err) {
		// The pod's question or its answer does not fit the message budget
		// of --max-request-bytes: the pod is too big, the decider is fine.
		return nil, &failure{oversized: status.Convert(err).Message()}
	}
	if err != nil {
		detail := status.Convert(err).Message()
		if code == codes.DeadlineExceeded {
			// The bound that applied: --decider-timeout, or what was left of
			// the HTTP request when that was sooner (04 §5).
			detail = "no answer within " + limit.Round(time.Millisecond).String()
		}
		return nil, &failure{code: code.String(), detail: detail}
	}
	d := resp.GetDecision()
	if problem := unusable(d, a.webhook); problem != "" {
		return nil, &failure{detail: problem}
	}
	return d, nil
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

// decided maps a usable decision to the answer (03 §5, 04 §1, 06 §3.3).
func (a *admission) decided(d *deciderv1.Decision, obj *facts.Object) *review.Response {
	resp := &review.Response{
		UID:              a.req.UID,
		Allowed:          true,
		AuditAnnotations: auditAnnotations(d),
		Warnings:         warnings(d),
	}
	a.decisionID, a.revision = d.GetDecisionId(), d.GetInstallationRevision()
	a.h.metrics.RevisionAnswered(a.revision)
	switch d.GetOutcome() {
	case deciderv1.Outcome_OUTCOME_SKIP:
		a.outcome, a.reason = metrics.OutcomeSkipped, d.GetSkipReason().String()
	case deciderv1.Outcome_OUTCOME_ALLOW:
		a.outcome = metrics.OutcomeAllowed
	case deciderv1.Outcome_OUTCOME_INJECT:
		p, err := a.patch(d.GetPlan(), obj)
		if err != nil {
			return a.failed(&failure{detail: err.Error()})
		}
		resp.Patch, resp.PatchType = p.Base64(), review.PatchTypeJSONPatch
		a.outcome, a.patchOps = metrics.OutcomePatched, len(p.Ops)
		a.h.metrics.PatchBytes(len(resp.Patch))
	case deciderv1.Outcome_OUTCOME_REFUSE:
		r := d.GetRefusals()[0]
		resp.Allowed = false
		resp.Status = &review.Status{Code: r.GetHttpCode(), Message: r.GetMessage(), Reason: r.GetReasonSlug()}
		a.outcome, a.reason, a.check = metrics.OutcomeRefused, r.GetReasonSlug(), r.GetCheck()
		a.h.metrics.Refusal(refusalLabel(r))
	}
	a.warnings = len(resp.Warnings)
	a.done(slog.LevelInfo)
	return resp
}

func (a *admission) patch(plan *deciderv1.MutationPlan, obj *facts.Object) (*patch.Patch, error) {
	target, err := patch.TargetFor(plan, obj.Pod, a.req.Object)
	if err != nil {
		return nil, err
	}
	return patch.Build(plan, target)
}

// auditAnnotations are the decision's, as the decider wrote them (the
// revision and the decision id included, spec 03 §5): the front door adds
// none to a decided answer.
func auditAnnotations(d *deciderv1.Decision) map[string]string {
	if len(d.GetAuditAnnotations()) == 0 {
		return nil
	}
	return d.GetAuditAnnotations()
}

// warnings are the decision's warnings, fitted to the API server's limits
// (each ≤ 256 bytes, all ≤ 4096 bytes): the decision keeps them whole for
// explain and the log; the answer carries what the API server passes on.
func warnings(d *deciderv1.Decision) []string {
	if len(d.GetWarnings()) == 0 {
		return nil
	}
	out := make([]string, len(d.GetWarnings()))
	for i, w := range d.GetWarnings() {
		out[i] = w.GetMessage()
	}
	return review.FitWarnings(out)
}

func refusalLabel(r *deciderv1.Refusal) string {
	switch r.GetReason() {
	case deciderv1.RefusalReason_REFUSAL_REASON_PINNED:
		return metrics.ReasonPinned
	case deciderv1.RefusalReason_REFUSAL_REASON_POLICY:
		return metrics.ReasonPolicy
	case deciderv1.RefusalReason_REFUSAL_REASON_CONFLICT:
		return metrics.ReasonConflict
	case deciderv1.RefusalReason_REFUSAL_REASON_ENV_POLICY:
		return metrics.ReasonEnvPolicy
	}
	return metrics.ReasonMalformed
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
		return "--on-decider-error-validate", "this " + a.kind + " could not be checked against the environment-variable policy"
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
	a.reason, a.check, a.patchOps = "", "", 0
	resp := &review.Response{UID: a.req.UID}
	if a.h.allowOnError[a.webhook] {
		code := f.code
		if code == "" {
			code = unusableAnswer
		}
		resp.Allowed = true
		warning := func(detail string) string {
			return fmt.Sprintf("dynamic-config.rs: %s; admitted without a decision because this front door is set to %s=allow", causeOf(detail), flag)
		}
		w := warning(detail)
		if over := len(w) - review.MaxWarningBytes; over > 0 {
			// The detail gives way, so that the warning still says why the
			// pod was admitted and which flag did it (API server limits).
			w = warning(cutBytes(detail, len(detail)-over-len("…")) + "…")
		}
		resp.Warnings = []string{w}
		resp.AuditAnnotations = map[string]string{annotation.AuditDeciderUnavailable: code}
		a.outcome = metrics.OutcomeDeciderErrorAllowed
	} else {
		st := &review.Status{Code: 503, Reason: slugDeciderUnavailable}
		label := metrics.ReasonDeciderUnavailable
		if f.code == "" {
			st.Code, st.Reason, label = 500, slugInternal, metrics.ReasonInternal
		}
		st.Message = fmt.Sprintf("dynamic-config.rs: %s, so %s; this front door denies in that case (%s=deny)", cause, what, flag)
		resp.Status = st
		a.outcome, a.reason = metrics.OutcomeDeciderErrorDenied, st.Reason
		a.h.metrics.Refusal(label)
	}
	a.warnings = len(resp.Warnings)
	a.done(slog.LevelWarn, slog.String("grpc_code", f.code), slog.String("detail", detail))
	return resp
}

// failedOrTooLarge answers a call that gave no usable decision: a message
// above the budget refuses the pod as malformed (issue 17), anything else
// follows the failure rules.
func (a *admission) failedOrTooLarge(f *failure) *review.Response {
	if f.oversized == "" {
		return a.failed(f)
	}
	return a.malformed(fmt.Errorf("this %s is too large to decide within the %d-byte message budget (twice --max-request-bytes=%d): %s",
		a.kind, msgbudget.Bytes(a.h.maxRequestBytes), a.h.maxRequestBytes, f.oversized))
}

// unusable answers a review whose handling panicked after it was decoded.
func (a *admission) unusable(detail string) *review.Response {
	return a.failed(&failure{detail: detail})
}

// malformed denies an object that does not decode as its kind (04 §6).
func (a *admission) malformed(err error) *review.Response {
	msg := "dynamic-config.rs: " + redact.URL(err.Error())
	a.outcome, a.reason = metrics.OutcomeRefused, slugMalformed
	a.h.metrics.Refusal(metrics.ReasonMalformed)
	a.done(slog.LevelInfo)
	return &review.Response{
		UID:    a.req.UID,
		Status: &review.Status{Code: 400, Message: msg, Reason: slugMalformed},
	}
}

// withoutRPC allows a review the decider need not see (A1–A3, V1–V3).
func (a *admission) withoutRPC() *review.Response {
	a.outcome = metrics.OutcomeSkipped
	a.done(slog.LevelDebug)
	return &review.Response{UID: a.req.UID, Allowed: true}
}

// done counts the admission and writes its one log line (spec 07 §4):
// keys, slugs, check ids and counts only — never values or messages.
func (a *admission) done(level slog.Level, extra ...slog.Attr) {
	elapsed := time.Since(a.start)
	a.h.metrics.Admission(a.webhook, a.outcome, elapsed)
	ctx := context.Background()
	if !a.h.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 16+len(extra))
	attrs = append(attrs,
		slog.String("webhook", a.webhook),
		slog.String("uid", a.req.UID),
		slog.String("kind", a.kind),
		slog.String("namespace", a.namespace),
		slog.String("name", a.name),
		slog.String("operation", a.req.Operation),
		slog.Bool("dry_run", a.req.IsDryRun()),
		slog.String("outcome", a.outcome),
		slog.String("reason", a.reason),
		slog.String("check", a.check),
		slog.String("decision_id", a.decisionID),
		slog.String("revision", a.revision),
		slog.Float64("duration_ms", millis(elapsed)),
		slog.Float64("rpc_ms", millis(a.rpc)),
		slog.Int("patch_ops", a.patchOps),
		slog.Int("warnings", a.warnings),
	)
	a.h.log.LogAttrs(ctx, level, "admission", append(attrs, extra...)...)
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
