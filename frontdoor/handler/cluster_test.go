package handler

import (
	"testing"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestTheFrontDoorNamesItsCluster(t *testing.T) {
	skip := &deciderv1.Decision{Outcome: deciderv1.Outcome_OUTCOME_SKIP, SkipReason: deciderv1.SkipReason_SKIP_REASON_NOT_REQUESTED, InstallationRevision: revision}
	for _, tc := range []struct {
		name, cluster string
	}{
		{"a front door with --cluster-name sends it with every decision request", "west"},
		{"a front door without one sends no cluster (the decider's own)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := answering(skip)
			client, _ := serveDecider(t, fake)
			h := New(Config{Decider: client, Cluster: tc.cluster})
			for i, path := range []string{PathMutate, PathValidate} {
				answer(t, h, path, requestReview(t, podRequest("uid-1", example1Pod)))
				if fake.calls() != i+1 {
					t.Fatalf("%s: %d decider calls, want %d", path, fake.calls(), i+1)
				}
				if got := fake.last().GetCluster(); got != tc.cluster {
					t.Errorf("%s: request cluster %q, want %q", path, got, tc.cluster)
				}
			}
		})
	}
}
