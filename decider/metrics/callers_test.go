package metrics

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
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
		for _, name := range []string{"dynamic_config_caller_decisions_total", "dynamic_config_caller_denied_total",
			"dynamic_config_callers_reloads_total", "dynamic_config_callers_loaded_timestamp_seconds"} {
			if n := count(t, reg, name); n != 0 {
				t.Errorf("%s has %d series, want 0", name, n)
			}
		}
	})
	t.Run("the caller label takes only names of the file in force, each with its first call", func(t *testing.T) {
		m, reg := newTestDecider(t)
		m.CallersInForce([]string{"east", "west"})
		m.CallerDecided("west", inject)
		m.CallerDecided("stranger", inject)
		m.CallerDenied("stranger")
		if n := count(t, reg, "dynamic_config_caller_decisions_total"); n != 1 {
			t.Errorf("%d decision series, want 1 (west inject: series appear with their first call)", n)
		}
		if n := count(t, reg, "dynamic_config_caller_denied_total"); n != 0 {
			t.Errorf("%d denied series, want 0", n)
		}
		if v := testutil.ToFloat64(m.callers.decisions.WithLabelValues("west", OutcomeInject)); v != 1 {
			t.Errorf("west inject = %v, want 1", v)
		}
	})
	t.Run("a file of ten thousand callers creates no series up front", func(t *testing.T) {
		m, reg := newTestDecider(t)
		names := make([]string, 10_000)
		for i := range names {
			names[i] = fmt.Sprintf("caller-%d", i)
		}
		m.CallersInForce(names)
		if n := count(t, reg, "dynamic_config_caller_decisions_total") + count(t, reg, "dynamic_config_caller_denied_total"); n != 0 {
			t.Errorf("%d caller series after loading, want 0", n)
		}
	})
	t.Run("a reload that drops a caller removes its series and stops counting it", func(t *testing.T) {
		m, reg := newTestDecider(t)
		m.CallersInForce([]string{"east", "west"})
		m.CallerDecided("east", inject)
		m.CallerDecided("west", inject)
		m.CallerDenied("west")
		m.CallersInForce([]string{"east"})
		m.CallerDecided("west", inject)
		m.CallerDenied("west")
		if n := count(t, reg, "dynamic_config_caller_decisions_total"); n != 1 {
			t.Errorf("%d decision series after the reload, want 1 (east only)", n)
		}
		if n := count(t, reg, "dynamic_config_caller_denied_total"); n != 0 {
			t.Errorf("%d denied series after the reload, want 0", n)
		}
	})
	t.Run("reloads are counted by result and the loaded time is set", func(t *testing.T) {
		m, reg := newTestDecider(t)
		m.CallersInForce([]string{"east"})
		m.CallersReloaded(true)
		m.CallersReloaded(false)
		m.CallersReloaded(false)
		if ok, bad := testutil.ToFloat64(m.callers.reloads.WithLabelValues(ReloadResultOK)), testutil.ToFloat64(m.callers.reloads.WithLabelValues(ReloadResultError)); ok != 1 || bad != 2 {
			t.Errorf("reloads ok=%v error=%v, want 1 and 2", ok, bad)
		}
		if v := testutil.ToFloat64(m.callers.loadedAt.WithLabelValues()); v <= 0 {
			t.Errorf("loaded timestamp %v", v)
		}
		if n := count(t, reg, "dynamic_config_callers_loaded_timestamp_seconds"); n != 1 {
			t.Errorf("%d loaded-timestamp series, want 1", n)
		}
	})
}
