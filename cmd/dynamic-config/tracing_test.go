package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing/tracingtest"
)

// The API server's trace context the admission continues (W3C traceparent).
const (
	apiServerTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	apiServerSpanID  = "00f067aa0ba902b7"
	apiServerParent  = "00-" + apiServerTraceID + "-" + apiServerSpanID + "-01"
	decideMethod     = "dynamicconfig.decider.v1.DeciderService/Decide"
)

// runMain runs a long-running command's main in the background; stop
// cancels it and waits for its exit code (its deferred flush included).
func runMain(t *testing.T, main func(context.Context, []string, io.Writer) int, args ...string) (out *foundationStderr, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &foundationStderr{}
	done := make(chan int, 1)
	go func() { done <- main(ctx, args, out) }()
	stopped := false
	code := 0
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Errorf("%v did not stop:\n%s", args, out.String())
			}
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return out, stop
}

// waitForLine waits until out holds a log line with msg.
func waitForLine(t *testing.T, out *foundationStderr, msg string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(out.String(), `"msg":"`+msg+`"`) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q line:\n%s", msg, out.String())
}

// logLine is the first JSON line of out whose msg is msg.
func logLine(t *testing.T, out string, msg string) map[string]any {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == msg {
			return line
		}
	}
	t.Fatalf("no %q line in:\n%s", msg, out)
	return nil
}

// TestOneTracePerAdmission admits one pod through the front door and a
// decider, two processes' worth of wiring (deciderMain, frontdoorMain) over
// a real gRPC connection, each exporting to an in-process OTLP receiver: the
// admission is one trace, continuing the API server's traceparent, with the
// span tree of docs/tracing.md, its attributes and no annotation value.
func TestOneTracePerAdmission(t *testing.T) {
	withFoundationEnv(t, nil)
	receiver := tracingtest.NewReceiver(t)
	deciderAddr, frontdoorAddr := freeLoopbackAddr(t), freeLoopbackAddr(t)
	opts, cleanup, err := deciderd.EmbeddedInstallation("", defaultInstallation, nil) // serve's, under which the example injects
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	installationFile := opts.DocumentPath
	deciderOut, stopDecider := runMain(t, deciderMain, "--addr", deciderAddr, "--metrics-addr", "", "--plaintext", "--installation", installationFile,
		"--drain-delay", "0", "--otlp-endpoint", receiver.URL)
	waitForLine(t, deciderOut, "decider listening")
	frontdoorOut, stopFrontdoor := runMain(t, frontdoorMain, "--addr", frontdoorAddr, "--plaintext", "--tls-cert", "/nonexistent/tls.crt", "--tls-key", "/nonexistent/tls.key",
		"--decider-target", deciderAddr, "--decider-plaintext", "--drain-delay", "0", "--otlp-endpoint", receiver.URL)
	waitForLine(t, frontdoorOut, "frontdoor listening")

	body, err := os.ReadFile("../../examples/review-inject.json")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+frontdoorAddr+"/mutate", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", apiServerParent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var answer foundationAdmission
	err = json.NewDecoder(resp.Body).Decode(&answer)
	resp.Body.Close()
	if err != nil || !answer.Response.Allowed || answer.Response.Patch == "" {
		t.Fatalf("want a patched answer, got %+v (%v)", answer, err)
	}
	decisionID, revision := answer.Response.AuditAnnotations["decision-id"], answer.Response.AuditAnnotations["revision"]
	if decisionID == "" || revision == "" {
		t.Fatalf("audit annotations %v", answer.Response.AuditAnnotations)
	}
	// Stopping flushes what each process still holds.
	if code := stopFrontdoor(); code != exitOK {
		t.Fatalf("frontdoor exited %d:\n%s", code, frontdoorOut.String())
	}
	if code := stopDecider(); code != exitOK {
		t.Fatalf("decider exited %d:\n%s", code, deciderOut.String())
	}

	spans := receiver.Spans()
	if p := receiver.Problems(); len(p) > 0 {
		t.Fatalf("the receiver refused %v", p)
	}
	byKey := map[string]tracingtest.Span{}
	for _, s := range spans {
		key := s.Service + " " + s.Name
		if s.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			key += " (client)"
		}
		if _, dup := byKey[key]; dup {
			t.Errorf("two %q spans: one admission is one of each", key)
		}
		byKey[key] = s
		if s.TraceID != apiServerTraceID {
			t.Errorf("span %q is in trace %s, want the API server's %s", key, s.TraceID, apiServerTraceID)
		}
		if strings.Contains(s.Name, "grpc.health") {
			t.Errorf("a health check was traced: %q", key)
		}
	}
	const fd, dc = "dynamic-config-frontdoor ", "dynamic-config-decider "
	// The tree: each span and its parent.
	tree := []struct{ span, parent string }{
		{fd + "POST /mutate", ""}, // the parent is the API server's span
		{fd + handler.SpanDecode, fd + "POST /mutate"},
		{fd + handler.SpanFacts, fd + "POST /mutate"},
		{fd + handler.SpanDecide, fd + "POST /mutate"},
		{fd + decideMethod + " (client)", fd + handler.SpanDecide},
		{dc + decideMethod, fd + decideMethod + " (client)"},
		{dc + service.SpanResolve, dc + decideMethod},
		{dc + service.SpanPlan, dc + decideMethod},
		{fd + handler.SpanPatch, fd + "POST /mutate"},
	}
	if len(spans) != len(tree) {
		names := make([]string, 0, len(spans))
		for _, s := range spans {
			names = append(names, s.Service+" "+s.Name)
		}
		t.Errorf("got %d spans %q, want the %d of the tree", len(spans), names, len(tree))
	}
	for _, n := range tree {
		s, ok := byKey[n.span]
		if !ok {
			t.Errorf("no %q span", n.span)
			continue
		}
		want := apiServerSpanID
		if n.parent != "" {
			want = byKey[n.parent].SpanID
		}
		if s.ParentID != want {
			t.Errorf("span %q has parent %s, want %q (%s)", n.span, s.ParentID, n.parent, want)
		}
	}

	root := byKey[fd+"POST /mutate"]
	server := byKey[dc+decideMethod]
	for _, a := range []struct {
		span       tracingtest.Span
		key, value string
	}{
		{root, tracing.AttrOutcome, "patched"},
		{root, tracing.AttrDecisionID, decisionID},
		{root, tracing.AttrRevision, revision},
		{root, tracing.AttrWebhook, "mutate"},
		{root, tracing.AttrUID, "705ab4f5-6393-11e8-b7cc-42010a800002"},
		{byKey[fd+handler.SpanDecide], tracing.AttrDecisionID, decisionID},
		{server, tracing.AttrOutcome, "inject"},
		{server, tracing.AttrDecisionID, decisionID},
		{server, tracing.AttrRevision, revision},
	} {
		if got := a.span.Attrs[a.key]; got != a.value {
			t.Errorf("span %q: %s = %q, want %q", a.span.Name, a.key, got, a.value)
		}
	}

	// No annotation value in any attribute.
	var review struct {
		Request struct {
			Object struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"object"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	values := review.Request.Object.Metadata.Annotations
	if len(values) == 0 {
		t.Fatal("the review carries no annotations to look for")
	}
	for _, s := range spans {
		for k, v := range s.Attrs {
			for ak, av := range values {
				if v == av || (len(av) >= 6 && strings.Contains(v, av)) {
					t.Errorf("span %q attribute %s = %q carries the value of annotation %s", s.Name, k, v, ak)
				}
			}
		}
	}

	// The log lines name the same trace and decision.
	admission, decision := logLine(t, frontdoorOut.String(), "admission"), logLine(t, deciderOut.String(), "decision")
	if admission["trace_id"] != apiServerTraceID || admission["span_id"] != root.SpanID || admission["decision_id"] != decisionID {
		t.Errorf("admission line trace_id %v span_id %v decision_id %v, want %s %s %s",
			admission["trace_id"], admission["span_id"], admission["decision_id"], apiServerTraceID, root.SpanID, decisionID)
	}
	if decision["trace_id"] != apiServerTraceID || decision["span_id"] != server.SpanID || decision["decision_id"] != decisionID {
		t.Errorf("decision line trace_id %v span_id %v decision_id %v, want %s %s %s",
			decision["trace_id"], decision["span_id"], decision["decision_id"], apiServerTraceID, server.SpanID, decisionID)
	}
}

// TestServeTracesBothComponentsInOneProcess: serve's front door and decider
// share one tracer provider; one admission is one trace of both.
func TestServeTracesBothComponentsInOneProcess(t *testing.T) {
	receiver := tracingtest.NewReceiver(t)
	// Cleanups run last-registered first: serve stops (and flushes) before
	// this check, which runs before the receiver closes.
	t.Cleanup(func() {
		names := map[string]bool{}
		traces := map[string]bool{}
		for _, s := range receiver.Spans() {
			if s.Service != "dynamic-config-serve" {
				t.Errorf("span %q from service %q, want dynamic-config-serve", s.Name, s.Service)
			}
			names[s.Name] = true
			traces[s.TraceID] = true
		}
		for _, want := range []string{"POST /mutate", handler.SpanDecide, decideMethod, service.SpanResolve, service.SpanPlan, handler.SpanPatch} {
			if !names[want] {
				t.Errorf("no %q span among %v", want, names)
			}
		}
		if len(traces) != 1 {
			t.Errorf("%d traces, want the one admission's", len(traces))
		}
	})
	addrs := foundationServe(t, "--otlp-endpoint", receiver.URL)
	if got := foundationPostReview(t, http.DefaultClient, addrs["frontdoor"]); got.Response.Patch == "" {
		t.Fatalf("want a patched answer, got %+v", got)
	}
}
