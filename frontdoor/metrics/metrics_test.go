package metrics

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func TestFrontdoorMetricsAreTheSpecs(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewFrontdoor(reg)
	m.Admission(WebhookMutate, OutcomePatched, 3*time.Millisecond)
	m.Admission(WebhookValidate, OutcomeAllowed, time.Millisecond)
	m.Refusal(ReasonPinned)
	m.PatchBytes(1444)
	m.DeciderRPC("OK", time.Millisecond)
	m.CertificateLoaded(time.Unix(1900000000, 0))
	m.CertificateReload(false)
	m.RevisionAnswered("sha256:x")
	if err := RegisterRuntime(reg); err != nil {
		t.Fatal(err)
	}
	if err := RegisterRuntime(reg); err != nil {
		t.Fatalf("registering the runtime collectors twice: %v", err)
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	want := []struct {
		name   string
		typ    dto.MetricType
		labels []string // label names, or nil
		values []string // the pre-created label values of the first label
	}{
		{"dynamic_config_admissions_total", dto.MetricType_COUNTER, []string{"outcome"},
			[]string{"decider_error_allowed", "decider_error_denied", "patched", "refused", "skipped"}},
		{"dynamic_config_validations_total", dto.MetricType_COUNTER, []string{"outcome"},
			[]string{"allowed", "decider_error_allowed", "decider_error_denied", "refused", "skipped"}},
		{"dynamic_config_admission_refusals_total", dto.MetricType_COUNTER, []string{"reason"},
			[]string{"conflict", "decider_unavailable", "env_policy", "internal", "malformed", "pinned", "policy"}},
		{"dynamic_config_admission_duration_seconds", dto.MetricType_HISTOGRAM, []string{"webhook"}, []string{"mutate", "validate"}},
		{"dynamic_config_admission_patch_bytes_total", dto.MetricType_COUNTER, nil, nil},
		{"dynamic_config_decider_rpc_duration_seconds", dto.MetricType_HISTOGRAM, []string{"code"}, []string{"OK"}},
		{"dynamic_config_certificate_expires_at_seconds", dto.MetricType_GAUGE, nil, nil},
		{"dynamic_config_certificate_reloads_total", dto.MetricType_COUNTER, []string{"result"}, []string{"error", "ok"}},
		{"dynamic_config_decider_revision_last_answer_timestamp_seconds", dto.MetricType_GAUGE, []string{"revision"}, []string{"sha256:x"}},
	}
	for _, w := range want {
		f, ok := byName[w.name]
		if !ok {
			t.Errorf("%s is not exported", w.name)
			continue
		}
		if f.GetType() != w.typ {
			t.Errorf("%s is a %v, want %v", w.name, f.GetType(), w.typ)
		}
		var values []string
		for _, metric := range f.GetMetric() {
			var names []string
			for _, l := range metric.GetLabel() {
				names = append(names, l.GetName())
			}
			if !slices.Equal(names, w.labels) {
				t.Errorf("%s has labels %v, want %v", w.name, names, w.labels)
			}
			if len(metric.GetLabel()) > 0 {
				values = append(values, metric.GetLabel()[0].GetValue())
			}
			if h := metric.GetHistogram(); h != nil {
				var bounds []float64
				for _, b := range h.GetBucket() {
					bounds = append(bounds, b.GetUpperBound())
				}
				if !slices.Equal(bounds, Buckets) {
					t.Errorf("%s buckets %v", w.name, bounds)
				}
			}
		}
		sort.Strings(values)
		if !slices.Equal(values, w.values) {
			t.Errorf("%s label values %v, want %v", w.name, values, w.values)
		}
	}
	if byName["dynamic_config_admission_patch_bytes_total"].GetMetric()[0].GetCounter().GetValue() != 1444 {
		t.Error("patch bytes not summed")
	}
	if byName["dynamic_config_certificate_expires_at_seconds"].GetMetric()[0].GetGauge().GetValue() != 1900000000 {
		t.Error("expiry not set")
	}
	var goSeen, processSeen bool
	for name := range byName {
		goSeen = goSeen || strings.HasPrefix(name, "go_")
		processSeen = processSeen || strings.HasPrefix(name, "process_")
	}
	if !goSeen || !processSeen {
		t.Errorf("runtime collectors: go %v, process %v", goSeen, processSeen)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Frontdoor
	m.Admission(WebhookMutate, OutcomeSkipped, time.Second)
	m.Refusal(ReasonInternal)
	m.PatchBytes(1)
	m.DeciderRPC("OK", time.Second)
	m.CertificateLoaded(time.Now())
	m.CertificateReload(true)
	m.RevisionAnswered("sha256:a")
}
