package resolve

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// reuseCases are decisions of every kind the pooled state serves: injections
// (default and named renders, also-sections, agent env, classes off), skips
// and refusals at several steps, on four installations.
func reuseCases(t testing.TB) []struct {
	inst *installation.Installation
	f    func() *decision.Facts
} {
	insts := []*installation.Installation{installation.Empty(), load(t, exampleA), load(t, exampleB), load(t, gateDoc)}
	pods := []func() *decision.Facts{
		func() *decision.Facts { return consulPod() },
		func() *decision.Facts { return consulPod("agent-env", "RUST_LOG=debug, HTTPS_PROXY=x") },
		func() *decision.Facts {
			return consulPod("source.cache", "redis", "endpoint.cache", "redis://r:6379", "key.cache", "k",
				"path.cache", "/config/cache.json")
		},
		func() *decision.Facts { return consulPod("also.x", "/config/x.json", "also-section.x", "db") },
		func() *decision.Facts { return consulPod("watch-seconds", "soon") },
		func() *decision.Facts { return consulPod("no-such-knob", "1") },
		func() *decision.Facts { return facts("inject", "true") },
		func() *decision.Facts { return facts() },
		func() *decision.Facts { return facts("status", "injected", "class", "x") },
	}
	var out []struct {
		inst *installation.Installation
		f    func() *decision.Facts
	}
	for _, inst := range insts {
		for _, f := range pods {
			out = append(out, struct {
				inst *installation.Installation
				f    func() *decision.Facts
			}{inst, f})
		}
	}
	return out
}

func TestADecisionKeepsNothingOfTheStateThatIsReusedAfterIt(t *testing.T) {
	cases := reuseCases(t)
	type kept struct {
		d        decision.Decision
		snapshot []byte // d as it was when decided
	}
	var all []kept
	snapshot := func(d decision.Decision) []byte {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range cases {
		for _, d := range []decision.Decision{Decide(c.inst, nil, c.f()), DecidePlan(c.inst, nil, c.f())} {
			all = append(all, kept{d, snapshot(d)})
		}
	}
	// Every state those decisions used has served all the others since: a
	// decision that kept a pointer into its state, or a slice the state
	// appends to, has changed.
	for i, k := range all {
		if now := snapshot(k.d); !bytes.Equal(now, k.snapshot) {
			t.Errorf("decision %d changed after its state was reused:\nthen %s\nnow  %s", i, k.snapshot, now)
		}
	}
}

func TestConcurrentDecisionsOnPooledStatesAnswerAsOneAtATime(t *testing.T) {
	cases := reuseCases(t)
	want := make([]decision.Decision, len(cases))
	for i, c := range cases {
		want[i] = Decide(c.inst, nil, c.f())
	}
	var wg sync.WaitGroup
	errs := make(chan int, 8)
	for w := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := (w*31 + n) % len(cases)
				if got := Decide(cases[i].inst, nil, cases[i].f()); !reflect.DeepEqual(got, want[i]) {
					select {
					case errs <- i:
					default:
					}
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for i := range errs {
		t.Errorf("a concurrent decision of case %d differs from the one-at-a-time answer", i)
	}
}

func TestPlanIsTheSecondStageOnce(t *testing.T) {
	st := Resolve(installation.Empty(), nil, consulPod(), false)
	if !st.NeedsPlan() {
		t.Fatal("a complete consul pod needs its plan stage")
	}
	if d := st.Plan(); d.Outcome != decision.OutcomeInject || d.Plan == nil {
		t.Fatalf("the plan stage = %v with plan %v, want an injection", d.Outcome, d.Plan)
	}
	if st.NeedsPlan() {
		t.Error("after Plan the staged decision still holds its state, which went back to the pool")
	}
}
