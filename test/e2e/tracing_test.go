package e2e

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// traceReceiver is an OTLP/HTTP trace receiver: it keeps the bodies POSTed
// to /v1/traces (binary protobuf, whose strings — span and service names —
// are readable bytes). internal/tracing/tracingtest decodes them in the
// root module's test of the span tree (cmd/dynamic-config).
type traceReceiver struct {
	url    string
	mu     sync.Mutex
	bodies [][]byte
}

func newTraceReceiver(t *testing.T) *traceReceiver {
	t.Helper()
	r := &traceReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want POST /v1/traces application/x-protobuf", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *traceReceiver) received() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Join(r.bodies, nil)
}

// TestTheBinariesExportOneTracePerAdmission (issue 21): the decider and the
// front door binaries with --otlp-endpoint start, admit a pod the API server
// sends, and export the spans of both processes on shutdown.
func TestTheBinariesExportOneTracePerAdmission(t *testing.T) {
	receiver := newTraceReceiver(t)
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	d := newDecider(t, "decider", path)
	d.extra = []string{"--otlp-endpoint", receiver.url, "--drain-delay", "0"}
	d.start()
	door, fd := startFrontdoor(t, "frontdoor", d.addr, "--otlp-endpoint", receiver.url, "--drain-delay", "0")

	ns := newNamespace(t)
	registerInjection(t, ns+"-inject", ns, fd, injection{})
	waitForEffect(t, "the injection webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
	wantAdmitted(t, applyJSON(t, pod(ns, "traced", consulAnnotations())))

	// Stopping flushes the spans each process still holds.
	if err := door.stop(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	d.stop()
	got := receiver.received()
	for _, want := range []string{"dynamic-config-frontdoor", "dynamic-config-decider", "POST /mutate", "decode", "facts",
		"decide", "patch", "resolve", "plan", "dynamicconfig.decider.v1.DeciderService/Decide", "dynamic_config.decision_id"} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("no %q in the %d bytes of spans received", want, len(got))
		}
	}
	if bytes.Contains(got, []byte("grpc.health.v1.Health")) {
		t.Error("a health check was traced")
	}
	for key, value := range consulAnnotations() {
		if len(value) > 6 && strings.Contains(string(got), value) {
			t.Errorf("the value of %s reached a span", key)
		}
	}
}
