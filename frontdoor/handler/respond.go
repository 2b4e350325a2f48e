package handler

import (
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/patch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
)

// The answers an admission ends in, in the spirit of controller-runtime's
// admission.Allowed/Denied/Patched/Errored: every AdmissionResponse the
// front door writes is built by one of them. They are pure: no metric, no
// log line, no call.

// allowed admits the object unchanged.
func allowed(uid string) *review.Response { return &review.Response{UID: uid, Allowed: true} }

// builtPatch is a plan's patch as an answer carries it: base64, and its
// operation count (the admission line's patch_ops).
type builtPatch struct {
	base64 string
	ops    int
}

func newBuiltPatch(p *patch.Patch) *builtPatch {
	return &builtPatch{base64: p.Base64(), ops: len(p.Ops)}
}

// patched admits the pod with the patch.
func patched(uid string, p *builtPatch) *review.Response {
	return &review.Response{UID: uid, Allowed: true, Patch: p.base64, PatchType: review.PatchTypeJSONPatch}
}

// denied refuses the object with an HTTP error code, a reason slug and a
// message (spec 04 §1).
func denied(uid string, code int32, reason, message string) *review.Response {
	return &review.Response{UID: uid, Status: &review.Status{Code: code, Message: message, Reason: reason}}
}

// errored is the answer to a decider that gave no usable decision under
// --on-decider-error(-validate)=allow (spec 04 §5): admitted, with the
// warning that says why and the audit annotation that names the cause.
func errored(uid, cause, warning string) *review.Response {
	resp := allowed(uid)
	resp.Warnings = []string{warning}
	resp.AuditAnnotations = map[string]string{annotation.AuditDeciderUnavailable: cause}
	return resp
}

// verdict is a decision's answer and what the admission's record and
// counters say of it.
type verdict struct {
	resp     *review.Response
	outcome  string
	reason   string
	check    string
	patchOps int
	// refusal is the refusal counter's label ("" = no refusal).
	refusal string
}

// fromDecision maps a usable decision to its answer (spec 03 §5, 04 §1,
// 06 §3.3); p is the patch built from an inject decision's plan (nil for
// every other outcome). The decision's audit annotations and its warnings,
// fitted to the API server's limits, go on every answer.
func fromDecision(uid string, d *deciderv1.Decision, p *builtPatch) verdict {
	var v verdict
	switch d.GetOutcome() {
	case deciderv1.Outcome_OUTCOME_SKIP:
		v = verdict{resp: allowed(uid), outcome: metrics.OutcomeSkipped, reason: d.GetSkipReason().String()}
	case deciderv1.Outcome_OUTCOME_ALLOW:
		v = verdict{resp: allowed(uid), outcome: metrics.OutcomeAllowed}
	case deciderv1.Outcome_OUTCOME_INJECT:
		v = verdict{resp: patched(uid, p), outcome: metrics.OutcomePatched, patchOps: p.ops}
	case deciderv1.Outcome_OUTCOME_REFUSE:
		r := d.GetRefusals()[0]
		v = verdict{resp: denied(uid, r.GetHttpCode(), r.GetReasonSlug(), r.GetMessage()),
			outcome: metrics.OutcomeRefused, reason: r.GetReasonSlug(), check: r.GetCheck(), refusal: refusalLabel(r)}
	default: // not a usable decision (unusable says so first)
		v = verdict{resp: allowed(uid)}
	}
	v.resp.AuditAnnotations = auditAnnotations(d)
	v.resp.Warnings = warnings(d)
	return v
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
		return refusallabel.Pinned
	case deciderv1.RefusalReason_REFUSAL_REASON_POLICY:
		return refusallabel.Policy
	case deciderv1.RefusalReason_REFUSAL_REASON_CONFLICT:
		return refusallabel.Conflict
	case deciderv1.RefusalReason_REFUSAL_REASON_ENV_POLICY:
		return refusallabel.EnvPolicy
	}
	return refusallabel.Malformed
}
