package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// BenchmarkDecided is the metric cost of one decision on the hot path (every
// pod write): a mutate inject and a validate refusal with a finding.
func BenchmarkDecided(b *testing.B) {
	m := NewDecider(prometheus.NewRegistry())
	inject := &decision.Decision{Outcome: decision.OutcomeInject}
	refuse := &decision.Decision{
		Outcome:          decision.OutcomeRefuse,
		Refusals:         []decision.Refusal{{Reason: decision.ReasonEnvPolicy}},
		EnvPolicyResults: []decision.EnvPolicyRuleResult{{Evaluated: true, Applies: true, Failed: true, Mode: ModeEnforce}},
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Decided(decision.PurposeMutate, inject, 20*time.Microsecond)
		m.Decided(decision.PurposeValidate, refuse, 20*time.Microsecond)
	}
}
