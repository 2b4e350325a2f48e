package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing/tracingtest"
)

const testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func mutateRequest(body []byte, traceparent string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, PathMutate, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if traceparent != "" {
		r.Header.Set("traceparent", traceparent)
	}
	return r
}

func TestTheAdmissionLineNamesItsTrace(t *testing.T) {
	receiver := tracingtest.NewReceiver(t)
	on, err := tracing.New(context.Background(), tracing.Config{Endpoint: receiver.URL, SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = on.Shutdown(5 * time.Second) })
	cases := []struct {
		name        string
		tracing     *tracing.Tracing
		traceparent string
		wantTrace   string // "*": any 32-hex id
		wantSpan    bool
	}{
		{"tracing off logs the API server's trace id", nil, testTraceparent, "4bf92f3577b34da6a3ce929d0e0e4736", false},
		{"tracing off without a traceparent logs none", nil, "", "", false},
		{"tracing on logs the continued trace and the admission's span", on, testTraceparent, "4bf92f3577b34da6a3ce929d0e0e4736", true},
		{"tracing on without a traceparent logs a new trace", on, "", "*", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := New(Config{Decider: constantDecider{resp: &deciderv1.DecisionResponse{Decision: injectDecision()}}, Tracing: c.tracing,
				Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, mutateRequest(requestReview(t, podRequest("trace", example1Pod)), c.traceparent))
			if w.Code != http.StatusOK {
				t.Fatal(w.Body.String())
			}
			var line map[string]any
			if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			traceID, _ := line["trace_id"].(string)
			spanID, _ := line["span_id"].(string)
			if c.wantTrace == "*" && len(traceID) != 32 || c.wantTrace != "*" && traceID != c.wantTrace {
				t.Errorf("trace_id = %q, want %q", traceID, c.wantTrace)
			}
			if (spanID != "") != c.wantSpan || c.wantSpan && len(spanID) != 16 {
				t.Errorf("span_id = %q, want one: %v", spanID, c.wantSpan)
			}
		})
	}
}

// TestTracingOffCostsNoAllocation: with tracing off, an admission that
// carries the API server's traceparent allocates exactly what one without
// it does (the header is read for the log line without allocating), and the
// span calls on the way allocate nothing (internal/tracing pins those).
func TestTracingOffCostsNoAllocation(t *testing.T) {
	h := New(Config{Decider: constantDecider{resp: &deciderv1.DecisionResponse{Decision: injectDecision()}},
		Logger: slog.New(slog.NewJSONHandler(discardWriter{}, nil))})
	body := requestReview(t, podRequest("allocs", example1Pod))
	allocs := func(traceparent string) float64 {
		reqs := make([]*http.Request, 0, 201)
		for range 201 {
			reqs = append(reqs, mutateRequest(body, traceparent))
		}
		i := 0
		return testing.AllocsPerRun(200, func() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, reqs[i])
			i++
			if w.Code != http.StatusOK {
				t.Fatal(w.Body.String())
			}
		})
	}
	without, with := allocs(""), allocs(testTraceparent)
	if with != without {
		t.Errorf("tracing off: %v allocations with a traceparent, %v without; want the same", with, without)
	}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
