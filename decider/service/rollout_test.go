package service

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

const newImage = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0"

// buildRollout builds a rollout document over the empty environment.
func buildRollout(t testing.TB, text string) *rollout.Rollout {
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

// serveRollout serves the empty installation under the rollout of text
// ("" = none); follower makes the service a follower's (of cluster east).
func serveRollout(t *testing.T, text string, follower bool) (*served, *rolloutloader.Store) {
	t.Helper()
	store := installationloader.NewStore(installation.Empty())
	s := serve(t, store)
	var r *rollout.Rollout
	if text != "" {
		r = buildRollout(t, text)
	}
	rs := rolloutloader.NewStore(r)
	s.svc.WithRollouts(rolloutstate.New(rolloutstate.Config{Rollouts: rs, Installation: store,
		Logger: s.svc.logger, Metrics: s.svc.metrics.Rollout()}))
	if follower {
		s.svc.WithCluster("east").WithFollower(&fakeFollower{})
	}
	return s, rs
}

type fakeFollower struct{}

func (*fakeFollower) ID() string  { return "east-0" }
func (*fakeFollower) Stale() bool { return false }
func (*fakeFollower) State() *deciderv1.FollowerState {
	return &deciderv1.FollowerState{FollowerId: "east-0"}
}

// deploymentPod is canonical example 1's pod as a pod of Deployment name in
// namespace ns.
func deploymentPod(ns, name string) *deciderv1.PodFacts {
	p := consulPod()
	p.Namespace, p.Name, p.GenerateName = ns, "", name+"-5d8f9c7b6-"
	p.Labels = map[string]string{"pod-template-hash": "5d8f9c7b6"}
	p.Controller = &deciderv1.ControllerRef{Kind: "ReplicaSet", Name: name + "-5d8f9c7b6"}
	return p
}

func decide(t *testing.T, s *served, pod *deciderv1.PodFacts) *deciderv1.Decision {
	t.Helper()
	resp, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: pod, View: deciderv1.DecisionView_DECISION_VIEW_PLAN})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetDecision()
}

func rolloutState(t *testing.T, s *served) *deciderv1.RolloutState {
	t.Helper()
	resp, err := s.client.GetInstallation(context.Background(), &deciderv1.GetInstallationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetRollout()
}

// answer is a decision without its decision id, to compare answers.
func answer(d *deciderv1.Decision) *deciderv1.Decision {
	d = proto.Clone(d).(*deciderv1.Decision)
	d.DecisionId = ""
	delete(d.AuditAnnotations, annotation.AuditDecisionID)
	return d
}

func agentImage(d *deciderv1.Decision) string {
	for _, a := range d.GetPlan().GetAgents() {
		return a.GetContainer().GetImage()
	}
	return ""
}

func TestAShadowAnswersWithTheActiveAndCountsWhatTheCandidateWouldChange(t *testing.T) {
	plain, _ := serveRollout(t, "", false)
	s, _ := serveRollout(t, "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: "+newImage+"\n", false)
	want := answer(decide(t, plain, deploymentPod("shop", "web")))
	for range 3 {
		got := answer(decide(t, s, deploymentPod("shop", "web")))
		if !proto.Equal(got, want) {
			t.Fatalf("a shadow's answer is not the active's:\n got %v\nwant %v", got, want)
		}
	}
	st := rolloutState(t, s)
	if st.GetStage() != deciderv1.RolloutStage_ROLLOUT_STAGE_SHADOW || st.GetCounts().GetChanged() != 3 || st.GetCounts().GetSame() != 0 {
		t.Errorf("rollout state: stage %s counts %v", st.GetStage(), st.GetCounts())
	}
	if len(st.GetDiffering()) != 1 {
		t.Fatalf("differing %v, want the one workload", st.GetDiffering())
	}
	w := st.GetDiffering()[0]
	if w.GetWorkload() != "/shop/Deployment/web" || w.GetResult() != deciderv1.RolloutResult_ROLLOUT_RESULT_CHANGED ||
		!slices.Equal(w.GetPaths(), []string{"containers[dynamic-config-agent].image"}) || w.GetCount() != 3 {
		t.Errorf("differing workload %v", w)
	}
	logs := s.logs.String()
	if n := strings.Count(logs, `"msg":"rollout: a workload's decision differs under the candidate"`); n != 1 {
		t.Errorf("%d lines for the differing workload, want 1", n)
	}
	if !strings.Contains(logs, `"rollout":"shadow","rollout_result":"changed"`) {
		t.Errorf("the decision line does not say it was shadowed:\n%s", logs)
	}
	if strings.Contains(logs, "secret") || strings.Contains(fmt.Sprint(st), "secret") {
		t.Error("a value of the pod's annotations reached the log or the rollout state")
	}
}

func TestACanaryGivesTheSliceTheCandidatesAnswerForEveryPodOfAWorkload(t *testing.T) {
	s, _ := serveRollout(t, "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: "+newImage+"\nstage: canary\ncanary:\n  namespaces: [shop]\n", false)
	for range 5 {
		d := decide(t, s, deploymentPod("shop", "web"))
		if agentImage(d) != newImage || d.GetAuditAnnotations()[annotation.AuditRollout] != "canary" {
			t.Fatalf("a pod of the slice: image %s, audit %v", agentImage(d), d.GetAuditAnnotations())
		}
		if d.GetInstallationRevision() == installation.EmptyRevision || d.GetAuditAnnotations()[annotation.AuditRevision] != d.GetInstallationRevision() {
			t.Errorf("a canary answer names revision %s (audit %s); want the candidate's", d.GetInstallationRevision(), d.GetAuditAnnotations()[annotation.AuditRevision])
		}
		if stamp := d.GetPlan().GetRevisionAnnotation(); stamp.GetKey() != annotation.RevisionStampKey || stamp.GetValue() != annotation.Stamp(d.GetInstallationRevision()) {
			t.Errorf("a canary answer stamps %v; want the candidate's revision %s", stamp, d.GetInstallationRevision())
		}
	}
	d := decide(t, s, deploymentPod("other", "web"))
	if agentImage(d) == newImage || d.GetInstallationRevision() != installation.EmptyRevision {
		t.Errorf("a pod outside the slice got the candidate: image %s revision %s", agentImage(d), d.GetInstallationRevision())
	}
	if stamp := d.GetPlan().GetRevisionAnnotation().GetValue(); stamp != annotation.Stamp(installation.EmptyRevision) {
		t.Errorf("a pod outside the slice is stamped %q; want the active's", stamp)
	}
	if _, ok := d.GetAuditAnnotations()[annotation.AuditRollout]; ok {
		t.Errorf("a shadowed answer carries the rollout annotation: %v", d.GetAuditAnnotations())
	}
}

func TestTheGuardAnswersANewRefusalWithTheActiveAndHaltsTheRollout(t *testing.T) {
	s, _ := serveRollout(t, "candidate:\n  sourceDeny:\n    '*': [consul]\nstage: canary\ncanary:\n  percent: 100\n", false)
	want := answer(decide(t, func() *served { p, _ := serveRollout(t, "", false); return p }(), deploymentPod("shop", "web")))

	first := decide(t, s, deploymentPod("shop", "web"))
	if first.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || first.GetAuditAnnotations()[annotation.AuditRollout] != "fallback" {
		t.Fatalf("the first newly refused pod: outcome %s, audit %v; want the active's injection, marked fallback", first.GetOutcome(), first.GetAuditAnnotations())
	}
	got := answer(first)
	delete(got.AuditAnnotations, annotation.AuditRollout)
	if !proto.Equal(got, want) {
		t.Errorf("the guard's answer is not the active's:\n got %v\nwant %v", got, want)
	}
	st := rolloutState(t, s)
	if st.GetHalted().GetWorkload() != "/shop/Deployment/web" || !slices.Equal(st.GetHalted().GetRefusals(), []string{"refusals[gate.source-deny]"}) {
		t.Errorf("halted %v", st.GetHalted())
	}
	if !strings.Contains(s.logs.String(), `"level":"ERROR","msg":"rollout halted`) {
		t.Error("no ERROR line")
	}
	// Halted: a shadow, for every workload — even one the candidate would serve.
	next := decide(t, s, deploymentPod("shop", "api"))
	if next.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || next.GetAuditAnnotations()[annotation.AuditRollout] != "" {
		t.Errorf("after the halt: outcome %s, audit %v; want the active's answer, unmarked", next.GetOutcome(), next.GetAuditAnnotations())
	}
	if n := rolloutState(t, s).GetCounts().GetNewlyRefused(); n != 2 {
		t.Errorf("newly refused counted %d times, want 2", n)
	}
}

func TestGuardServeAnswersWithTheCandidatesRefusal(t *testing.T) {
	s, _ := serveRollout(t, "candidate:\n  sourceDeny:\n    '*': [consul]\nstage: canary\ncanary:\n  percent: 100\nguard:\n  newRefusals: serve\n", false)
	d := decide(t, s, deploymentPod("shop", "web"))
	if d.GetOutcome() != deciderv1.Outcome_OUTCOME_REFUSE || d.GetAuditAnnotations()[annotation.AuditRollout] != "canary" {
		t.Errorf("outcome %s audit %v; want the candidate's refusal", d.GetOutcome(), d.GetAuditAnnotations())
	}
	if rolloutState(t, s).GetHalted() != nil {
		t.Error("guard serve halted")
	}
}

func TestAnInertRolloutComparesNothingAndSaysSo(t *testing.T) {
	s, _ := serveRollout(t, "candidate: {}\nstage: canary\ncanary: {percent: 100}\n", false)
	d := decide(t, s, deploymentPod("shop", "web"))
	if d.GetAuditAnnotations()[annotation.AuditRollout] != "" || strings.Contains(s.logs.String(), `"rollout":`) {
		t.Errorf("an inert rollout acted: audit %v", d.GetAuditAnnotations())
	}
	st := rolloutState(t, s)
	if !st.GetInert() || st.GetCounts().GetSame() != 0 {
		t.Errorf("inert %v counts %v", st.GetInert(), st.GetCounts())
	}
}

func TestAFollowerCanariesWhenItsClusterIsListedOrNoneIs(t *testing.T) {
	for _, tt := range []struct {
		clusters string
		canary   bool
	}{{"", true}, {"\n  clusters: [west]", false}, {"\n  clusters: [east, west]", true}} {
		s, _ := serveRollout(t, "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: "+newImage+"\nstage: canary\ncanary:\n  percent: 100"+tt.clusters+"\n", true)
		d := decide(t, s, deploymentPod("shop", "web"))
		if got := agentImage(d) == newImage; got != tt.canary {
			t.Errorf("clusters %q: candidate answered %v, want %v", tt.clusters, got, tt.canary)
		}
		if w := rolloutState(t, s).GetDiffering(); len(w) != 1 || w[0].GetWorkload() != "east/shop/Deployment/web" {
			t.Errorf("clusters %q: differing %v; a follower's workloads are its cluster's", tt.clusters, w)
		}
	}
}

func TestNoRolloutStateIsReportedWithoutARollout(t *testing.T) {
	s, _ := serveRollout(t, "", false)
	if st := rolloutState(t, s); st != nil {
		t.Errorf("rollout %v without a rollout", st)
	}
}
