package metrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
)

func TestCallerMetrics(t *testing.T) {
	inject := &decision.Decision{Outcome: decision.OutcomeInject}
	count := func(t *testing.T, reg *prometheus.Registry, name string) int {
		t.Helper()
		n, err := testutil.GatherAndCount(reg, name)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	t.Run("without a callers file there is no caller series at all", func(t *testing.T) {
		m, reg := newTestDecider(t)
		m.CallerDecided("", inject)
		m.CallerDecided("west", inject)
		m.CallerDenied("west")
		if n := count(t, reg, "dynamic_config_caller_decisions_total") + count(t, reg, "dynamic_config_caller_denied_total"); n != 0 {
			t.Errorf("%d caller series, want 0", n)
		}
	})
	t.Run("the caller label takes exactly the names of the file in force", func(t *testing.T) {
		m, reg := newTestDecider(t)
		m.SetCallers([]string{"east", "west"})
		m.CallerDecided("west", inject)
		m.CallerDecided("stranger", inject)
		m.CallerDenied("stranger")
		if n := count(t, reg, "dynamic_config_caller_decisions_total"); n != 8 {
			t.Errorf("%d decision series, want 2 callers × 4 outcomes", n)
		}
		if n := count(t, reg, "dynamic_config_caller_denied_total"); n != 2 {
			t.Errorf("%d denied series, want 2", n)
		}
		if v := testutil.ToFloat64(m.callers.decisions.WithLabelValues("west", OutcomeInject)); v != 1 {
			t.Errorf("west inject = %v, want 1", v)
		}
	})
	t.Run("a reload that drops a caller removes its series and stops counting it", func(t *testing.T) {
		m, reg := newTestDecider(t)
		m.SetCallers([]string{"east", "west"})
		m.SetCallers([]string{"east"})
		m.CallerDecided("west", inject)
		m.CallerDenied("west")
		if n := count(t, reg, "dynamic_config_caller_decisions_total"); n != 4 {
			t.Errorf("%d decision series after the reload, want 4 (east only)", n)
		}
		if n := count(t, reg, "dynamic_config_caller_denied_total"); n != 1 {
			t.Errorf("%d denied series after the reload, want 1", n)
		}
	})
}
