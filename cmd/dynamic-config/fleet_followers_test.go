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

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

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
	defer lead.Shutdown(time.Second)
	conn, err := grpc.NewClient(lead.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
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
		gi, err := deciderv1.NewDeciderServiceClient(conn).GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
		return err == nil && len(gi.GetFollowers()) == 1 && gi.GetFollowers()[0].GetLastNack() != nil
	})
	var stdout, stderr bytes.Buffer
	code := run([]string{"fleet-status", "--decider-plaintext", "--decider-target", "static:///" + lead.Addr().String()}, strings.NewReader(""), &stdout, &stderr)
	if code != exitRefused || !strings.Contains(stdout.String(), "follower refused: west-refuser") || !strings.Contains(stdout.String(), "revision mismatch") {
		t.Fatalf("exit %d, want 1 naming west-refuser:\n%s%s", code, stdout.String(), stderr.String())
	}
	t.Logf("fleet-status:\n%s", stdout.String())
}
