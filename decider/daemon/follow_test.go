package daemon

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// startLeader starts a leader decider over an installation document,
// re-read every 20 ms.
func startLeader(ctx context.Context, t *testing.T, doc, addr string) *Decider {
	t.Helper()
	load := loading(doc)
	load.ReloadInterval = 20 * time.Millisecond
	d, err := Start(ctx, Config{Installation: load, Addr: addr, Cluster: "east", Reflection: true,
		Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startFollower starts a follower decider of leader, dialed plainly.
func startFollower(ctx context.Context, t *testing.T, leader, stateDir string, maxStale time.Duration, log io.Writer) *Decider {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	d, err := Start(ctx, Config{
		Addr:       "127.0.0.1:0",
		Cluster:    "west",
		Reflection: true,
		Follow: &Follow{
			Leader: leader,
			Dial: func() (grpc.ClientConnInterface, error) {
				return grpc.NewClient(leader, grpc.WithTransportCredentials(insecure.NewCredentials()))
			},
			ID: "west-decider-0", StateDir: stateDir, MaxStale: maxStale,
			Backoff: follower.Backoff{Initial: 50 * time.Millisecond, Factor: 1.6, Jitter: 0.2, Max: 200 * time.Millisecond},
		},
		Logger: slog.New(slog.NewJSONHandler(log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func replaceFile(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func eventually(t *testing.T, what string, within time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

func TestAFollowerDecidesWithTheLeadersInstallationAndSurvivesItsOutage(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	doc := filepath.Join(dir, "installation.yaml")
	replaceFile(t, doc, "watchSeconds: \"30\"\n")
	leaderCtx, stopLeader := context.WithCancel(ctx)
	lead := startLeader(leaderCtx, t, doc, "127.0.0.1:0")
	leaderAddr := lead.Addr().String()
	stateDir := filepath.Join(dir, "state")
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var log syncWriter
	fol := startFollower(ctx, t, leaderAddr, stateDir, 2*time.Second, &log)
	defer fol.Shutdown(time.Second)
	c := deciderv1.NewDeciderServiceClient(dial(t, fol.Addr().String()))
	callCtx, callCancel := context.WithTimeout(ctx, 60*time.Second)
	defer callCancel()

	eventually(t, "the first snapshot", 5*time.Second, func() bool { return fol.Store().Current() != nil })
	t.Run("the follower's decisions carry the leader's revision, its role and its id", func(t *testing.T) {
		resp, err := c.Decide(callCtx, askingPod())
		if err != nil {
			t.Fatal(err)
		}
		a := resp.GetDecision().GetAuditAnnotations()
		if resp.GetDecision().GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || a["revision"] != lead.Store().Current().Revision ||
			a["decider-role"] != "follower" || a["follower-id"] != "west-decider-0" || a["cluster"] != "west" {
			t.Fatalf("outcome %v, annotations %v; want INJECT under the leader's %s", resp.GetDecision().GetOutcome(), a, lead.Store().Current().Revision)
		}
		if !strings.Contains(log.String(), `"decider_role":"follower","follower_id":"west-decider-0"`) {
			t.Fatalf("no decision log line naming the follower:\n%s", log.String())
		}
	})
	t.Run("GetInstallation of the follower and of the leader show the roles", func(t *testing.T) {
		gi, err := c.GetInstallation(callCtx, &deciderv1.GetInstallationRequest{})
		if err != nil || gi.GetRole() != deciderv1.DeciderRole_DECIDER_ROLE_FOLLOWER || gi.GetFollower().GetLeader() != leaderAddr {
			t.Fatalf("follower: %v %v %v", err, gi.GetRole(), gi.GetFollower())
		}
		lc := deciderv1.NewDeciderServiceClient(dial(t, leaderAddr))
		eventually(t, "the ACK reaching the leader", 5*time.Second, func() bool {
			li, err := lc.GetInstallation(callCtx, &deciderv1.GetInstallationRequest{})
			return err == nil && li.GetRole() == deciderv1.DeciderRole_DECIDER_ROLE_LEADER && len(li.GetFollowers()) == 1 &&
				li.GetFollowers()[0].GetFollowerId() == "west-decider-0" && li.GetFollowers()[0].GetCluster() == "west" &&
				li.GetFollowers()[0].GetAppliedRevision() == li.GetRevision() && li.GetFollowers()[0].GetLastAckAt() != nil
		})
	})
	t.Run("an edit of the leader's installation reaches the follower's next decisions", func(t *testing.T) {
		before := lead.Store().Current().Revision
		replaceFile(t, doc, "watchSeconds: \"45\"\n")
		eventually(t, "the leader's reload", 5*time.Second, func() bool { return lead.Store().Current().Revision != before })
		took := eventually(t, "the edit", 5*time.Second, func() bool {
			resp, err := c.Decide(callCtx, askingPod())
			return err == nil && resp.GetDecision().GetAuditAnnotations()["revision"] == lead.Store().Current().Revision
		})
		t.Logf("edit → follower decisions: %s (leader reload interval 20ms)", took)
	})
	edited := lead.Store().Current().Revision
	stopLeader()
	stopping := time.Now()
	lead.Shutdown(10 * time.Second)
	if took := time.Since(stopping); took > 3*time.Second {
		t.Errorf("the leader took %s to stop with a follower connected: its stream held the graceful stop", took)
	}
	t.Run("with the leader down the follower keeps deciding under the last good revision", func(t *testing.T) {
		for range 20 {
			resp, err := c.Decide(callCtx, askingPod())
			if err != nil || resp.GetDecision().GetAuditAnnotations()["revision"] != edited {
				t.Fatalf("%v %v", err, resp.GetDecision().GetAuditAnnotations())
			}
		}
	})
	t.Run("past MaxStale the follower refuses with UNAVAILABLE, then recovers by itself when the leader returns", func(t *testing.T) {
		eventually(t, "staleness", 10*time.Second, func() bool {
			_, err := c.Decide(callCtx, askingPod())
			return status.Code(err) == codes.Unavailable
		})
		if fol.Ready() {
			t.Fatal("a stale follower is ready")
		}
		again := startLeader(ctx, t, doc, leaderAddr)
		defer again.Shutdown(time.Second)
		took := eventually(t, "recovery", 10*time.Second, func() bool {
			_, err := c.Decide(callCtx, askingPod())
			return err == nil
		})
		t.Logf("leader back → follower deciding again: %s", took)
	})
	t.Run("a follower restarted while the leader is down serves from its state directory", func(t *testing.T) {
		again := startFollower(ctx, t, freeLoopbackAddr(t), stateDir, 0, nil)
		defer again.Shutdown(time.Second)
		if cur := again.Store().Current(); cur == nil || cur.Revision != edited {
			t.Fatalf("restarted follower serves %v, want %s", cur, edited)
		}
		if !again.Ready() {
			t.Fatal("not ready from its state")
		}
	})
}

// TestOneEditReachesAHundredFollowers runs one real leader and 100 real
// followers (each with its own connection, as 100 processes would have) in
// this process and times one edit reaching every one of them.
func TestOneEditReachesAHundredFollowers(t *testing.T) {
	if testing.Short() {
		t.Skip("100 followers")
	}
	const n = 100
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	doc := filepath.Join(t.TempDir(), "installation.yaml")
	replaceFile(t, doc, "watchSeconds: \"30\"\n")
	lead := startLeader(ctx, t, doc, "127.0.0.1:0")
	defer lead.Shutdown(time.Second)

	heapBefore, cpuBefore := heapInUse(), cpuTime()
	stores := make([]*installationloader.Store, n)
	for i := range n {
		stores[i] = installationloader.NewStore(nil)
		f := follower.New(follower.Config{Conn: dial(t, lead.Addr().String()), ID: fmt.Sprintf("west-%d", i), Cluster: "west", Store: stores[i]})
		go f.Run(ctx)
	}
	all := func(rev string) func() bool {
		return func() bool {
			for _, s := range stores {
				if cur := s.Current(); cur == nil || cur.Revision != rev {
					return false
				}
			}
			return true
		}
	}
	connect := eventually(t, "100 followers on the first revision", 30*time.Second, all(lead.Store().Current().Revision))
	time.Sleep(200 * time.Millisecond) // the ACKs land
	heapConnected, cpuConnected := heapInUse(), cpuTime()

	old := lead.Store().Current().Revision
	start := time.Now()
	replaceFile(t, doc, "watchSeconds: \"45\"\n")
	eventually(t, "the leader's reload", 5*time.Second, func() bool { return lead.Store().Current().Revision != old })
	reloaded := time.Since(start)
	took := eventually(t, "the edit on all 100 followers", 10*time.Second, all(lead.Store().Current().Revision))
	cpuEdit := cpuTime()
	t.Logf("%d followers: connected and on the first revision in %s; one edit: leader reload %s, on every follower %s after the write",
		n, connect, reloaded, reloaded+took)
	t.Logf("process heap in use: %.1f MiB before, %.1f MiB with %d followers: %.1f KiB per follower (leader and follower sides together, an upper bound of the leader's)",
		mib(heapBefore), mib(heapConnected), n, float64(heapConnected-heapBefore)/1024/n)
	t.Logf("process CPU: %s to connect %d followers (%s per follower, both sides), %s for the edit to reach all (%s per follower)",
		cpuConnected-cpuBefore, n, (cpuConnected-cpuBefore)/n, cpuEdit-cpuConnected, (cpuEdit-cpuConnected)/n)
	ctxCall, cancelCall := context.WithTimeout(ctx, 5*time.Second)
	defer cancelCall()
	li, err := deciderv1.NewDeciderServiceClient(dial(t, lead.Addr().String())).GetInstallation(ctxCall, &deciderv1.GetInstallationRequest{})
	if err != nil || len(li.GetFollowers()) != n {
		t.Fatalf("the leader holds %d followers (%v), want %d", len(li.GetFollowers()), err, n)
	}
}

// syncWriter is a goroutine-safe log sink.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
