package follower_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/leader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
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

// realLeader serves a leader.Leader holding active and the rollout of
// rollouts over TCP.
func realLeader(t *testing.T, active *installation.Installation, rollouts *rolloutloader.Store) (*leader.Leader, string) {
	t.Helper()
	store := installationloader.NewStore(active)
	l := leader.New(store, leader.Config{Cluster: "east", Rollouts: rollouts, Heartbeat: 50 * time.Millisecond})
	srv := grpc.NewServer()
	deciderv1.RegisterInstallationSyncServiceServer(srv, l)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return l, lis.Addr().String()
}

// rolloutFollower is a follower of addr with its rollout store and state.
type rolloutFollower struct {
	f        *follower.Follower
	store    *installationloader.Store
	rollouts *rolloutloader.Store
	state    *rolloutstate.State
}

func startRolloutFollower(t *testing.T, addr, dir string, run bool) *rolloutFollower {
	t.Helper()
	rf := &rolloutFollower{store: installationloader.NewStore(nil), rollouts: rolloutloader.NewStore(nil)}
	rf.state = rolloutstate.New(rolloutstate.Config{Rollouts: rf.rollouts, Installation: rf.store})
	rf.f = follower.New(follower.Config{Conn: dial(t, addr), Leader: addr, ID: "west-0", Cluster: "west", StateDir: dir,
		Store: rf.store, Rollouts: rf.rollouts, RolloutState: rf.state, ReportInterval: 20 * time.Millisecond})
	rf.f.Start()
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { rf.f.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return rf
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAFollowerMirrorsTheLeadersRolloutAndReportsItsHalt(t *testing.T) {
	active := inst(t, 30)
	shadow := loadRollout(t, "candidate:\n  sourceDeny:\n    '*': [consul]\n")
	rollouts := rolloutloader.NewStore(shadow)
	l, addr := realLeader(t, active, rollouts)
	dir := t.TempDir()
	rf := startRolloutFollower(t, addr, dir, true)

	waitUntil(t, "the follower's rollout", func() bool { r := rf.rollouts.Current(); return r != nil && r.ID == shadow.ID })
	if rf.store.Current().Revision != active.Revision {
		t.Fatal("the installation came without the rollout")
	}
	served := rf.store.Current()

	// The rollout alone changes: a snapshot of the same revision carries it.
	canary := loadRollout(t, "candidate:\n  sourceDeny:\n    '*': [consul]\nstage: canary\ncanary: {percent: 100, clusters: [west]}\n")
	rollouts.Swap(canary)
	l.RolloutInForce(canary)
	waitUntil(t, "the canary", func() bool { r := rf.rollouts.Current(); return r != nil && r.ID == canary.ID })
	if rf.store.Current() != served {
		t.Error("a snapshot of the same revision put the installation in force again")
	}

	// The follower's halt reaches the leader.
	_, tr := rf.state.Current(active.Revision)
	tr.Record(workload.Key{Cluster: "west", Namespace: "shop", Kind: "Deployment", Name: "web"}, "mutate", rollout.Comparison{Result: rollout.NewlyRefused}, rollout.RouteFallback)
	tr.Halt(workload.Key{Cluster: "west", Namespace: "shop", Kind: "Deployment", Name: "web"}, rollout.Comparison{Result: rollout.NewlyRefused, Paths: []string{"refusals[gate.source-deny]"}})
	waitUntil(t, "the leader to hear of the halt", func() bool {
		fs := l.Followers()
		return len(fs) == 1 && fs[0].GetRollout().GetHalted().GetWorkload() == "west/shop/Deployment/web"
	})
	rep := l.Followers()[0].GetRollout()
	if rep.GetCandidateRevision() != canary.Candidate.Revision || rep.GetCounts().GetNewlyRefused() != 1 || rep.GetStage() != deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY {
		t.Errorf("the leader's view of the follower's rollout: %v", rep)
	}
	if own := rf.f.State().GetRollout(); own.GetHalted() == nil || len(own.GetDiffering()) != 0 {
		t.Errorf("the follower's own state: %v", own)
	}

	// Removed on the leader: removed on the follower, and the report cleared.
	rollouts.Swap(nil)
	l.RolloutInForce(nil)
	waitUntil(t, "the rollout removed", func() bool { return rf.rollouts.Current() == nil })
	waitUntil(t, "the leader to hear of it", func() bool { return l.Followers()[0].GetRollout() == nil })
}

func TestAFollowerRestartsWithTheRolloutOfItsStateDirectory(t *testing.T) {
	active := inst(t, 30)
	canary := loadRollout(t, "candidate: {watchSeconds: 20}\nstage: canary\ncanary: {percent: 5, clusters: [west]}\n")
	_, addr := realLeader(t, active, rolloutloader.NewStore(canary))
	dir := t.TempDir()
	first := startRolloutFollower(t, addr, dir, true)
	waitUntil(t, "the rollout", func() bool { return first.rollouts.Current() != nil })

	again := startRolloutFollower(t, "127.0.0.1:1", dir, false) // the leader unreachable: the state file
	if r := again.rollouts.Current(); r == nil || r.ID != canary.ID {
		t.Errorf("restarted with rollout %v, want %s", r, canary.ID)
	}
	if again.store.Current() == nil || again.store.Current().Revision != active.Revision {
		t.Error("restarted without the installation")
	}
}

func TestAFollowerRefusesASnapshotWhoseRolloutDoesNotValidateAsAWhole(t *testing.T) {
	l, addr := startFake(t)
	rf := startRolloutFollower(t, addr, "", true)
	if m := next(t, l); m.GetKnownRollout() != "" {
		t.Errorf("first message names rollout %q", m.GetKnownRollout())
	}
	active := inst(t, 30)
	bad := rolloutloader.Snapshot(loadRollout(t, "candidate: {watchSeconds: 20}\n"))
	bad.CandidateCanonical = `{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"soon"}`
	msg := snapshot(active, "1")
	msg.Rollout = bad
	l.send <- msg
	m := next(t, l)
	if d := m.GetNack().GetErrorDetail(); m.GetNack() == nil || !strings.HasPrefix(d, "rollout: candidate: watchSeconds [DYNAMIC_CONFIG_AGENT_WATCH_SECONDS]") || strings.Contains(d, "soon") {
		t.Fatalf("answer %v, want a NACK naming the rollout's problem, its value withheld", m)
	}
	if rf.store.Current() != nil || rf.rollouts.Current() != nil {
		t.Error("a refused snapshot's installation or rollout was put in force")
	}
	if lr := rf.rollouts.LastReload(); lr == nil || lr.OK || len(lr.Problems) != 1 || !strings.HasPrefix(lr.Problems[0], "candidate: ") {
		t.Errorf("the rollout's last reload: %+v", lr)
	}
}
