package tracing_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing/tracingtest"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestTracingIsOnOnlyWhenAnEndpointIsNamed(t *testing.T) {
	cases := []struct {
		name string
		cfg  tracing.Config
		want bool
	}{
		{"nothing named is off", tracing.Config{}, false},
		{"the flag turns it on", tracing.Config{Endpoint: "http://collector:4318"}, true},
		{"OTEL_EXPORTER_OTLP_ENDPOINT turns it on", tracing.Config{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})}, true},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT turns it on", tracing.Config{Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"})}, true},
		{"OTEL_SDK_DISABLED=true wins over the flag", tracing.Config{Endpoint: "http://c:4318", Getenv: env(map[string]string{"OTEL_SDK_DISABLED": "true"})}, false},
		{"OTEL_TRACES_EXPORTER=none wins over the flag", tracing.Config{Endpoint: "http://c:4318", Getenv: env(map[string]string{"OTEL_TRACES_EXPORTER": "none"})}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.cfg.Enabled(); got != c.want {
				t.Errorf("Enabled() = %v, want %v", got, c.want)
			}
			tr, err := tracing.New(context.Background(), c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Shutdown(time.Second) //nolint:errcheck // nothing was exported
			if tr.Enabled() != c.want {
				t.Errorf("New(...).Enabled() = %v, want %v", tr.Enabled(), c.want)
			}
		})
	}
}

func TestAnEndpointThatIsNotAnHTTPURLIsRefused(t *testing.T) {
	for _, endpoint := range []string{"collector:4318", "grpc://collector:4317", "http://"} {
		t.Run(endpoint, func(t *testing.T) {
			if _, err := tracing.New(context.Background(), tracing.Config{Endpoint: endpoint, SampleRatio: 1}); err == nil {
				t.Errorf("%q was accepted", endpoint)
			}
		})
	}
}

func TestASampleRatioOutsideZeroToOneIsRefused(t *testing.T) {
	for _, r := range []float64{-0.1, 1.5} {
		if err := tracing.CheckSampleRatio(r); err == nil {
			t.Errorf("ratio %v accepted", r)
		}
	}
	for _, r := range []float64{0, 0.25, 1} {
		if err := tracing.CheckSampleRatio(r); err != nil {
			t.Errorf("ratio %v refused: %v", r, err)
		}
	}
}

func TestSpansReachTheReceiverAtTheEndpointsPath(t *testing.T) {
	cases := []struct {
		name     string
		endpoint func(base string) string
		env      map[string]string
	}{
		{"a base URL gets /v1/traces", func(b string) string { return b }, nil},
		{"a base URL with a slash gets /v1/traces", func(b string) string { return b + "/" }, nil},
		{"a URL with the path is used as it is", func(b string) string { return b + "/v1/traces" }, nil},
		{"OTEL_EXPORTER_OTLP_ENDPOINT is a base URL", func(string) string { return "" }, map[string]string{}},
		{"gzip and headers from the environment", func(b string) string { return b },
			map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=a%20b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tracingtest.NewReceiver(t)
			vars := map[string]string{}
			for k, v := range c.env {
				vars[k] = v
			}
			endpoint := c.endpoint(r.URL)
			if endpoint == "" {
				vars["OTEL_EXPORTER_OTLP_ENDPOINT"] = r.URL
			}
			tr, err := tracing.New(context.Background(), tracing.Config{Endpoint: endpoint, SampleRatio: 1, ServiceName: "test", Getenv: env(vars)})
			if err != nil {
				t.Fatal(err)
			}
			_, span := tr.Start(context.Background(), "one")
			span.End()
			if err := tr.Shutdown(5 * time.Second); err != nil {
				t.Fatal(err)
			}
			spans := r.Spans()
			if len(spans) != 1 || spans[0].Name != "one" || spans[0].Service != "test" {
				t.Errorf("received %+v (refused %v)", spans, r.Problems())
			}
			h := r.Header()
			if c.env["OTEL_EXPORTER_OTLP_COMPRESSION"] == "gzip" && (h.Get("Content-Encoding") != "gzip" || h.Get("X-Tenant") != "a b") {
				t.Errorf("want a gzip body and the X-Tenant header, got %v", h)
			}
		})
	}
}

func TestARatioOfZeroKeepsOnlyWhatTheParentSampled(t *testing.T) {
	r := tracingtest.NewReceiver(t)
	tr, err := tracing.New(context.Background(), tracing.Config{Endpoint: r.URL, SampleRatio: 0, SampleRatioSet: true})
	if err != nil {
		t.Fatal(err)
	}
	_, root := tr.StartServer(context.Background(), http.Header{}, "new root")
	root.End()
	sampled := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	_, child := tr.StartServer(context.Background(), sampled, "sampled parent")
	child.End()
	unsampled := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4737-00f067aa0ba902b7-00"}}
	_, other := tr.StartServer(context.Background(), unsampled, "unsampled parent")
	other.End()
	if err := tr.Shutdown(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	spans := r.Spans()
	if len(spans) != 1 || spans[0].Name != "sampled parent" || spans[0].ParentID != "00f067aa0ba902b7" {
		t.Errorf("received %+v, want only the span whose parent was sampled", spans)
	}
}

func TestHeaderTraceID(t *testing.T) {
	cases := []struct {
		name   string
		header []string
		want   string
	}{
		{"a W3C traceparent gives its trace id", []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"no header gives none", nil, ""},
		{"two headers give none", []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, ""},
		{"upper-case hex is malformed", []string{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}, ""},
		{"the all-zero trace id is invalid", []string{"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, ""},
		{"version ff is invalid", []string{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, ""},
		{"a short value is malformed", []string{"00-4bf92f3577b34da6a3ce929d0e0e4736-01"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			if c.header != nil {
				h["Traceparent"] = c.header
			}
			if got := tracing.HeaderTraceID(h); got != c.want {
				t.Errorf("HeaderTraceID = %q, want %q", got, c.want)
			}
		})
	}
}

// TestTracingOffAllocatesNothing pins what the hot path calls with tracing
// off (a nil *Tracing): no span, no context, no allocation.
func TestTracingOffAllocatesNothing(t *testing.T) {
	var off *tracing.Tracing
	ctx := context.Background()
	h := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	var traceID string
	allocs := testing.AllocsPerRun(1000, func() {
		sctx, root := off.StartServer(ctx, h, "POST /mutate")
		cctx, child := off.Start(sctx, "decide")
		if child.Recording() || cctx != ctx {
			t.Fatal("tracing off recorded or wrapped the context")
		}
		child.Fail("x")
		child.End()
		root.End()
		traceID = tracing.HeaderTraceID(h)
		if off.ServerHandler() != nil || off.ClientHandler() != nil {
			t.Fatal("tracing off has a stats handler")
		}
	})
	if allocs != 0 || traceID == "" {
		t.Errorf("tracing off: %v allocations per admission, trace id %q; want 0 and the header's", allocs, traceID)
	}
}
