package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/timestamppb"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestFleetStatusListsFollowers(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	const rev, old = "sha256:aaaa", "sha256:bbbb"
	leaderAt := func(loaded time.Time, fs ...*deciderv1.FollowerState) replicaStatus {
		return replicaStatus{addr: "10.0.0.1:9090", resp: &deciderv1.GetInstallationResponse{Revision: rev, LoadedAt: timestamppb.New(loaded), Followers: fs}}
	}
	ts := func(ago time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(-ago)) }
	cases := []struct {
		name string
		r    replicaStatus
		code int
		want []string
	}{
		{"followers on the leader's revision agree", leaderAt(now.Add(-time.Hour),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: rev, LastAckAt: ts(42 * time.Second), LastSeenAt: ts(time.Hour)}),
			exitOK, []string{"west-0    west     yes        sha256:aaaa  42s ago   -", "followers in agreement: 1 followers"}},
		{"a connected follower on an old revision within the grace is not skew yet", leaderAt(now.Add(-30*time.Second),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: old, LastSeenAt: ts(time.Hour)}),
			exitOK, []string{"followers in agreement"}},
		{"a connected follower on an old revision beyond the grace is skew, named", leaderAt(now.Add(-2*time.Minute),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: old, LastSeenAt: ts(time.Hour)}),
			exitRefused, []string{"follower skew: west-0 on another revision than the leader for longer than --skew-grace 1m0s"}},
		{"a disconnected follower on an old revision is listed, not skew", leaderAt(now.Add(-time.Hour),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: false, AppliedRevision: old, LastSeenAt: ts(time.Hour)}),
			exitOK, []string{"west-0    west     no         sha256:bbbb  never"}},
		{"a follower whose last answer was a NACK fails the check, with its reason", leaderAt(now.Add(-time.Hour),
			&deciderv1.FollowerState{FollowerId: "west-0", Cluster: "west", Connected: true, AppliedRevision: rev, LastSeenAt: ts(time.Hour),
				LastNack: &deciderv1.FollowerNack{Revision: old, ErrorDetail: "revision mismatch: x\nmore", At: ts(5 * time.Second)}}),
			exitRefused, []string{"sha256:bbbb 5s ago: revision mismatch: x", "follower refused: west-0 answered the last snapshot with a NACK"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := printFollowers(&out, []replicaStatus{c.r}, time.Minute, now); code != c.code {
				t.Errorf("exit %d, want %d:\n%s", code, c.code, out.String())
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestAFollowersNackFailsTheLeadersFleetStatus: a follower that refuses a
// snapshot (here one that answers every snapshot with a NACK, as a follower
// does on a revision mismatch) makes fleet-status against the real leader
// exit 1 naming it.
func TestAFollowersNackFailsTheLeadersFleetStatus(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	doc := filepath.Join(t.TempDir(), "installation.yaml")
	replaceFile(t, doc, "watchSeconds: \"30\"\n")
	lead := leaderDecider(ctx, t, doc, "127.0.0.1:0")
	defer lead.shutdown(time.Second)
	conn, err := grpc.NewClient(lead.addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := deciderv1.NewInstallationSyncServiceClient(conn).SyncInstallation(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&deciderv1.SyncRequest{FollowerId: "west-refuser", Cluster: "west"}); err != nil {
		t.Fatal(err)
	}
	snap, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&deciderv1.SyncRequest{Answer: &deciderv1.SyncRequest_Nack{Nack: &deciderv1.SyncNack{
		Revision: snap.GetRevision(), Nonce: snap.GetNonce(), ErrorDetail: "revision mismatch: the canonical form is sha256:0, the snapshot says " + snap.GetRevision()}}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the NACK on the leader", 5*time.Second, func() bool {
		fs := lead.leader.Followers()
		return len(fs) == 1 && fs[0].GetLastNack() != nil
	})
	var stdout, stderr bytes.Buffer
	code := run([]string{"fleet-status", "--decider-plaintext", "--decider-target", "static:///" + lead.addr.String()}, strings.NewReader(""), &stdout, &stderr)
	if code != exitRefused || !strings.Contains(stdout.String(), "follower refused: west-refuser") || !strings.Contains(stdout.String(), "revision mismatch") {
		t.Fatalf("exit %d, want 1 naming west-refuser:\n%s%s", code, stdout.String(), stderr.String())
	}
	t.Logf("fleet-status:\n%s", stdout.String())
}
