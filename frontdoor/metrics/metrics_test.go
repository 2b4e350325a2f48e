package metrics

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/dynamic-config-admission/dynamic-config/internal/promruntime"
	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
)

func TestFrontdoorMetricsAreTheSpecs(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewFrontdoor(reg)
	m.Admission(WebhookMutate, OutcomePatched, 3*time.Millisecond)
	m.Admission(WebhookValidate, OutcomeAllowed, time.Millisecond)
	m.Refusal(refusallabel.Pinned)
	m.PatchBytes(1444)
	m.DeciderRPC("OK", time.Millisecond)
	m.RevisionAnswered("sha256:x")
	if err := promruntime.Register(reg); err != nil {
		t.Fatal(err)
	}
	if err := promruntime.Register(reg); err != nil {
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
			[]string{"caller_refused", "conflict", "decider_unavailable", "env_policy", "internal", "malformed", "pinned", "policy"}},
		{"dynamic_config_decider_authorization_failures_total", dto.MetricType_COUNTER, []string{"code", "webhook"},
			[]string{"PermissionDenied", "PermissionDenied", "Unauthenticated", "Unauthenticated"}},
		{"dynamic_config_admission_duration_seconds", dto.MetricType_HISTOGRAM, []string{"webhook"}, []string{"mutate", "validate"}},
		{"dynamic_config_admission_patch_bytes_total", dto.MetricType_COUNTER, nil, nil},
		{"dynamic_config_decider_rpc_duration_seconds", dto.MetricType_HISTOGRAM, []string{"code"}, []string{"OK"}},
		{"dynamic_config_webhook_requests_in_flight", dto.MetricType_GAUGE, []string{"webhook"}, []string{"mutate", "validate"}},
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
	if _, ok := byName["dynamic_config_webhook_requests_total"]; ok {
		t.Error("dynamic_config_webhook_requests_total has series before any request (its codes are not pre-created)")
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
	m.Refusal(refusallabel.Internal)
	m.AuthorizationFailure(WebhookMutate, "PermissionDenied")
	m.PatchBytes(1)
	m.DeciderRPC("OK", time.Second)
	m.RevisionAnswered("sha256:a")
	if h := http.NotFoundHandler(); m.Instrument(WebhookMutate, h) == nil {
		t.Error("a nil metric set dropped the handler")
	}
}

func TestEveryWebhookRequestIsCountedByCodeAndInFlight(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewFrontdoor(reg)
	var inFlight float64
	h := m.Instrument(WebhookMutate, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight = testutil.ToFloat64(m.inFlight.WithLabelValues(WebhookMutate))
		if r.ContentLength == 0 {
			http.Error(w, "no body", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	for _, body := range []string{"", "{}", ""} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mutate", strings.NewReader(body)))
	}
	if inFlight != 1 {
		t.Errorf("in flight while serving: %v, want 1", inFlight)
	}
	if v := testutil.ToFloat64(m.inFlight.WithLabelValues(WebhookMutate)); v != 0 {
		t.Errorf("in flight after serving: %v, want 0", v)
	}
	for code, want := range map[string]float64{"400": 2, "200": 1} {
		if v := testutil.ToFloat64(m.requests.WithLabelValues(WebhookMutate, code)); v != want {
			t.Errorf("requests with code %s: %v, want %v", code, v, want)
		}
	}
	if n := testutil.CollectAndCount(m.requests); n != 2 {
		t.Errorf("dynamic_config_webhook_requests_total has %d series, want the 2 codes that occurred", n)
	}
}
