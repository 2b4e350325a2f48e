package service

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// TestDecisionViews checks what each DecisionView carries (06 §2.1): the
// plan view is the full decision without renders, gate rulings and
// env-policy results; unset is the full view.
func TestDecisionViews(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	decide := func(t *testing.T, purpose deciderv1.Purpose, view deciderv1.DecisionView) *deciderv1.Decision {
		t.Helper()
		resp, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{Purpose: purpose, Pod: consulPod(), View: view})
		if err != nil {
			t.Fatal(err)
		}
		d := resp.GetDecision()
		// The decision id (and its audit annotation) is the only thing
		// that differs between two calls.
		if d.GetAuditAnnotations()["decision-id"] != d.GetDecisionId() {
			t.Fatalf("audit annotation decision-id %q, decision id %q", d.GetAuditAnnotations()["decision-id"], d.GetDecisionId())
		}
		d.DecisionId = ""
		delete(d.AuditAnnotations, "decision-id")
		return d
	}
	full := decide(t, deciderv1.Purpose_PURPOSE_MUTATE, deciderv1.DecisionView_DECISION_VIEW_FULL)
	if full.GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || len(full.GetRenders()) == 0 || len(full.GetRenders()[0].GetValues()) == 0 {
		t.Fatalf("the full view of the consul pod should inject with provenance; got %v", full)
	}

	t.Run("an unset view is the full view", func(t *testing.T) {
		got := decide(t, deciderv1.Purpose_PURPOSE_MUTATE, deciderv1.DecisionView_DECISION_VIEW_UNSPECIFIED)
		if !proto.Equal(got, full) {
			t.Errorf("unset view differs from FULL:\n got %v\nwant %v", got, full)
		}
	})

	t.Run("the plan view is the full view without renders, gates and policy results", func(t *testing.T) {
		got := decide(t, deciderv1.Purpose_PURPOSE_MUTATE, deciderv1.DecisionView_DECISION_VIEW_PLAN)
		want := proto.Clone(full).(*deciderv1.Decision)
		want.Renders, want.Gates, want.EnvPolicyResults = nil, nil, nil
		if !proto.Equal(got, want) {
			t.Errorf("plan view:\n got %v\nwant %v", got, want)
		}
		if got.GetPlan() == nil || got.GetAuditAnnotations()["revision"] == "" {
			t.Errorf("the plan view must keep the plan and the audit annotations; got %v", got)
		}
		t.Logf("consul pod, empty installation: plan view %d bytes, full view %d bytes", proto.Size(got), proto.Size(full))
		if n, m := proto.Size(got), proto.Size(full); n*2 > m {
			t.Errorf("the plan view is %d bytes, the full view %d: expected it under half", n, m)
		}
	})

	t.Run("an unknown view is an invalid argument naming the accepted views", func(t *testing.T) {
		_, err := s.client.Decide(context.Background(), &deciderv1.DecisionRequest{
			Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: consulPod(), View: 9})
		st := status.Convert(err)
		if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "view 9 is not known") ||
			!strings.Contains(st.Message(), "DECISION_VIEW_PLAN") {
			t.Errorf("got %v %q, want InvalidArgument naming the view and the accepted ones", st.Code(), st.Message())
		}
	})
}
