package metrics

import (
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
)

// Values of the purpose label.
const (
	PurposeMutate   = "mutate"
	PurposeValidate = "validate"
)

// Values of the outcome label.
const (
	OutcomeSkip   = "skip"
	OutcomeInject = "inject"
	OutcomeRefuse = "refuse"
	OutcomeAllow  = "allow"
)

// Values of the env-policy mode label.
const (
	ModeEnforce = "enforce"
	ModeWarn    = "warn"
	ModeAudit   = "audit"
)

// purposeLabels, outcomeLabels and reasonLabels map the core enums to label
// values without allocating per request (the reason label's values are
// internal/refusallabel's, the front door's counter's too).
var (
	purposeLabels = map[decision.Purpose]string{
		decision.PurposeMutate:   PurposeMutate,
		decision.PurposeValidate: PurposeValidate,
	}
	outcomeLabels = map[decision.Outcome]string{
		decision.OutcomeSkip:   OutcomeSkip,
		decision.OutcomeInject: OutcomeInject,
		decision.OutcomeRefuse: OutcomeRefuse,
		decision.OutcomeAllow:  OutcomeAllow,
	}
	reasonLabels = map[decision.Reason]string{
		decision.ReasonMalformed: refusallabel.Malformed,
		decision.ReasonPinned:    refusallabel.Pinned,
		decision.ReasonPolicy:    refusallabel.Policy,
		decision.ReasonConflict:  refusallabel.Conflict,
		decision.ReasonEnvPolicy: refusallabel.EnvPolicy,
	}
)

// Decided records one decision: dynamic_config_decisions_total,
// dynamic_config_decision_duration_seconds, for a refusal
// dynamic_config_decision_refusals_total, and one
// dynamic_config_env_policy_findings_total per evaluated rule that rejected
// the object. Enum values outside the contract are not counted.
func (m *Decider) Decided(purpose decision.Purpose, d *decision.Decision, elapsed time.Duration) {
	if m == nil || d == nil {
		return
	}
	duration, ok := m.decided.duration[purpose]
	if !ok {
		return
	}
	duration.Observe(elapsed.Seconds())
	if c, ok := m.decided.outcomes[purposeOutcome{purpose, d.Outcome}]; ok {
		c.Inc()
	} else if o, ok := outcomeLabels[d.Outcome]; ok { // a pair not created up front
		m.decisions.WithLabelValues(purposeLabels[purpose], o).Inc()
	}
	if d.Outcome == decision.OutcomeRefuse && len(d.Refusals) > 0 {
		if c, ok := m.decided.refusals[d.Refusals[0].Reason]; ok {
			c.Inc()
		}
	}
	for i := range d.EnvPolicyResults {
		res := &d.EnvPolicyResults[i]
		if res.Evaluated && res.Applies && res.Failed {
			m.EnvPolicyFinding(res.Mode)
		}
	}
}

// EnvPolicyFinding counts one env-policy rule that rejected an object, by its
// mode (enforce, warn or audit; other values are not counted).
func (m *Decider) EnvPolicyFinding(mode string) {
	if m == nil {
		return
	}
	switch mode {
	case ModeEnforce, ModeWarn, ModeAudit:
		m.findings.WithLabelValues(mode).Inc()
	}
}
