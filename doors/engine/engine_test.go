package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// consulPod asks for one consul agent; without a source the decider refuses it.
func consulPod(annotations map[string]string) []byte {
	pod, err := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "app", "annotations": annotations},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "registry.example/app:1"}}},
	})
	if err != nil {
		panic(err)
	}
	return pod
}

func newEngine(t *testing.T, environ ...string) *Engine {
	t.Helper()
	inst, err := installation.Build(installation.Document{}, environ, docparse.Text)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func TestAPodGoesThroughTheFrontDoorAsInTheCluster(t *testing.T) {
	asks := map[string]string{
		"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
		"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "myapp/config.json",
		"dynamic-config.rs/path": "/config/rendered.toml",
	}
	tests := []struct {
		name        string
		annotations map[string]string
		refused     bool
		patched     bool
		// decided: the front door asked the decider (a pod without an
		// annotation is allowed without an RPC, step A3)
		decided  bool
		skipText string
	}{
		{name: "a pod without an annotation is allowed unchanged without asking the decider",
			skipText: "no dynamic-config.rs/ annotation"},
		{name: "a pod that asks is patched with the decider's plan", annotations: asks, patched: true, decided: true},
		{name: "a pod that does not say inject is skipped by the decider",
			annotations: map[string]string{"dynamic-config.rs/source": "consul"}, decided: true, skipText: `inject is not "true"`},
		{name: "a pod with a malformed value is refused",
			annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
				"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "k", "dynamic-config.rs/path": "/config/a",
				"dynamic-config.rs/watch-seconds": "soon"},
			refused: true, decided: true},
	}
	e := newEngine(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := consulPod(tt.annotations)
			a, err := e.AdmitPod(pod, "default", "app")
			if err != nil {
				t.Fatal(err)
			}
			if a.Refused() != tt.refused {
				t.Fatalf("refused %v, want %v: %+v", a.Refused(), tt.refused, a.Answer.Status)
			}
			if a.Answer.UID != UID {
				t.Errorf("uid %q, want %q", a.Answer.UID, UID)
			}
			if (a.Mutate != nil) != tt.decided {
				t.Errorf("decision %v, want one: %v", a.Mutate, tt.decided)
			}
			switch {
			case tt.refused:
				if a.Mutated != nil {
					t.Error("a refused pod has a mutated form")
				}
			case tt.patched:
				if string(a.Patch) == "[]" || !strings.Contains(string(a.Mutated), "dynamic-config-agent") {
					t.Errorf("patch %s, mutated %s", a.Patch, a.Mutated)
				}
			default:
				if string(a.Patch) != "[]" || string(a.Mutated) != string(pod) {
					t.Errorf("patch %s, mutated %s", a.Patch, a.Mutated)
				}
				if got := SkipText(a.Mutate); got != tt.skipText {
					t.Errorf("skip text %q, want %q", got, tt.skipText)
				}
			}
		})
	}
}

func TestDecideAsksTheDeciderForTheEnginesCluster(t *testing.T) {
	e := newEngine(t).ForCluster("west")
	resp, err := e.Decide(context.Background(), deciderv1.Purpose_PURPOSE_MUTATE, &deciderv1.PodFacts{Namespace: "default", Operation: deciderv1.Operation_OPERATION_CREATE})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetDecision()
	if d.GetOutcome() != deciderv1.Outcome_OUTCOME_SKIP || d.GetCluster() != "west" || d.GetInstallationRevision() != e.Installation().Revision {
		t.Errorf("got outcome %v, cluster %q, revision %q", d.GetOutcome(), d.GetCluster(), d.GetInstallationRevision())
	}
}

func TestSkipReasonTextsNameTheTarget(t *testing.T) {
	tests := []struct {
		reason deciderv1.SkipReason
		target string
		want   string
		ok     bool
	}{
		{deciderv1.SkipReason_SKIP_REASON_NOT_TARGETED, "workloads", "the environment-variable policy does not target workloads", true},
		{deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED, "pods", "already injected", true},
		{deciderv1.SkipReason_SKIP_REASON_UNSPECIFIED, "pods", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.reason.String(), func(t *testing.T) {
			got, ok := SkipReasonText(tt.reason, tt.target)
			if got != tt.want || ok != tt.ok {
				t.Errorf("got %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// An Engine is safe for concurrent use: admissions of different pods at
// once each get their own answer and the decision behind it (never
// another admission's), while ForCluster swaps the cluster asked for. An
// engine that kept the last decision in one field fails it with or
// without -race.
func TestConcurrentAdmissionsEachGetTheirOwnDecision(t *testing.T) {
	e := newEngine(t)
	asks := func(path string) map[string]string {
		return map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
			"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "k", "dynamic-config.rs/path": path}
	}
	const workers, rounds = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				switch w % 3 {
				case 0: // refused: its decision must say REFUSE
					a, err := e.AdmitPod(consulPod(map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
						"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "k", "dynamic-config.rs/path": "/config/a",
						"dynamic-config.rs/watch-seconds": "soon"}), "default", "app")
					if err != nil || !a.Refused() || a.Mutate.GetOutcome() != deciderv1.Outcome_OUTCOME_REFUSE {
						errs <- fmt.Errorf("refused pod: err %v, decision %v", err, a.Mutate.GetOutcome())
					}
				case 1: // injected: its decision names its own path
					path := fmt.Sprintf("/config/w%d-r%d.json", w, r)
					a, err := e.AdmitPod(consulPod(asks(path)), "default", "app")
					if err != nil || a.Refused() || a.Mutate.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT ||
						!strings.Contains(string(a.Mutated), path) {
						errs <- fmt.Errorf("injected pod %s: err %v, decision %v", path, err, a.Mutate.GetOutcome())
					}
				default: // skipped without an RPC: no decision at all
					a, err := e.AdmitPod(consulPod(nil), "default", "app")
					if err != nil || a.Mutate != nil {
						errs <- fmt.Errorf("pod without annotations: err %v, decision %v", err, a.Mutate)
					}
					e.ForCluster([]string{"", "west"}[r%2])
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
