package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// candidateImage is the agent image the rollouts of these tests stage.
const candidateImage = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0"

// imageRollout is a rollout document whose candidate is the empty
// installation with another agent image, at stage.
func imageRollout(stage string) string {
	return "candidate:\n  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: " + candidateImage + "\nstage: " + stage + "\ncanary: {percent: 100}\n"
}

func writeRollout(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startWithRollout starts a leader decider over the empty installation and
// the rollout document at path, both re-read every 20 ms.
func startWithRollout(t *testing.T, path string) (*Decider, deciderv1.DeciderServiceClient) {
	t.Helper()
	load := loading(writeDocument(t, ""))
	load.ReloadInterval, load.Rollout = 20*time.Millisecond, path
	d, err := Start(t.Context(), Config{Installation: load, Addr: "127.0.0.1:0", Cluster: "east",
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Shutdown(time.Second) })
	return d, deciderv1.NewDeciderServiceClient(dial(t, d.Addr().String()))
}

func agentImageOf(t *testing.T, c deciderv1.DeciderServiceClient) string {
	t.Helper()
	resp, err := c.Decide(t.Context(), askingPod())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range resp.GetDecision().GetPlan().GetAgents() {
		return a.GetContainer().GetImage()
	}
	return ""
}

func rolloutOf(t *testing.T, c deciderv1.DeciderServiceClient) *deciderv1.RolloutState {
	t.Helper()
	resp, err := c.GetInstallation(t.Context(), &deciderv1.GetInstallationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetRollout()
}

func TestARolloutDocumentIsReadAtStartAndWatched(t *testing.T) {
	path := writeRollout(t, imageRollout("canary"))
	d, c := startWithRollout(t, path)
	if img := agentImageOf(t, c); img != candidateImage {
		t.Fatalf("a canary of every workload answered with agent image %q; want the candidate's %s", img, candidateImage)
	}
	if st := rolloutOf(t, c); st.GetStage() != deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY || st.GetCounts().GetChanged() != 1 ||
		!st.GetLastReload().GetOk() || st.GetDocumentPath() != path {
		t.Errorf("GetInstallation.rollout %v", st)
	}
	if d.Rollouts().Token() == "" {
		t.Error("a rollout that changes answers has an empty token")
	}

	replaceFile(t, path, imageRollout("shadow"))
	eventually(t, "the edited rollout in force", 5*time.Second, func() bool {
		return rolloutOf(t, c).GetStage() == deciderv1.RolloutStage_ROLLOUT_STAGE_SHADOW
	})
	if img := agentImageOf(t, c); strings.Contains(img, "v0.4.0") {
		t.Errorf("a shadow answered with the candidate's agent image %q", img)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rollout removed", 5*time.Second, func() bool { return rolloutOf(t, c).GetCandidateRevision() == "" })
	if d.Rollouts().Token() != "" {
		t.Errorf("token %q without a rollout", d.Rollouts().Token())
	}
}

func TestAnInvalidRolloutAtStartStartsWithoutOneAndIsTakenOnceFixed(t *testing.T) {
	path := writeRollout(t, "candidate: {watchSeconds: soon}\nstage: sideways\n")
	_, c := startWithRollout(t, path)
	st := rolloutOf(t, c)
	if st.GetCandidateRevision() != "" || st.GetLastReload().GetOk() || len(st.GetLastReload().GetProblems()) != 2 {
		t.Fatalf("GetInstallation.rollout %v; want no rollout and both problems in last_reload", st)
	}
	replaceFile(t, path, imageRollout("canary"))
	eventually(t, "the fixed rollout in force", 5*time.Second, func() bool { return rolloutOf(t, c).GetCandidateRevision() != "" })
}

func TestARolloutDocumentIsRefusedWhereNoInstallationDocumentIsRead(t *testing.T) {
	path := writeRollout(t, imageRollout("shadow"))
	_, err := Start(context.Background(), Config{Installation: Installation{Rollout: path}, Addr: "127.0.0.1:0",
		Follow: &Follow{Leader: "127.0.0.1:1", Dial: func() (grpc.ClientConnInterface, error) {
			return grpc.NewClient("127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
		}, ID: "west-0", Backoff: follower.DefaultBackoff}})
	if !errors.Is(err, errRolloutOnFollower) || !strings.Contains(err.Error(), "--follow excludes --rollout") {
		t.Errorf("a follower with a rollout document: %v", err)
	}
}

// Issue 41 item 1 through the daemon: a bad document written over a good
// one keeps the good rollout in force (its canary still answers) and lists
// every problem of the bad one at once in GetInstallation.rollout.last_reload;
// the next good document is taken.
func TestABadRolloutDocumentKeepsTheLastGoodOneAndListsEveryProblemAtOnce(t *testing.T) {
	path := writeRollout(t, imageRollout("canary"))
	_, c := startWithRollout(t, path)
	good := rolloutOf(t, c).GetCandidateRevision()
	if good == "" || agentImageOf(t, c) != candidateImage {
		t.Fatalf("the good rollout is not in force: %v", rolloutOf(t, c))
	}

	replaceFile(t, path, "candidate: {watchSeconds: soon, mode: often}\nstage: sideways\ncanary: {percent: 250}\nguard: {newRefusals: ignore}\n")
	eventually(t, "the bad document refused", 5*time.Second, func() bool { return !rolloutOf(t, c).GetLastReload().GetOk() })
	st := rolloutOf(t, c)
	if problems := st.GetLastReload().GetProblems(); len(problems) != 5 {
		t.Errorf("last_reload lists %d problems, want the bad document's 5 at once: %q", len(problems), problems)
	}
	if st.GetCandidateRevision() != good || st.GetStage() != deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY {
		t.Errorf("the rollout in force changed on a bad document: %v", st)
	}
	if img := agentImageOf(t, c); img != candidateImage {
		t.Errorf("after a bad document the canary answered with %q; want the last good rollout's %s", img, candidateImage)
	}

	replaceFile(t, path, imageRollout("shadow"))
	eventually(t, "the next good document in force", 5*time.Second, func() bool {
		st := rolloutOf(t, c)
		return st.GetLastReload().GetOk() && st.GetStage() == deciderv1.RolloutStage_ROLLOUT_STAGE_SHADOW
	})
}
