package rollout

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

// document reads a YAML rollout document as the loader hands it over.
func document(t *testing.T, text string) installation.Document {
	t.Helper()
	d := installation.Document{Path: filepath.Join(t.TempDir(), "rollout.yaml"), Present: true}
	root, problem := docparse.Named("rollout document", d.Path, []byte(text))
	if problem != "" {
		d.Problems = []string{problem}
	}
	d.Root = root
	return d
}

func build(t *testing.T, text string, environ ...string) (*Rollout, error) {
	t.Helper()
	return Build(document(t, text), environ, docparse.Text)
}

func mustBuild(t *testing.T, text string, environ ...string) *Rollout {
	t.Helper()
	r, err := build(t, text, environ...)
	if err != nil {
		t.Fatalf("unexpected problems:\n%v", err)
	}
	if r == nil {
		t.Fatal("no rollout")
	}
	return r
}

// active is the active installation of a document and environment.
func active(t *testing.T, text string, environ ...string) *installation.Installation {
	t.Helper()
	d := installation.Document{Path: filepath.Join(t.TempDir(), "installation.yaml"), Present: text != ""}
	if text != "" {
		root, problem := docparse.Document(d.Path, []byte(text))
		if problem != "" {
			t.Fatal(problem)
		}
		d.Root = root
	}
	inst, err := installation.Build(d, environ, docparse.Text)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestARolloutDocumentReadsItsCandidateStageSliceAndGuard(t *testing.T) {
	r := mustBuild(t, `
candidate:
  storeDefaults:
    consul: "endpoint=http://consul.infra.svc:8500!, watch-seconds=20"
  environment:
    DYNAMIC_CONFIG_AGENT_IMAGE: ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0
stage: canary
canary:
  percent: 5
  namespaces: [team-b, team-a-dev]
  clusters: [east]
guard:
  newRefusals: serve
`)
	if r.Stage != StageCanary || r.Guard != GuardServe {
		t.Errorf("stage %s, guard %s; want canary, serve", r.Stage, r.Guard)
	}
	if r.Slice.Buckets != 500 || r.Slice.Percent() != "5" {
		t.Errorf("slice buckets %d (%s%%), want 500 (5%%)", r.Slice.Buckets, r.Slice.Percent())
	}
	if !slices.Equal(r.Slice.Namespaces, []string{"team-a-dev", "team-b"}) || !slices.Equal(r.Slice.Clusters, []string{"east"}) {
		t.Errorf("namespaces %q clusters %q", r.Slice.Namespaces, r.Slice.Clusters)
	}
	if r.Candidate.AgentImage != "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0" {
		t.Errorf("candidate agent image %q: candidate.environment was not laid over the environment", r.Candidate.AgentImage)
	}
	if _, ok := r.Candidate.Stores["consul"]; !ok {
		t.Error("the candidate document's storeDefaults are not the candidate's")
	}
	if r.Candidate.Revision == installation.EmptyRevision || !strings.HasPrefix(r.ID, "sha256:") {
		t.Errorf("candidate revision %s, id %s", r.Candidate.Revision, r.ID)
	}
}

func TestTheCandidateIsTheActiveEnvironmentWithItsOwnLaidOver(t *testing.T) {
	env := []string{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30", "DYNAMIC_CONFIG_AGENT_IMAGE=registry.example/agent:v1"}
	r := mustBuild(t, `
candidate:
  environment:
    DYNAMIC_CONFIG_AGENT_IMAGE: registry.example/agent:v2
`, env...)
	if r.Candidate.AgentImage != "registry.example/agent:v2" {
		t.Errorf("agent image %q: the candidate's variable does not win over the active's", r.Candidate.AgentImage)
	}
	if v := r.Candidate.Fleet["watch-seconds"]; v.Text != "30" {
		t.Errorf("watch-seconds %q: the active's environment is not the candidate's", v.Text)
	}
	want := active(t, "", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30", "DYNAMIC_CONFIG_AGENT_IMAGE=registry.example/agent:v2")
	if r.Candidate.Revision != want.Revision {
		t.Errorf("candidate revision %s, want the revision of that environment alone %s (02 §10)", r.Candidate.Revision, want.Revision)
	}
}

func TestAnEmptyCandidateVariableUnsetsTheActivesForTheCandidate(t *testing.T) {
	r := mustBuild(t, "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_WATCH_SECONDS: null\n", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30")
	if v, set := r.Candidate.Fleet["watch-seconds"]; set {
		t.Errorf("watch-seconds is %q; an empty variable is unset (02 §3)", v.Text)
	}
}

func TestACandidateEqualToTheActiveHasItsRevisionAndIsInert(t *testing.T) {
	doc := "watchSeconds: 20\nsourceDeny:\n  '*': [vault]\n"
	env := []string{"DYNAMIC_CONFIG_AGENT_IMAGE=registry.example/agent:v1"}
	a := active(t, doc, env...)
	r := mustBuild(t, "candidate:\n  watchSeconds: 20\n  sourceDeny:\n    '*': [vault]\nstage: canary\ncanary: {percent: 100}\n", env...)
	if !r.Inert(a.Revision) {
		t.Errorf("candidate %s, active %s: the same installation is not inert", r.Candidate.Revision, a.Revision)
	}
	other := mustBuild(t, "candidate:\n  watchSeconds: 21\n", env...)
	if other.Inert(a.Revision) {
		t.Error("another candidate is inert")
	}
}

func TestNoRolloutIsADocumentWithNothingInIt(t *testing.T) {
	for _, text := range []string{"", "# nothing yet\n", "{}"} {
		r, err := build(t, text)
		if r != nil || err != nil {
			t.Errorf("%q: %v, %v; want no rollout and no problem", text, r, err)
		}
	}
	if r, err := Build(installation.Document{Path: "/nowhere/rollout.yaml"}, nil, docparse.Text); r != nil || err != nil {
		t.Errorf("an absent document: %v, %v; want no rollout", r, err)
	}
}

func TestEveryProblemOfARolloutDocumentIsReportedAtOnce(t *testing.T) {
	_, err := build(t, `
candidate:
  watchSeconds: soon
  environment:
    DYNAMIC_CONFIG_AGENT_IMAGE: [a, b]
    DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE: /other.yaml
    HOME: /root
stage: blue
canary:
  percent: 150
  namespaces: [team-a, Team_B, team-a]
  clusters: []
  region: eu
guard:
  newRefusals: maybe
strategy: fast
`)
	var p *Problems
	if !errors.As(err, &p) {
		t.Fatalf("err = %v, want *Problems", err)
	}
	want := []string{
		`stage is "blue": shadow or canary`,
		`canary.percent is "150": a number from 0 to 100 with at most two decimals (5, 0.5, 12.25)`,
		`canary.namespaces[1] is "Team_B": a namespace name (a lower-case DNS label)`,
		`canary.namespaces[2]: "team-a" is listed twice`,
		`canary.clusters is empty: leave it out for every cluster, or name the clusters that canary`,
		`canary.region: "region" is not a canary setting; the ones there are: percent, namespaces, clusters`,
		`guard.newRefusals is "maybe": fallback (answer with the active installation and halt) or serve (answer with the candidate's refusal)`,
		`strategy: "strategy" is not a rollout setting; the ones there are: candidate, stage, canary, guard`,
		`candidate.environment.DYNAMIC_CONFIG_AGENT_IMAGE is a list: a variable's value is text`,
		`candidate.environment.DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE: the candidate's document is candidate itself; DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE cannot name another`,
		`candidate.environment.HOME: "HOME" is not an installation variable; the ones there are: `,
		`candidate: watchSeconds [DYNAMIC_CONFIG_AGENT_WATCH_SECONDS]: `,
	}
	if len(p.Lines) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(p.Lines), len(want), strings.Join(p.Lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(p.Lines[i], w) {
			t.Errorf("problem %d = %q\nwant it to start %q", i, p.Lines[i], w)
		}
	}
	if !strings.HasPrefix(p.Error(), "dynamic-config: the rollout is invalid (12 problems; document ") {
		t.Errorf("report header: %s", strings.SplitN(p.Error(), "\n", 2)[0])
	}
	if got := p.Items[len(p.Items)-1].Path; got != "candidate.watchSeconds" {
		t.Errorf("the candidate's problem is at %q, want candidate.watchSeconds", got)
	}
}

func TestARolloutWithoutACandidateOrAnEmptyCanaryIsRefused(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"stage: shadow\n", "candidate is required: an installation document (the format of spec 02), with its environment under candidate.environment"},
		{"candidate: [a]\n", "candidate is a list: an installation document (a map of settings) is required"},
		{"candidate: {}\nstage: canary\n", "stage is canary and the slice is empty: set canary.percent above 0 or list canary.namespaces (or set stage: shadow)"},
		{"candidate: {}\nstage: canary\ncanary: {percent: 0, clusters: [east]}\n", "stage is canary and the slice is empty: set canary.percent above 0 or list canary.namespaces (or set stage: shadow)"},
		{"candidate: {}\ncanary: 5\n", "canary is a word: a map of percent, namespaces and clusters"},
		{"candidate: {}\nguard: fallback\n", "guard is a word: a map with newRefusals: fallback or serve"},
		{"candidate: {}\ncandidate: {}\n", `candidate: "candidate" appears twice`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := build(t, tt.doc)
			var p *Problems
			if !errors.As(err, &p) || !slices.Contains(p.Lines, tt.want) {
				t.Errorf("%q: %v\nwant the problem %q", tt.doc, err, tt.want)
			}
		})
	}
}

func TestAShadowNeedsNoSliceAndGuardsByDefault(t *testing.T) {
	r := mustBuild(t, "candidate: {}\n")
	if r.Stage != StageShadow || r.Guard != GuardFallback || r.Slice.Clusters != nil || r.Slice.Buckets != 0 {
		t.Errorf("defaults: stage %s guard %s slice %+v; want shadow, fallback, no slice, every cluster", r.Stage, r.Guard, r.Slice)
	}
}

func TestAPercentHasAtMostTwoDecimals(t *testing.T) {
	tests := []struct {
		text    string
		buckets int
		ok      bool
	}{
		{"0", 0, true}, {"5", 500, true}, {"0.5", 50, true}, {"12.25", 1225, true}, {"100", 10000, true}, {"100.00", 10000, true},
		{"0.01", 1, true}, {"100.01", 0, false}, {"101", 0, false}, {"-1", 0, false}, {"1e2", 0, false}, {"5%", 0, false},
		{".5", 0, false}, {"5.", 0, false}, {"0.125", 0, false}, {"", 0, false}, {"1000", 0, false},
	}
	for _, tt := range tests {
		b, ok := ParsePercent(tt.text)
		if b != tt.buckets || ok != tt.ok {
			t.Errorf("ParsePercent(%q) = %d, %v; want %d, %v", tt.text, b, ok, tt.buckets, tt.ok)
		}
		if back, _ := ParsePercent(PercentText(b)); ok && back != b {
			t.Errorf("PercentText(%d) = %q reads back as %d", b, PercentText(b), back)
		}
	}
}

func TestTheIDChangesWithEveryPartOfTheRollout(t *testing.T) {
	base := "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5, namespaces: [a], clusters: [east]}\n"
	ids := map[string]string{}
	for _, doc := range []string{
		base,
		"candidate: {watchSeconds: 21}\nstage: canary\ncanary: {percent: 5, namespaces: [a], clusters: [east]}\n",
		"candidate: {watchSeconds: 20}\nstage: shadow\ncanary: {percent: 5, namespaces: [a], clusters: [east]}\n",
		"candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 6, namespaces: [a], clusters: [east]}\n",
		"candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5, namespaces: [b], clusters: [east]}\n",
		"candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5, namespaces: [a]}\n",
		"candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5, namespaces: [a], clusters: [east]}\nguard: {newRefusals: serve}\n",
	} {
		id := mustBuild(t, doc).ID
		if other, dup := ids[id]; dup {
			t.Errorf("one id for\n%s\nand\n%s", other, doc)
		}
		ids[id] = doc
	}
	if mustBuild(t, base).ID != mustBuild(t, "# the same\n"+base).ID {
		t.Error("the same rollout has two ids")
	}
}
