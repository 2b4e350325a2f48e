package metrics

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/internal/promruntime"
	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
)

func newTestDecider(t *testing.T) (*Decider, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	return NewDecider(reg), reg
}

// familyLabels returns, per metric family name, the label names of its first series.
func familyLabels(t *testing.T, reg *prometheus.Registry) map[string][]string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, f := range families {
		var labels []string
		if len(f.GetMetric()) > 0 {
			for _, l := range f.GetMetric()[0].GetLabel() {
				labels = append(labels, l.GetName())
			}
		}
		out[f.GetName()] = labels
	}
	return out
}

func TestEveryDeciderMetricIsExported(t *testing.T) {
	m, reg := newTestDecider(t)
	m.InForce(&installation.Installation{Revision: "sha256:aa", LoadedAt: time.Unix(1700000000, 0)})
	got := familyLabels(t, reg)
	cases := []struct {
		name   string
		labels string
	}{
		{"dynamic_config_decisions_total", "outcome,purpose"},
		{"dynamic_config_decision_refusals_total", "reason"},
		{"dynamic_config_decision_duration_seconds", "purpose"},
		{"dynamic_config_env_policy_findings_total", "mode"},
		{"dynamic_config_installation_reloads_total", "result"},
		{"dynamic_config_installation_reload_problems", ""},
		{"dynamic_config_installation_info", "revision"},
		{"dynamic_config_installation_loaded_timestamp_seconds", ""},
		{"go_goroutines", ""},
		{"process_start_time_seconds", ""},
	}
	for _, c := range cases {
		t.Run(c.name+" is exported with labels "+c.labels, func(t *testing.T) {
			labels, ok := got[c.name]
			if !ok {
				t.Fatalf("%s is not exported", c.name)
			}
			if strings.Join(labels, ",") != c.labels {
				t.Errorf("labels %v, want %s", labels, c.labels)
			}
		})
	}
}

func TestDecisionDurationBuckets(t *testing.T) {
	want := []float64{0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05}
	_, reg := newTestDecider(t)
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() != "dynamic_config_decision_duration_seconds" {
			continue
		}
		var got []float64
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			got = append(got, b.GetUpperBound())
		}
		if len(got) != len(want) {
			t.Fatalf("buckets %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("buckets %v, want %v", got, want)
			}
		}
		return
	}
	t.Fatal("histogram not exported")
}

func TestDecided(t *testing.T) {
	cases := []struct {
		name     string
		purpose  decision.Purpose
		decision decision.Decision
		want     map[string]float64 // series → value
	}{
		{
			name:     "an injection counts one mutate inject decision",
			purpose:  decision.PurposeMutate,
			decision: decision.Decision{Outcome: decision.OutcomeInject},
			want: map[string]float64{
				`decisions{purpose="mutate",outcome="inject"}`: 1,
				`refusals{reason="pinned"}`:                    0,
			},
		},
		{
			name:    "a refusal counts the decision and its reason",
			purpose: decision.PurposeMutate,
			decision: decision.Decision{Outcome: decision.OutcomeRefuse,
				Refusals: []decision.Refusal{{Reason: decision.ReasonPinned}}},
			want: map[string]float64{
				`decisions{purpose="mutate",outcome="refuse"}`: 1,
				`refusals{reason="pinned"}`:                    1,
			},
		},
		{
			name:    "an env-policy refusal counts env_policy and the failed evaluated rules by mode",
			purpose: decision.PurposeValidate,
			decision: decision.Decision{Outcome: decision.OutcomeRefuse,
				Refusals: []decision.Refusal{{Reason: decision.ReasonEnvPolicy}},
				EnvPolicyResults: []decision.EnvPolicyRuleResult{
					{Mode: "warn", Applies: true, Failed: true, Evaluated: true},
					{Mode: "enforce", Applies: true, Failed: true, Evaluated: true},
					{Mode: "audit", Applies: true, Failed: true, Evaluated: false},
					{Mode: "audit", Applies: true, Failed: false, Evaluated: true},
				}},
			want: map[string]float64{
				`decisions{purpose="validate",outcome="refuse"}`: 1,
				`refusals{reason="env_policy"}`:                  1,
				`findings{mode="warn"}`:                          1,
				`findings{mode="enforce"}`:                       1,
				`findings{mode="audit"}`:                         0,
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, _ := newTestDecider(t)
			m.Decided(c.purpose, &c.decision, 3*time.Microsecond)
			for series, want := range c.want {
				if got := seriesValue(m, series); got != want {
					t.Errorf("%s = %v, want %v", series, got, want)
				}
			}
			if n := testutil.CollectAndCount(m.duration); n != 2 {
				t.Errorf("duration series %d, want 2 (mutate, validate)", n)
			}
		})
	}
	t.Run("a nil Decider records nothing and does not panic", func(t *testing.T) {
		var m *Decider
		m.Decided(decision.PurposeMutate, &decision.Decision{Outcome: decision.OutcomeSkip}, time.Millisecond)
		m.ReloadOK("a", "b")
		m.InForce(installation.Empty())
	})
}

// seriesValue reads one counter series written as family{label="value",…}.
func seriesValue(m *Decider, series string) float64 {
	name, rest, _ := strings.Cut(series, "{")
	var values []string
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
		_, v, _ := strings.Cut(kv, "=")
		values = append(values, strings.Trim(v, `"`))
	}
	switch name {
	case "decisions":
		return testutil.ToFloat64(m.decisions.WithLabelValues(values...))
	case "refusals":
		return testutil.ToFloat64(m.refusals.WithLabelValues(values...))
	case "findings":
		return testutil.ToFloat64(m.findings.WithLabelValues(values...))
	}
	panic("unknown family " + name)
}

func TestReloadObserver(t *testing.T) {
	m, _ := newTestDecider(t)
	var _ installationloader.ReloadObserver = m

	m.ReloadRejected(3)
	t.Run("a rejected reload counts error and records its problems", func(t *testing.T) {
		if got := testutil.ToFloat64(m.reloads.WithLabelValues("error")); got != 1 {
			t.Errorf("error reloads %v", got)
		}
		if got := testutil.ToFloat64(m.problems); got != 3 {
			t.Errorf("problems %v, want 3", got)
		}
	})
	m.ReloadOK("sha256:aa", "sha256:bb")
	t.Run("a good reload counts ok and clears the problems", func(t *testing.T) {
		if got := testutil.ToFloat64(m.reloads.WithLabelValues("ok")); got != 1 {
			t.Errorf("ok reloads %v", got)
		}
		if got := testutil.ToFloat64(m.problems); got != 0 {
			t.Errorf("problems %v, want 0", got)
		}
	})
	m.ReloadRejected(2)
	m.ReloadUnchanged()
	t.Run("an unchanged reload counts unchanged and clears the problems", func(t *testing.T) {
		if got := testutil.ToFloat64(m.reloads.WithLabelValues("unchanged")); got != 1 {
			t.Errorf("unchanged reloads %v", got)
		}
		if got := testutil.ToFloat64(m.problems); got != 0 {
			t.Errorf("problems %v, want 0", got)
		}
	})
	t.Run("installation_info keeps one series, the revision in force", func(t *testing.T) {
		m.InForce(&installation.Installation{Revision: "sha256:aa", LoadedAt: time.Unix(100, 0)})
		m.InForce(&installation.Installation{Revision: "sha256:bb", LoadedAt: time.Unix(200, 500_000_000)})
		if n := testutil.CollectAndCount(m.info); n != 1 {
			t.Fatalf("info series %d, want 1", n)
		}
		if got := testutil.ToFloat64(m.info.WithLabelValues("sha256:bb")); got != 1 {
			t.Errorf("info{revision=sha256:bb} = %v", got)
		}
		if got := testutil.ToFloat64(m.loadedAt); got != 200.5 {
			t.Errorf("loaded timestamp %v, want 200.5", got)
		}
	})
}

func TestRuntimeCollectorsMayAlreadyBeRegistered(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := promruntime.Register(reg); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("NewDecider on a registry with the runtime collectors panicked: %v", r)
		}
	}()
	NewDecider(reg)
}

func TestEveryRefusalClassCountsUnderItsSharedReasonLabel(t *testing.T) {
	m, reg := newTestDecider(t)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var precreated []string
	for _, f := range families {
		if f.GetName() != "dynamic_config_decision_refusals_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			precreated = append(precreated, s.GetLabel()[0].GetValue())
		}
	}
	want := refusallabel.Decision()
	slices.Sort(precreated)
	slices.Sort(want)
	if !slices.Equal(precreated, want) {
		t.Fatalf("pre-created reason series %q, want internal/refusallabel's %q", precreated, want)
	}
	for r := decision.ReasonMalformed; r <= decision.ReasonEnvPolicy; r++ {
		label, ok := reasonLabels[r]
		if !ok || !slices.Contains(want, label) {
			t.Errorf("refusal class %d counts under %q, want one of %q", r, label, want)
			continue
		}
		before := seriesValue(m, `refusals{reason="`+label+`"}`)
		m.Decided(decision.PurposeMutate, &decision.Decision{Outcome: decision.OutcomeRefuse, Refusals: []decision.Refusal{{Reason: r}}}, time.Microsecond)
		if got := seriesValue(m, `refusals{reason="`+label+`"}`); got != before+1 {
			t.Errorf("refusal class %d: %s went %v → %v, want one more", r, label, before, got)
		}
	}
}
