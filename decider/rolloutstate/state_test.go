package rolloutstate

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
)

func mustRollout(t *testing.T, text string) *rollout.Rollout {
	t.Helper()
	d := installation.Document{Path: filepath.Join(t.TempDir(), "rollout.yaml"), Present: true}
	root, problem := docparse.Named("rollout document", d.Path, []byte(text))
	if problem != "" {
		t.Fatal(problem)
	}
	d.Root = root
	r, err := rollout.Build(d, nil, docparse.Text)
	if err != nil || r == nil {
		t.Fatalf("%v %v", r, err)
	}
	return r
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type fixture struct {
	rollouts *rolloutloader.Store
	active   *installationloader.Store
	state    *State
	reg      *prometheus.Registry
	log      *syncBuffer
}

func newFixture(t *testing.T, r *rollout.Rollout) *fixture {
	t.Helper()
	f := &fixture{rollouts: rolloutloader.NewStore(r), active: installationloader.NewStore(installation.Empty()), reg: prometheus.NewRegistry(), log: &syncBuffer{}}
	m := metrics.NewDecider(f.reg)
	f.state = New(Config{Rollouts: f.rollouts, Installation: f.active, Logger: slog.New(slog.NewJSONHandler(f.log, nil)), Metrics: m.Rollout()})
	return f
}

// put swaps r in as Watch does.
func (f *fixture) put(r *rollout.Rollout) {
	f.rollouts.Swap(r)
	f.state.RolloutInForce(r)
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestTheTokenChangesWheneverTheRolloutCouldChangeAnAnswer(t *testing.T) {
	f := newFixture(t, nil)
	if tok := f.state.Token(); tok != "" {
		t.Errorf("no rollout: token %q, want empty", tok)
	}
	shadow := mustRollout(t, "candidate: {watchSeconds: 20}\n")
	canary := mustRollout(t, "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5}\n")
	other := mustRollout(t, "candidate: {watchSeconds: 21}\nstage: canary\ncanary: {percent: 5}\n")
	seen := map[string]string{"": "no rollout"}
	step := func(what string, do func()) {
		t.Helper()
		changes := f.state.Changes()
		do()
		tok := f.state.Token()
		if prev, dup := seen[tok]; dup {
			t.Errorf("%s: token %q, as after %s", what, tok, prev)
		}
		seen[tok] = what
		if !closed(changes) {
			t.Errorf("%s: Changes was not closed", what)
		}
	}
	step("the shadow", func() { f.put(shadow) })
	step("the canary", func() { f.put(canary) })
	_, tr := f.state.Current(installation.EmptyRevision)
	step("the halt", func() {
		tr.Halt(workload.Key{Cluster: "c", Namespace: "n", Kind: "Pod", Name: "p"}, rollout.Comparison{Result: rollout.NewlyRefused})
	})
	step("another candidate", func() { f.put(other) })
	if _, tr := f.state.Current(installation.EmptyRevision); tr.Halted() {
		t.Error("another candidate revision is still halted")
	}

	changes := f.state.Changes()
	f.put(other)
	if closed(changes) {
		t.Error("putting the same rollout in force again announced a change")
	}
	f.active.Swap(other.Candidate)
	f.state.InForce(other.Candidate)
	if tok := f.state.Token(); tok != "" {
		t.Errorf("a candidate that is the active installation: token %q, want empty (inert)", tok)
	}
	if !closed(changes) {
		t.Error("the rollout turning inert was not announced")
	}
	if !strings.Contains(f.log.String(), `"msg":"rollout inert: its candidate is the active installation; nothing is compared"`) {
		t.Errorf("an inert rollout does not say so:\n%s", f.log.String())
	}
	if r, _ := f.state.Current(other.Candidate.Revision); r != nil {
		t.Error("an inert rollout acts on decisions")
	}
	f.put(nil)
	if tok := f.state.Token(); tok != "" {
		t.Errorf("rollout removed: token %q", tok)
	}
}

func TestAHaltOutlivesAStageChangeButNotTheCandidate(t *testing.T) {
	canary := mustRollout(t, "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5}\n")
	f := newFixture(t, canary)
	_, tr := f.state.Current("")
	if !tr.Halt(workload.Key{Namespace: "n", Kind: "Deployment", Name: "web"}, rollout.Comparison{Result: rollout.NewlyRefused, Paths: []string{"refusals[gate.source-deny]"}}) {
		t.Fatal("the first halt did not halt")
	}
	if tr.Halt(workload.Key{Namespace: "n", Kind: "Deployment", Name: "api"}, rollout.Comparison{}) {
		t.Error("a second halt halted again")
	}
	f.put(mustRollout(t, "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 50}\n"))
	if _, tr := f.state.Current(""); !tr.Halted() {
		t.Error("a wider slice for the same candidate un-halted the rollout")
	}
	rev := canary.Candidate.Revision
	if v := gauge(t, f.reg, "dynamic_config_rollout_halted", rev); v != 1 {
		t.Errorf("halted gauge %v", v)
	}
	st, _ := f.state.Status()
	if st.Report.Halt == nil || st.Report.Halt.Workload != "/n/Deployment/web" {
		t.Errorf("halt %+v, want the workload that tripped it", st.Report.Halt)
	}
	if !strings.Contains(f.log.String(), `"level":"ERROR","msg":"rollout halted`) || !strings.Contains(f.log.String(), `"workload":"/n/Deployment/web"`) {
		t.Errorf("no ERROR line naming the workload:\n%s", f.log.String())
	}
	f.put(mustRollout(t, "candidate: {watchSeconds: 21}\nstage: canary\ncanary: {percent: 50}\n"))
	if _, tr := f.state.Current(""); tr.Halted() {
		t.Error("a new candidate revision is halted")
	}
	if n := testutil.CollectAndCount(f.reg, "dynamic_config_rollout_halted"); n != 1 {
		t.Errorf("%d halted series, want the new candidate's only", n)
	}
}

func TestATrackerCountsEveryResultAndListsTheLatestDifferingWorkloads(t *testing.T) {
	f := newFixture(t, mustRollout(t, "candidate: {watchSeconds: 20}\n"))
	now := time.Unix(1_700_000_000, 0)
	f.state.cfg.Now = func() time.Time { now = now.Add(time.Second); return now }
	_, tr := f.state.Current("")
	web := workload.Key{Cluster: "east", Namespace: "shop", Kind: "Deployment", Name: "web"}
	image := rollout.Comparison{Result: rollout.Changed, Paths: []string{"containers[dynamic-config-agent].image"}}
	for range 20 {
		tr.Record(web, "mutate", image, rollout.RouteShadow)
		tr.Record(web, "validate", rollout.Comparison{}, rollout.RouteShadow)
	}
	for i := range MaxDiffering + 10 {
		if i%100 == 0 { // web stays among the recent
			tr.Record(web, "mutate", image, rollout.RouteShadow)
		}
		tr.Record(workload.Key{Cluster: "east", Namespace: "shop", Kind: "Deployment", Name: fmt.Sprint("app-", i)},
			"mutate", rollout.Comparison{Result: rollout.NewlyInjected, Paths: []string{"containers[dynamic-config-agent]"}}, rollout.RouteShadow)
	}
	tr.Record(web, "mutate", image, rollout.RouteShadow) // seen again: the latest
	rep := tr.Report()
	if rep.Counts[rollout.Same] != 20 || rep.Counts[rollout.Changed] != 24 || rep.Counts[rollout.NewlyInjected] != MaxDiffering+10 {
		t.Errorf("counts %v", rep.Counts)
	}
	if len(rep.Differing) != MaxDiffering {
		t.Fatalf("%d differing workloads listed, want %d", len(rep.Differing), MaxDiffering)
	}
	if w := rep.Differing[0]; w.Key != "east/shop/Deployment/web" || w.Count != 24 || w.Result != rollout.Changed || !w.LastSeen.After(w.FirstSeen) {
		t.Errorf("the latest differing workload: %+v", w)
	}
	for _, w := range rep.Differing {
		if w.Key == "east/shop/Deployment/app-0" {
			t.Error("the least recently seen workload is still listed")
		}
	}
	rev := tr.candidate
	if v := gauge(t, f.reg, "dynamic_config_rollout_decisions_total", rev, "changed"); v != 24 {
		t.Errorf("dynamic_config_rollout_decisions_total{result=changed} = %v", v)
	}
	if lines := strings.Count(f.log.String(), `"workload":"east/shop/Deployment/web"`); lines != 1 {
		t.Errorf("%d log lines for one differing workload, want 1:\n%s", lines, f.log.String())
	}
}

// gauge is the value of the series of name whose label values are values
// (in label order); it fails when there is none.
func gauge(t *testing.T, reg *prometheus.Registry, name string, values ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != name {
			continue
		}
	metric:
		for _, m := range fam.GetMetric() {
			if len(m.GetLabel()) != len(values) {
				continue
			}
			for i, l := range m.GetLabel() {
				if l.GetValue() != values[i] {
					continue metric
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s%q", name, values)
	return 0
}

func TestTheWiresEnumsAreNamedAsTheDocumentNamesThem(t *testing.T) {
	for _, st := range []rollout.Stage{rollout.StageShadow, rollout.StageCanary} {
		if got := StageName(StageToProto(st)); got != st.String() {
			t.Errorf("stage %s: %q", st, got)
		}
	}
	for _, g := range []rollout.Guard{rollout.GuardFallback, rollout.GuardServe} {
		if got := GuardName(GuardToProto(g)); got != g.String() {
			t.Errorf("guard %s: %q", g, got)
		}
	}
	for _, r := range rollout.Results {
		if got := ResultName(ResultToProto(r)); got != r.String() {
			t.Errorf("result %s: %q", r, got)
		}
	}
	if StageName(0) != "" || GuardName(0) != "" || ResultName(0) != "" {
		t.Error("an unspecified value has a name")
	}
}
