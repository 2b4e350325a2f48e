package envpolicy

// One validating decision in progress: each rule evaluated against the pod's
// containers, and a failing rule's verdict by its mode.

import (
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// evaluation is one validating decision in progress: the rules run in order
// until one enforcing rule refuses.
type evaluation struct {
	d          decision.Decision
	f          *decision.Facts
	kind       kindInfo
	names      []string // the backing array of every rule's matched and missing names
	containers [3][]decision.Container
	refused    bool
}

// rule evaluates rule i: which of its variables the pod sets, and, when it
// fails, its verdict by mode.
func (e *evaluation) rule(i int, r *Rule) {
	res := &e.d.EnvPolicyResults[i]
	if !r.appliesIn(e.f.Namespace) {
		return
	}
	res.Applies = true

	var small [64]bool
	matched := small[:0]
	if len(r.Variables) > len(small) {
		matched = make([]bool, 0, len(r.Variables))
	}
	m := 0
	for j := range r.Variables {
		hit := setIn(&e.containers, &r.Variables[j])
		matched = append(matched, hit)
		if hit {
			m++
		}
	}
	start := len(e.names)
	e.names = appendNames(e.names, r.Variables, matched, true)
	res.MatchedNames = e.names[start:len(e.names):len(e.names)]
	start = len(e.names)
	e.names = appendNames(e.names, r.Variables, matched, false)
	res.MissingNames = e.names[start:len(e.names):len(e.names)]
	if len(res.MatchedNames) == 0 {
		res.MatchedNames = nil
	}
	if len(res.MissingNames) == 0 {
		res.MissingNames = nil
	}

	if !fails(res.Reject, m, len(r.Variables)) {
		return
	}
	res.Failed = true
	e.verdict(i, res.Mode, res.Reject, detail(res.Reject, r.Variables, matched))
}

// verdict is what failing rule i does by its mode: warn, audit, or refuse.
func (e *evaluation) verdict(i int, mode, op, det string) {
	switch mode {
	case ModeWarn:
		e.d.Warnings = append(e.d.Warnings, decision.Warning{
			Code:    WarningCodeRule,
			Message: ruleRef(i) + " (" + op + ", warn) would reject this " + e.kind.name + " in namespace " + redact.Quote(e.f.Namespace) + ": " + det,
		})
	case ModeAudit:
		e.d.AuditAnnotations[annotation.AuditEnvPolicyRulePrefix+strconv.Itoa(i)] = "would reject: " + det
	default: // enforce
		e.d.Refusals = []decision.Refusal{{
			Reason:   decision.ReasonEnvPolicy,
			Slug:     RefusalSlug,
			HTTPCode: RefusalHTTPCode,
			Message:  ruleRef(i) + " (" + op + ") rejects this " + e.kind.name + " in namespace " + redact.Quote(e.f.Namespace) + ": " + det,
			Check:    RefusalCheck,
			Key:      ruleRef(i),
		}}
		e.refused = true
	}
}
