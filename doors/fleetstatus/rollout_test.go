package fleetstatus

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestFleetStatusShowsTheRolloutOfEveryReplicaAndFollower(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	const candidate = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	canary := &deciderv1.RolloutState{
		CandidateRevision: candidate, Stage: deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY,
		Slice:  &deciderv1.RolloutSlice{Percent: 12.5, Namespaces: []string{"team-a"}, EveryCluster: true},
		Counts: &deciderv1.RolloutCounts{Same: 90, Changed: 9, NewlyRefused: 1},
	}
	halted := &deciderv1.RolloutState{
		CandidateRevision: candidate, Stage: deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY,
		Slice:  &deciderv1.RolloutSlice{Percent: 50, Clusters: []string{"west"}},
		Counts: &deciderv1.RolloutCounts{NewlyRefused: 1},
		Halted: &deciderv1.RolloutHalt{Workload: "west/shop/Deployment/web", At: timestamppb.New(now.Add(-3 * time.Minute))},
	}
	replicas := []Replica{
		{addr: "10.0.0.1:9090", resp: &deciderv1.GetInstallationResponse{Revision: "sha256:aaaa", Rollout: canary,
			Followers: []*deciderv1.FollowerState{{FollowerId: "west-0", Cluster: "west", Connected: true, Rollout: halted}}}},
		{addr: "10.0.0.2:9090", resp: &deciderv1.GetInstallationResponse{Revision: "sha256:aaaa",
			Rollout: &deciderv1.RolloutState{LastReload: &deciderv1.ReloadStatus{Problems: []string{"a", "b"}}}}},
		{addr: "10.0.0.3:9090", resp: &deciderv1.GetInstallationResponse{Revision: "sha256:aaaa"}},
	}
	var out bytes.Buffer
	WriteRollouts(&out, replicas, now)
	for _, want := range []string{
		"ROLLOUT ON",
		"10.0.0.1:9090 sha256:0123456789ab canary 12.5%, ns team-a 100 10 1 no",
		"10.0.0.2:9090 - none (the rollout document was rejected: 2 problems) - - - - -",
		"west-0 (follower, west) sha256:0123456789ab canary (halted: shadow) 50%, on west 1 1 1 yes, 3m0s ago by west/shop/Deployment/web",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "10.0.0.3") {
		t.Errorf("a replica without a rollout is listed:\n%s", out.String())
	}
	out.Reset()
	WriteRollouts(&out, replicas[2:], now)
	if out.Len() != 0 {
		t.Errorf("no rollout anywhere printed:\n%s", out.String())
	}
}
