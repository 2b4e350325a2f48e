package handler

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// constantDecider answers every Decide in process, without gRPC, so the
// benchmarks measure the front door's own work.
type constantDecider struct {
	deciderv1.DeciderServiceClient
	resp *deciderv1.DecisionResponse
}

func (c constantDecider) Decide(context.Context, *deciderv1.DecisionRequest, ...grpc.CallOption) (*deciderv1.DecisionResponse, error) {
	return c.resp, nil
}

func benchmarkReview(b *testing.B, pod string, d *deciderv1.Decision) {
	benchmarkHandler(b, New(Config{Decider: constantDecider{resp: &deciderv1.DecisionResponse{Decision: d}}}), pod)
}

func benchmarkHandler(b *testing.B, h http.Handler, pod string) {
	body := requestReview(b, podRequest("bench", pod))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, PathMutate, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Body.String())
		}
	}
}

// BenchmarkMutatePlainPod is the common case: a pod without the prefix,
// allowed without an RPC.
func BenchmarkMutatePlainPod(b *testing.B) { benchmarkReview(b, plainPod, nil) }

// BenchmarkMutateInject decodes an annotated pod, extracts its facts and
// builds the patch from a plan.
func BenchmarkMutateInject(b *testing.B) { benchmarkReview(b, example1Pod, injectDecision()) }

// BenchmarkMutateInjectCacheHit is BenchmarkMutateInject answered from the
// decision cache (issue 43): the key, the lookup, a decision id of its own
// and the marked audit annotations instead of the call.
func BenchmarkMutateInjectCacheHit(b *testing.B) {
	c := decisioncache.New(decisioncache.Config{})
	c.Announce(decisioncache.Revisions{Installation: revision})
	h := New(Config{Decider: constantDecider{resp: &deciderv1.DecisionResponse{Decision: injectDecision()}}, Cache: c})
	benchmarkHandler(b, h, example1Pod)
}

// BenchmarkMutateInjectCacheMiss is BenchmarkMutateInject with a cache that
// is asked first and never answers (no announcement): the key's cost on a miss.
func BenchmarkMutateInjectCacheMiss(b *testing.B) {
	h := New(Config{Decider: constantDecider{resp: &deciderv1.DecisionResponse{Decision: injectDecision()}},
		Cache: decisioncache.New(decisioncache.Config{})})
	benchmarkHandler(b, h, example1Pod)
}

// BenchmarkMutateInjectCommandRewrite is the inject with env-inject's
// command rewrite: the one plan for which the patch reads the raw pod again
// (whether each container's args member is there, null included).
func BenchmarkMutateInjectCommandRewrite(b *testing.B) {
	d := injectDecision()
	d.Plan.CommandRewrite = &deciderv1.CommandRewrite{ContainerIndex: 0, ContainerName: "app",
		Command: []string{"/bin/sh", "-c", "exec \"$@\"", "dynamic-config-env"}}
	benchmarkReview(b, example1Pod, d)
}

// discardExporter drops every span (the on-cost of tracing without a network).
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkMutateInjectTracingOn is BenchmarkMutateInject with tracing on
// (every span sampled, exported to nowhere): what the spans cost when on.
// Off, BenchmarkMutateInject is the figure: tracing off adds nothing.
func BenchmarkMutateInjectTracingOn(b *testing.B) {
	tr, err := tracing.New(context.Background(), tracing.Config{Exporter: discardExporter{}, SampleRatio: 1})
	if err != nil {
		b.Fatal(err)
	}
	h := New(Config{Decider: constantDecider{resp: &deciderv1.DecisionResponse{Decision: injectDecision()}}, Tracing: tr})
	body := requestReview(b, podRequest("bench", example1Pod))
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, PathMutate, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatal(w.Body.String())
		}
	}
}
