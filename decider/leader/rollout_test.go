package leader_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/leader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func loadRollout(t *testing.T, text string) *rollout.Rollout {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := rolloutloader.Load(rolloutloader.Options{Path: path})
	if err != nil || r == nil {
		t.Fatalf("%v %v", r, err)
	}
	return r
}

func TestEverySnapshotCarriesTheRolloutAndARolloutChangeAloneIsASnapshot(t *testing.T) {
	shadow := loadRollout(t, "candidate: {watchSeconds: 20}\n")
	rollouts := rolloutloader.NewStore(shadow)
	f := startLeader(t, "", leader.Config{Rollouts: rollouts})
	rev := f.store.Current().Revision

	stream, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-0", Cluster: "west", KnownRevision: rev})
	first := recv(t, stream)
	if first.GetHeartbeat() || first.GetRollout().GetRolloutId() != shadow.ID || first.GetRevision() != rev {
		t.Fatalf("a follower on the revision without the rollout got %v; want a snapshot carrying it", first)
	}
	if r, err := rolloutloader.FromSnapshot(first.GetRollout()); err != nil || r.ID != shadow.ID {
		t.Fatalf("the rollout sent does not load back: %v %v", r, err)
	}
	if err := stream.Send(ack(first)); err != nil {
		t.Fatal(err)
	}

	canary := loadRollout(t, "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5}\n")
	rollouts.Swap(canary)
	f.leader.RolloutInForce(canary)
	second := recv(t, stream)
	if second.GetHeartbeat() || second.GetRevision() != rev || second.GetRollout().GetStage() != deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY {
		t.Fatalf("after the rollout changed: %v; want a snapshot of the same revision with the canary", second)
	}

	rollouts.Swap(nil)
	f.leader.RolloutInForce(nil)
	if third := recv(t, stream); third.GetHeartbeat() || third.GetRollout() != nil {
		t.Fatalf("after the rollout was removed: %v; want a snapshot without one", third)
	}

	// A follower that already serves both gets a heartbeat.
	rollouts.Swap(canary)
	again, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-1", Cluster: "west", KnownRevision: rev, KnownRollout: canary.ID})
	if m := recv(t, again); !m.GetHeartbeat() {
		t.Errorf("a follower serving the revision and the rollout got %v; want a heartbeat", m)
	}
}

func TestTheLeaderKeepsAFollowersRolloutReportWithoutItsWorkloads(t *testing.T) {
	f := startLeader(t, "", leader.Config{})
	stream, _ := f.open(t, "", &deciderv1.SyncRequest{FollowerId: "west-0", Cluster: "west"})
	recv(t, stream)
	rep := &deciderv1.RolloutState{
		CandidateRevision: "sha256:" + "ab",
		Counts:            &deciderv1.RolloutCounts{Same: 7, NewlyRefused: 1},
		Differing:         []*deciderv1.RolloutWorkload{{Workload: "west/shop/Deployment/web"}},
		Halted:            &deciderv1.RolloutHalt{Workload: "west/shop/Deployment/web"},
	}
	if err := stream.Send(&deciderv1.SyncRequest{RolloutReport: rep}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the report", func() bool { return state(f, "west-0").GetRollout() != nil })
	got := state(f, "west-0").GetRollout()
	if got.GetCounts().GetSame() != 7 || got.GetHalted().GetWorkload() != "west/shop/Deployment/web" || len(got.GetDiffering()) != 0 {
		t.Errorf("kept %v", got)
	}
	if err := stream.Send(&deciderv1.SyncRequest{RolloutReport: &deciderv1.RolloutState{}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the report cleared", func() bool { return state(f, "west-0").GetRollout() == nil })
}
