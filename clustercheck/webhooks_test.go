package clustercheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

func ptr[T any](v T) *T { return &v }

// servingServer is a TLS server (answering 404) with a serving pair from a
// fresh CA, closed at the test's end, and the pair's files.
func servingServer(t *testing.T) (*httptest.Server, *certstest.Bundle) {
	t.Helper()
	b, err := certstest.Write(t.TempDir(), "serving", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(b.CertPEM, b.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, b
}

// chartInject is the inject webhook as the chart renders it.
func chartInject(caPEM []byte) Webhook {
	return Webhook{
		Kind: "mutatingwebhookconfiguration", Config: "dynamic-config", Name: InjectWebhook,
		ClientConfig: admissionv1.WebhookClientConfig{
			Service:  &admissionv1.ServiceReference{Namespace: "dynamic-config", Name: "dynamic-config-frontdoor", Port: ptr(int32(443))},
			CABundle: caPEM,
		},
		FailurePolicy:   ptr(admissionv1.Fail),
		TimeoutSeconds:  ptr(int32(5)),
		MatchConditions: []admissionv1.MatchCondition{{Name: AsksCondition, Expression: "true"}},
	}
}

func readySlice(ready ...bool) []discoveryv1.EndpointSlice {
	s := discoveryv1.EndpointSlice{}
	for _, r := range ready {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(r)}})
	}
	return []discoveryv1.EndpointSlice{s}
}

func byCheck(fs []Finding, check string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

func TestCheckWebhook(t *testing.T) {
	b, err := certstest.Write(t.TempDir(), "serving", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := certstest.Write(t.TempDir(), "serving", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf := parsePEM(t, b.CertPEM)
	now := time.Now()
	expect := Expect{DeciderTimeout: 2 * time.Second, Now: now}

	tests := []struct {
		name    string
		hook    func(*Webhook)
		obs     Observed
		expect  Expect
		check   string
		status  Status
		details []string
	}{
		{name: "the chart's webhook with a ready endpoint passes every check", obs: Observed{EndpointSlices: readySlice(true)},
			check: "", status: OK},
		{name: "an empty caBundle fails and says what was expected", hook: func(w *Webhook) { w.ClientConfig.CABundle = nil },
			check: "caBundle", status: Fail, details: []string{"caBundle is empty", "expected the PEM CA"}},
		{name: "a caBundle that is not PEM fails", hook: func(w *Webhook) { w.ClientConfig.CABundle = []byte("not a certificate") },
			check: "caBundle", status: Fail, details: []string{"not PEM"}},
		{name: "a caBundle with a key block fails", hook: func(w *Webhook) { w.ClientConfig.CABundle = b.KeyPEM },
			check: "caBundle", status: Fail, details: []string{`"EC PRIVATE KEY"`}},
		{name: "an expired CA fails", expect: Expect{DeciderTimeout: 2 * time.Second, Now: now.Add(2 * time.Hour)},
			check: "caBundle", status: Fail, details: []string{"none valid now", "expired"}},
		{name: "a serving certificate the caBundle signed passes for the name the API server uses",
			hook: func(w *Webhook) {
				w.ClientConfig.Service = nil
				w.ClientConfig.URL = ptr("https://127.0.0.1:8443/mutate")
			},
			obs:   Observed{Serving: []Serving{{Address: "127.0.0.1:8443", Chain: []*x509.Certificate{leaf}}}},
			check: "serving certificate", status: OK, details: []string{"verified by the caBundle for 127.0.0.1"}},
		{name: "a serving certificate of another CA fails",
			hook: func(w *Webhook) {
				w.ClientConfig.CABundle = other.CAPEM
				w.ClientConfig.Service = nil
				w.ClientConfig.URL = ptr("https://127.0.0.1:8443/mutate")
			},
			obs:   Observed{Serving: []Serving{{Address: "127.0.0.1:8443", Chain: []*x509.Certificate{leaf}}}},
			check: "serving certificate", status: Fail, details: []string{"does not verify for 127.0.0.1", "unknown authority"}},
		{name: "a serving certificate for another name fails naming the Service's name",
			obs:   Observed{EndpointSlices: readySlice(true), Serving: []Serving{{Address: "10.0.0.1:8443", Chain: []*x509.Certificate{leaf}}}},
			check: "serving certificate", status: Fail, details: []string{"valid for localhost, not dynamic-config-frontdoor.dynamic-config.svc"}},
		{name: "an endpoint not reachable from here warns and points at the proof",
			obs:   Observed{EndpointSlices: readySlice(true), Serving: []Serving{{Address: "10.0.0.1:8443", Err: context.DeadlineExceeded}}},
			check: "serving certificate", status: Warn, details: []string{"not reachable from here", "install proof"}},
		{name: "no ready endpoint fails naming the Service", obs: Observed{EndpointSlices: readySlice(false, false)},
			check: "endpoints", status: Fail, details: []string{"service dynamic-config/dynamic-config-frontdoor has 2 endpoint(s), none ready"}},
		{name: "no EndpointSlice at all fails", check: "endpoints", status: Fail, details: []string{"has 0 endpoint(s)"}},
		{name: "an endpoint without a ready condition counts as ready", obs: Observed{EndpointSlices: []discoveryv1.EndpointSlice{{Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}}}}},
			check: "endpoints", status: OK, details: []string{"1 of 1"}},
		{name: "a URL webhook has no Service to check", hook: func(w *Webhook) { w.ClientConfig.Service = nil; w.ClientConfig.URL = ptr("https://127.0.0.1/mutate") },
			check: "endpoints", status: Skip},
		{name: "failurePolicy Ignore warns", hook: func(w *Webhook) { w.FailurePolicy = ptr(admissionv1.Ignore) },
			check: "failurePolicy", status: Warn, details: []string{"Ignore", "audit-pods"}},
		{name: "failurePolicy Ignore on the proof webhook fails", hook: func(w *Webhook) {
			w.Name = ProofWebhook
			w.FailurePolicy = ptr(admissionv1.Ignore)
		}, check: "failurePolicy", status: Fail, details: []string{"expected Fail"}},
		{name: "an unset failurePolicy is the API's Fail", hook: func(w *Webhook) { w.FailurePolicy = nil },
			check: "failurePolicy", status: OK, details: []string{"Fail"}},
		{name: "the inject webhook without the asks condition fails", hook: func(w *Webhook) { w.MatchConditions = nil },
			check: "matchConditions", status: Fail, details: []string{"missing asks-for-dynamic-config (has: none)"}},
		{name: "the proof webhook without the dry-run condition fails", hook: func(w *Webhook) { w.Name = ProofWebhook },
			check: "matchConditions", status: Fail, details: []string{"missing install-proof-dry-run-only"}},
		{name: "the env-policy webhook needs no condition", hook: func(w *Webhook) { w.Name = EnvPolicyWebhook; w.MatchConditions = nil },
			check: "matchConditions", status: OK, details: []string{"none"}},
		{name: "a timeout that leaves no second above the decider deadline fails", hook: func(w *Webhook) { w.TimeoutSeconds = ptr(int32(2)) },
			check: "timeoutSeconds", status: Fail, details: []string{"2s; expected at least 3s", "decider deadline 2s"}},
		{name: "an unset timeout is the API's 10s", hook: func(w *Webhook) { w.TimeoutSeconds = nil },
			check: "timeoutSeconds", status: OK, details: []string{"10s"}},
		{name: "a longer decider deadline needs a longer timeout", hook: func(w *Webhook) { w.TimeoutSeconds = ptr(int32(5)) },
			expect: Expect{DeciderTimeout: 5 * time.Second, Now: now}, check: "timeoutSeconds", status: Fail, details: []string{"at least 6s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := chartInject(b.CAPEM)
			if tt.hook != nil {
				tt.hook(&w)
			}
			e := tt.expect
			if e.Now.IsZero() {
				e = expect
			}
			fs := CheckWebhook(w, tt.obs, e)
			if tt.check == "" {
				for _, f := range fs {
					if f.Status == Fail || f.Status == Warn {
						t.Errorf("%s: %s %s", f.Check, f.Status, f.Detail)
					}
				}
				return
			}
			got := byCheck(fs, tt.check)
			if len(got) != 1 {
				t.Fatalf("%d findings of %q; want 1: %+v", len(got), tt.check, fs)
			}
			if got[0].Status != tt.status {
				t.Errorf("%s is %s (%s); want %s", tt.check, got[0].Status, got[0].Detail, tt.status)
			}
			if got[0].Object != "mutatingwebhookconfiguration/dynamic-config webhook "+w.Name {
				t.Errorf("the finding names %q; want the configuration and the webhook", got[0].Object)
			}
			for _, d := range tt.details {
				if !strings.Contains(got[0].Detail, d) {
					t.Errorf("detail %q does not say %q", got[0].Detail, d)
				}
			}
		})
	}
}

func parsePEM(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The handshake sees what a real TLS server presents, and the check
// verifies it as the API server would.
func TestHandshakeCollectsTheServingChain(t *testing.T) {
	srv, b := servingServer(t)

	addr := strings.TrimPrefix(srv.URL, "https://")
	s := Cluster{DialTimeout: 5 * time.Second}.handshake(context.Background(), addr, "127.0.0.1")
	if s.Err != nil || len(s.Chain) == 0 {
		t.Fatalf("handshake with %s: chain %d, error %v", addr, len(s.Chain), s.Err)
	}
	url := srv.URL + "/mutate"
	w := Webhook{Kind: "mutatingwebhookconfiguration", Config: "c", Name: InjectWebhook, ClientConfig: admissionv1.WebhookClientConfig{URL: &url, CABundle: b.CAPEM}}
	if f := byCheck(CheckWebhook(w, Observed{Serving: []Serving{s}}, Expect{Now: time.Now()}), "serving certificate"); len(f) != 1 || f[0].Status != OK {
		t.Errorf("the chain of a server the caBundle signed: %+v; want ok", f)
	}

	closed := Cluster{DialTimeout: time.Second}.handshake(context.Background(), "127.0.0.1:1", "127.0.0.1")
	if closed.Err == nil {
		t.Errorf("a handshake with a closed port reported no error")
	}
}

func TestReportFailsOnAnyFailedFinding(t *testing.T) {
	tests := []struct {
		name     string
		statuses []Status
		ok       bool
		last     string
	}{
		{name: "no findings is ok", ok: true, last: "check-cluster: ok (0 checks)"},
		{name: "warnings and skips are ok", statuses: []Status{OK, Warn, Skip}, ok: true, last: "check-cluster: ok (3 checks)"},
		{name: "one failure fails", statuses: []Status{OK, Fail, Warn}, ok: false, last: "check-cluster: 1 of 3 checks failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fs []Finding
			for _, s := range tt.statuses {
				fs = append(fs, Finding{Check: "c", Object: "o", Status: s, Detail: "d"})
			}
			r := NewReport(fs)
			if r.OK != tt.ok {
				t.Errorf("OK is %v; want %v", r.OK, tt.ok)
			}
			var out strings.Builder
			if err := r.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if lines[len(lines)-1] != tt.last {
				t.Errorf("last line %q; want %q", lines[len(lines)-1], tt.last)
			}
			var js strings.Builder
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			var back struct {
				OK       *bool     `json:"ok"`
				Findings []Finding `json:"findings"`
			}
			if err := json.Unmarshal([]byte(js.String()), &back); err != nil || back.OK == nil || *back.OK != tt.ok || back.Findings == nil || len(back.Findings) != len(fs) {
				t.Errorf("-o json %s reads back as ok %v, %d findings (%v); want ok %v and %d findings", js.String(), back.OK, len(back.Findings), err, tt.ok, len(fs))
			}
		})
	}
}
