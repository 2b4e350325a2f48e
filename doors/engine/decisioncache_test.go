package engine

// The decision cache against the decider (issue 43), on the cluster's code
// path in one process: the front door handler with a decision cache whose
// revisions a real WatchRevision stream announces, before the real decider.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/patch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/test/cases"
)

// cachedDoors are two front door handlers before the same in-process
// decider: one with a decision cache kept coherent by a real revision
// watch, one without (today's).
type cachedDoors struct {
	e              *Engine
	cache          *decisioncache.Cache
	cached, direct Door
}

func newCachedDoors(t testing.TB, inst *installation.Installation, cls *classes.Set) *cachedDoors {
	t.Helper()
	e, err := New(inst, cls)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	client := deciderv1.NewDeciderServiceClient(e.conn)
	c := decisioncache.New(decisioncache.Config{StaleIfError: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Watch(ctx, client, "", nil) }()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(10 * time.Second); !c.Usable(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the in-process decider never announced its revisions")
		}
	}
	return &cachedDoors{
		e:      e,
		cache:  c,
		cached: doorOf(handler.New(handler.Config{Decider: client, Timeout: Timeout, Cache: c, StaleIfError: time.Minute})),
		direct: doorOf(handler.New(handler.Config{Decider: client, Timeout: Timeout})),
	}
}

// doorOf is h as a Door.
func doorOf(h http.Handler) Door {
	return func(path string, body []byte) (*review.Response, *deciderv1.Decision, error) {
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			return nil, nil, fmt.Errorf("HTTP %d: %s", w.Code, w.Body.String())
		}
		resp, err := review.DecodeAnswer(w.Body.Bytes())
		return resp, nil, err
	}
}

var decisionIDs = regexp.MustCompile(`"(decision-id)":"[^"]*"`)

// unmarked is an answer's encoding with its uid, its decision ids and the
// cache's source mark taken out: what a cached answer shares with a fresh one.
func unmarked(a *review.Response) string {
	c := *a
	c.UID = ""
	if len(a.AuditAnnotations) > 0 {
		c.AuditAnnotations = map[string]string{}
		for k, v := range a.AuditAnnotations {
			if k != "decision-source" && k != "origin-decision-id" {
				c.AuditAnnotations[k] = v
			}
		}
	}
	return decisionIDs.ReplaceAllString(string(review.Encode(&c)), `"$1":"…"`)
}

// goldenCase is one case of the corpus (test/cases), read.
type goldenCase struct {
	name, namespace string
	pod             []byte
	inst            *installation.Installation
	cls             *classes.Set
	golden          []byte
}

func readGoldenCorpus(t testing.TB) []goldenCase {
	t.Helper()
	var out []goldenCase
	for _, c := range cases.All(t) {
		ns, pod := c.Pod(t)
		out = append(out, goldenCase{name: c.Name, namespace: ns, pod: pod, inst: c.Installation(t), cls: c.Classes(t), golden: c.Golden(t)})
	}
	if len(out) < 50 {
		t.Fatalf("the golden corpus holds %d cases", len(out))
	}
	return out
}

var podNamePattern = regexp.MustCompile(`"name":"([^"]*)"`)

// nameOf is the pod's metadata.name as the review's name ("" for a template).
func nameOf(pod []byte) string {
	if m := podNamePattern.FindSubmatch(pod); m != nil && bytes.Contains(pod[:bytes.Index(pod, m[0])+1], []byte(`"metadata"`)) {
		return string(m[1])
	}
	return ""
}

func TestEveryGoldenCaseAnsweredFromTheCacheIsTheDecidersAnswerButForTheMarks(t *testing.T) {
	for _, c := range readGoldenCorpus(t) {
		t.Run(c.name, func(t *testing.T) {
			doors := newCachedDoors(t, c.inst, c.cls)
			miss, err := AdmitThrough(doors.cached, c.inst.EnvPolicy, UID, c.pod, c.namespace, nameOf(c.pod))
			if err != nil {
				t.Fatal(err)
			}
			// The first answer, through the cache's miss, is today's: the golden review.
			if got := decisionIDs.ReplaceAllString(string(review.Encode(miss.Answer)), `"$1":"<decision-id>"`); !strings.Contains(string(c.golden), got) {
				t.Fatalf("the miss differs from the golden review\n got: %s\nwant: %s", got, c.golden)
			}
			hit, err := AdmitThrough(doors.cached, c.inst.EnvPolicy, "another-uid", c.pod, c.namespace, nameOf(c.pod))
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := AdmitThrough(doors.direct, c.inst.EnvPolicy, "a-third-uid", c.pod, c.namespace, nameOf(c.pod))
			if err != nil {
				t.Fatal(err)
			}
			if unmarked(hit.Answer) != unmarked(fresh.Answer) {
				t.Fatalf("the answer from the cache differs from the decider's beyond the marks\ncache:   %s\ndecider: %s",
					review.Encode(hit.Answer), review.Encode(fresh.Answer))
			}
			if hit.Answer.UID != "another-uid" {
				t.Errorf("the cached answer echoes uid %q", hit.Answer.UID)
			}
			decided := fresh.Answer.AuditAnnotations["decision-id"] != ""
			if source := hit.Answer.AuditAnnotations["decision-source"]; decided != (source == "cache") {
				t.Fatalf("decided by the decider: %v; the second answer's source: %q", decided, source)
			}
			if decided && (hit.Answer.AuditAnnotations["decision-id"] == miss.Answer.AuditAnnotations["decision-id"] ||
				hit.Answer.AuditAnnotations["origin-decision-id"] == "") {
				t.Fatalf("the cached answer's ids %v (the miss's %v)", hit.Answer.AuditAnnotations, miss.Answer.AuditAnnotations)
			}
		})
	}
}

// TestTheEntrySizeEstimateCoversTheMeasuredHeap holds the cache's byte
// bound to the heap: for every golden decision, what the cache counts for
// an entry (decisioncache.EntrySize) is at least what a decoded copy of the
// decision, its key and the patch the handler keeps beside it take on the
// heap.
func TestTheEntrySizeEstimateCoversTheMeasuredHeap(t *testing.T) {
	type sample struct {
		name   string
		wire   []byte
		keyLen int
		memo   int // bytes of the base64 patch the handler keeps beside an inject decision
		d      *deciderv1.Decision
	}
	var samples []sample
	for _, c := range readGoldenCorpus(t) {
		e, err := New(c.inst, c.cls)
		if err != nil {
			t.Fatal(err)
		}
		f := podFacts(t, c.pod, c.namespace)
		if f == nil {
			_ = e.Close()
			continue // a malformed pod: the front door refuses it without a decision
		}
		req := &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, View: deciderv1.DecisionView_DECISION_VIEW_PLAN, Pod: f}
		resp, err := deciderv1.NewDeciderServiceClient(e.conn).Decide(context.Background(), req)
		_ = e.Close()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		wire, err := resp.GetDecision().MarshalVT()
		if err != nil {
			t.Fatal(err)
		}
		// The entry's memo: the patch built from the plan, base64 (frontdoor/handler).
		var memo int
		if plan := resp.GetDecision().GetPlan(); plan != nil {
			target, err := patch.Target(c.pod)
			if err != nil {
				t.Fatal(err)
			}
			if p, err := patch.Build(plan, target); err == nil {
				memo = len(p.Base64())
			}
		}
		// The key is the request less the per-admission fields, plus the sorted maps.
		samples = append(samples, sample{c.name, wire, req.SizeVT() + 64, memo, resp.GetDecision()})
	}
	const copies = 1000
	var worst float64
	for _, s := range samples {
		held := make([]*deciderv1.Decision, copies)
		keys := make([]string, copies)
		memos := make([]string, copies)
		before := heapInUse()
		for i := range held {
			held[i] = &deciderv1.Decision{}
			if err := held[i].UnmarshalVT(s.wire); err != nil {
				t.Fatal(err)
			}
			keys[i] = string(make([]byte, s.keyLen))
			if s.memo > 0 {
				memos[i] = string(make([]byte, s.memo))
			}
		}
		perEntry := float64(int64(heapInUse())-int64(before)) / copies
		runtime.KeepAlive(held)
		runtime.KeepAlive(keys)
		runtime.KeepAlive(memos)
		estimate := float64(decisioncache.EntrySize(s.keyLen, s.d))
		worst = max(worst, perEntry/estimate)
		if perEntry > estimate {
			t.Errorf("%s: a decoded decision (%d bytes on the wire) and its key take %.0f bytes on the heap; the cache counts %.0f",
				s.name, len(s.wire), perEntry, estimate)
		}
	}
	t.Logf("heap ÷ estimate at most %.2f over the %d golden decisions", worst, len(samples))
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// podFacts are the facts the front door sends for pod on /mutate; nil for a
// pod that does not decode (the front door refuses it as malformed).
func podFacts(t testing.TB, pod []byte, namespace string) *deciderv1.PodFacts {
	t.Helper()
	body, err := PodReview(UID, pod, namespace, nameOf(pod))
	if err != nil {
		t.Fatal(err)
	}
	req, err := review.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := facts.Decode(req, facts.MutateKind(req), req.Object)
	if err != nil {
		return nil
	}
	return obj.Facts
}
