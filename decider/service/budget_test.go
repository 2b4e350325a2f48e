package service

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Issue 17: an answer above the message budget is a DynamicConfigMalformed
// refusal of the pod, never an error the front door would read as an outage.
func TestAnAnswerAboveTheMessageBudgetIsAMalformedRefusal(t *testing.T) {
	s := serve(t, installationloader.NewStore(installation.Empty()))
	req := &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: consulPod()}
	req.Pod.Annotations["dynamic-config.rs/key"] = strings.Repeat("k", 4096)
	first, err := s.svc.Decide(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	size := proto.Size(first) // every answer to this pod has this size (a decision id is always 36 characters)

	t.Run("an answer of exactly the budget is sent as decided", func(t *testing.T) {
		s.svc.LimitAnswers(size)
		resp, err := s.svc.Decide(context.Background(), req)
		if err != nil || resp.GetDecision().GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || proto.Size(resp) != size {
			t.Fatalf("Decide = %v (%d bytes), %v; want the injection of %d bytes", resp.GetDecision().GetOutcome(), proto.Size(resp), err, size)
		}
	})
	t.Run("an answer one byte above the budget is refused as malformed, keeping its id and revision", func(t *testing.T) {
		s.svc.LimitAnswers(size - 1)
		resp, err := s.svc.Decide(context.Background(), req)
		if err != nil {
			t.Fatalf("Decide failed instead of refusing: %v", err)
		}
		d := resp.GetDecision()
		if d.GetOutcome() != deciderv1.Outcome_OUTCOME_REFUSE || len(d.GetRefusals()) != 1 || d.GetPlan() != nil {
			t.Fatalf("decision %v", d)
		}
		r := d.GetRefusals()[0]
		if r.GetReason() != deciderv1.RefusalReason_REFUSAL_REASON_MALFORMED || r.GetReasonSlug() != "DynamicConfigMalformed" ||
			r.GetHttpCode() != 400 || r.GetCheck() != CheckAnswerSize {
			t.Errorf("refusal %v", r)
		}
		if want := strconv.Itoa(size) + " bytes, above the " + strconv.Itoa(size-1) + "-byte message budget"; !strings.Contains(r.GetMessage(), want) {
			t.Errorf("message %q does not say %q", r.GetMessage(), want)
		}
		if d.GetDecisionId() == "" || d.GetAuditAnnotations()["decision-id"] != d.GetDecisionId() ||
			d.GetAuditAnnotations()["revision"] != installation.EmptyRevision {
			t.Errorf("the refusal lost its decision id or revision: %v", d)
		}
		if proto.Size(resp) > size-1 {
			t.Errorf("the refusal itself is %d bytes", proto.Size(resp))
		}
	})
}
