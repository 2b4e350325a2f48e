package handler

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// failing is a decider that answers d until fail holds a code, then fails
// every call with it.
type failing struct {
	fake *fakeDecider
	fail atomic.Int32 // a codes.Code; OK answers
	n    atomic.Int64 // decision ids handed out
}

func newFailing(d func() *deciderv1.Decision) *failing {
	f := &failing{}
	f.fake = &fakeDecider{decide: func(context.Context, *deciderv1.DecisionRequest) (*deciderv1.DecisionResponse, error) {
		if code := codes.Code(f.fail.Load()); code != codes.OK {
			return nil, status.Error(code, "the decider is gone")
		}
		out := d()
		out.DecisionId = "d-" + string(rune('a'+f.n.Add(1)-1))
		out.AuditAnnotations["decision-id"] = out.DecisionId
		return &deciderv1.DecisionResponse{Decision: out}, nil
	}}
	return f
}

// testClock is a settable clock for the cache.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// cachedDoor is a handler with a decision cache in front of a failing decider.
type cachedDoor struct {
	h       http.Handler
	cache   *decisioncache.Cache
	client  deciderv1.DeciderServiceClient
	decider *failing
	clock   *testClock
	logs    *bytes.Buffer
	reg     *prometheus.Registry
}

func newCachedDoor(t *testing.T, d func() *deciderv1.Decision, onError string) *cachedDoor {
	t.Helper()
	f := newFailing(d)
	client, _ := serveDecider(t, f.fake)
	clk := &testClock{now: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	reg := prometheus.NewRegistry()
	m := metrics.NewFrontdoor(reg)
	c := decisioncache.New(decisioncache.Config{StaleIfError: 5 * time.Minute, Metrics: m, Now: clk.Now})
	c.Announce(decisioncache.Revisions{Installation: revision})
	logs := &bytes.Buffer{}
	h := New(Config{Decider: client, Cache: c, StaleIfError: 5 * time.Minute, OnDeciderError: onError, Timeout: 10 * time.Second,
		Metrics: m, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	return &cachedDoor{h: h, cache: c, client: client, decider: f, clock: clk, logs: logs, reg: reg}
}

// serve answers req on path, keeping only its admission line.
func (d *cachedDoor) serve(t *testing.T, path string, req review.Request) (*review.Response, string) {
	t.Helper()
	d.logs.Reset()
	return answer(t, d.h, path, requestReview(t, req))
}

// lastLine is the admission line of the latest review.
func (d *cachedDoor) lastLine(t *testing.T) map[string]any {
	t.Helper()
	var line map[string]any
	if err := json.Unmarshal(d.logs.Bytes(), &line); err != nil {
		t.Fatalf("log %q: %v", d.logs.String(), err)
	}
	return line
}

// withoutMarks is an answer with the decision id and the source marks taken out.
func withoutMarks(t *testing.T, body string) string {
	t.Helper()
	resp, err := review.DecodeAnswer([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"decision-id", "decision-source", "origin-decision-id"} {
		delete(resp.AuditAnnotations, k)
	}
	resp.UID = ""
	return string(review.Encode(resp))
}

func TestAHitIsTheDecidersAnswerWithItsOwnDecisionIDAndTheSourceMarked(t *testing.T) {
	door := newCachedDoor(t, injectDecision, OnErrorDeny)
	fresh, freshBody := door.serve(t, PathMutate, podRequest("uid-1", example1Pod))
	again := podRequest("uid-2", example1Pod)
	again.UserInfo.Username, again.DryRun = "bob", new(bool)
	hit, hitBody := door.serve(t, PathMutate, again)

	if n := door.decider.fake.calls(); n != 1 {
		t.Fatalf("the decider was asked %d times, want once", n)
	}
	if withoutMarks(t, hitBody) != withoutMarks(t, freshBody) {
		t.Fatalf("the hit's answer differs beyond the marks:\nfresh %s\nhit   %s", freshBody, hitBody)
	}
	if hit.UID != "uid-2" {
		t.Errorf("the hit answers uid %q", hit.UID)
	}
	id := hit.AuditAnnotations["decision-id"]
	if id == "" || id == fresh.AuditAnnotations["decision-id"] || hit.AuditAnnotations["decision-source"] != "cache" ||
		hit.AuditAnnotations["origin-decision-id"] != "d-a" {
		t.Fatalf("the hit's audit annotations %v (the fresh answer's %v)", hit.AuditAnnotations, fresh.AuditAnnotations)
	}
	if _, ok := fresh.AuditAnnotations["decision-source"]; ok {
		t.Errorf("the decider's own answer carries a source mark: %v", fresh.AuditAnnotations)
	}
	line := door.lastLine(t)
	if line["decision_id"] != id || line["decision_source"] != "cache" || line["origin_decision_id"] != "d-a" ||
		line["level"] != "INFO" || line["outcome"] != "patched" || line["rpc_ms"] != float64(0) {
		t.Fatalf("the hit's admission line %v", line)
	}
}

func TestTheValidatingPathIsCachedApartFromTheMutatingOne(t *testing.T) {
	door := newCachedDoor(t, func() *deciderv1.Decision {
		return &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_ALLOW, InstallationRevision: revision, AuditAnnotations: map[string]string{"revision": revision}}
	}, OnErrorDeny)
	for range 2 {
		resp, body := door.serve(t, PathValidate, podRequest("u", example1Pod))
		if !resp.Allowed {
			t.Fatalf("answer %s", body)
		}
	}
	if n := door.decider.fake.calls(); n != 1 {
		t.Fatalf("the decider was asked %d times for the same validation, want once", n)
	}
	if source := door.lastLine(t)["decision_source"]; source != "cache" {
		t.Fatalf("the second validation came from %v", source)
	}
}

func TestWhileTheDeciderIsUnreachableASeenTemplateIsAnsweredStaleAndANewOneDenied(t *testing.T) {
	door := newCachedDoor(t, injectDecision, OnErrorDeny)
	door.serve(t, PathMutate, podRequest("uid-1", example1Pod))
	door.decider.fail.Store(int32(codes.Unavailable))
	door.cache.Lost() // the revision watch ends with the decider
	door.clock.advance(2 * time.Minute)

	resp, body := door.serve(t, PathMutate, podRequest("uid-2", example1Pod))
	if !resp.Allowed || resp.PatchType != "JSONPatch" || resp.AuditAnnotations["decision-source"] != "stale-cache" ||
		resp.AuditAnnotations["origin-decision-id"] != "d-a" {
		t.Fatalf("a seen template while the decider is down: %s", body)
	}
	if len(resp.Warnings) != 3 || !strings.Contains(resp.Warnings[0], "the decider could not be reached (Unavailable); answered with its decision d-a") ||
		!strings.Contains(resp.Warnings[0], "2m0s ago") || !strings.Contains(resp.Warnings[0], "--decision-cache-stale-if-error=5m0s") {
		t.Fatalf("warnings %q", resp.Warnings)
	}
	line := door.lastLine(t)
	if line["level"] != "WARN" || line["decision_source"] != "stale-cache" || line["grpc_code"] != "Unavailable" || line["stale_age_s"] != float64(120) {
		t.Fatalf("the stale admission line %v", line)
	}

	other := strings.Replace(example1Pod, `"name":"app","annotations"`, `"name":"other","annotations"`, 1)
	if resp, body := door.serve(t, PathMutate, podRequest("uid-3", other)); resp.Allowed || resp.Status == nil || resp.Status.Code != 503 {
		t.Fatalf("a new template while the decider is down: %s", body)
	}

	door.clock.advance(3 * time.Minute) // 5 minutes after the last confirmation
	if resp, body := door.serve(t, PathMutate, podRequest("uid-4", example1Pod)); resp.Allowed || resp.Status == nil || resp.Status.Code != 503 {
		t.Fatalf("the seen template after the stale bound: %s", body)
	}
	if got := testutil.ToFloat64(lookupCounter(t, door.reg, "stale")); got != 1 {
		t.Errorf("stale lookups counted %v, want 1", got)
	}
}

func TestADeadlineExceededCallIsAnsweredStaleToo(t *testing.T) {
	door := newCachedDoor(t, injectDecision, OnErrorDeny)
	door.serve(t, PathMutate, podRequest("uid-1", example1Pod))
	door.cache.Lost()
	door.decider.fail.Store(int32(codes.DeadlineExceeded))
	if resp, body := door.serve(t, PathMutate, podRequest("uid-2", example1Pod)); !resp.Allowed || resp.AuditAnnotations["decision-source"] != "stale-cache" {
		t.Fatalf("answer %s", body)
	}
}

func TestARefusalAsCallerOrAnyOtherErrorIsNeverAnsweredStale(t *testing.T) {
	for _, code := range []codes.Code{codes.PermissionDenied, codes.Unauthenticated, codes.Internal, codes.InvalidArgument} {
		t.Run(code.String(), func(t *testing.T) {
			door := newCachedDoor(t, injectDecision, OnErrorAllow)
			door.serve(t, PathMutate, podRequest("uid-1", example1Pod))
			door.cache.Lost()
			door.decider.fail.Store(int32(code))
			resp, body := door.serve(t, PathMutate, podRequest("uid-2", example1Pod))
			if resp.AuditAnnotations["decision-source"] != "" || resp.PatchType != "" {
				t.Fatalf("a %s call was answered from the cache: %s", code, body)
			}
		})
	}
}

func TestWithoutACacheNothingIsRememberedAndNothingMarked(t *testing.T) {
	fake := answering(injectDecision())
	client, _ := serveDecider(t, fake)
	h := New(Config{Decider: client})
	for range 2 {
		resp, _ := answer(t, h, PathMutate, requestReview(t, podRequest("u", example1Pod)))
		if _, ok := resp.AuditAnnotations["decision-source"]; ok {
			t.Fatal("an answer without a cache is marked")
		}
	}
	if fake.calls() != 2 {
		t.Fatalf("the decider was asked %d times, want 2", fake.calls())
	}
}

func lookupCounter(t *testing.T, reg *prometheus.Registry, result string) prometheus.Collector {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "dynamic_config_decision_cache_lookups_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetLabel()[0].GetValue() == result {
				v := m.GetCounter().GetValue()
				return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "copy"}, func() float64 { return v })
			}
		}
	}
	t.Fatalf("no lookups series %s", result)
	return nil
}

func TestAHitBuildsThePatchForEachPodsOwnShape(t *testing.T) {
	door := newCachedDoor(t, injectDecision, OnErrorDeny)
	direct := New(Config{Decider: door.client, Timeout: 10 * time.Second})
	// The same facts, three shapes: no volumes member, an empty one, and again none.
	withVolumes := strings.Replace(example1Pod, `"spec":{`, `"spec":{"volumes":[],`, 1)
	for i, pod := range []string{example1Pod, withVolumes, example1Pod, withVolumes} {
		got, _ := door.serve(t, PathMutate, podRequest("u", pod))
		want, _ := answer(t, direct, PathMutate, requestReview(t, podRequest("u", pod)))
		if i > 0 && got.AuditAnnotations["decision-source"] != "cache" {
			t.Fatalf("admission %d was not a hit", i)
		}
		if got.Patch != want.Patch {
			t.Fatalf("admission %d: the cached answer's patch differs from the decider's for this pod's shape", i)
		}
		raw, err := base64.StdEncoding.DecodeString(got.Patch)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jsonpatch.Apply([]byte(pod), raw); err != nil {
			t.Fatalf("admission %d: the patch does not apply to its pod: %v", i, err)
		}
	}
}
