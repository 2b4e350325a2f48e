package main

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

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func TestFollowRefusals(t *testing.T) {
	doc := foundationEmptyFile(t)
	cases := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"--follow with an installation document is a usage error naming the flag", []string{"--plaintext", "--follow", "127.0.0.1:1", "--installation", doc},
			nil, "decider: --follow excludes --installation: a follower takes its installation from its leader 127.0.0.1:1"},
		{"--follow with an installation variable is a usage error naming the variable", []string{"--plaintext", "--follow", "127.0.0.1:1"},
			[]string{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS", "30"}, "decider: --follow excludes the installation variable DYNAMIC_CONFIG_AGENT_WATCH_SECONDS"},
		{"--follow with the document locator variable is a usage error naming it", []string{"--plaintext", "--follow", "127.0.0.1:1"},
			[]string{"DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE", doc}, "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE"},
		{"a follower flag without --follow is a usage error", []string{"--plaintext", "--max-stale", "10s"},
			nil, "decider: --max-stale is a follower flag: add --follow LEADER"},
		{"a follower id that is not a DNS name is refused", []string{"--plaintext", "--follow", "127.0.0.1:1", "--follower-id", "West_1"},
			nil, `decider: --follower-id is "West_1": a lower-case DNS name`},
		{"a negative --max-stale is refused", []string{"--plaintext", "--follow", "127.0.0.1:1", "--max-stale", "-1s"},
			nil, "decider: --max-stale is -1s: 0 (never) or more"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, nil)
			if c.env != nil {
				t.Setenv(c.env[0], c.env[1])
			}
			var stderr bytes.Buffer
			if code := deciderMain(t.Context(), c.args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

// leaderDecider starts the real decider over an installation document.
func leaderDecider(ctx context.Context, t *testing.T, doc, addr string) *runningDecider {
	t.Helper()
	d, err := startDecider(ctx, deciderSetup{
		logger:         slog.New(slog.NewJSONHandler(io.Discard, nil)),
		registry:       prometheus.NewRegistry(),
		installation:   installationloader.Options{DocumentPath: doc, DocumentExplicit: true},
		reloadInterval: 20 * time.Millisecond,
		addr:           addr,
		cluster:        "east",
		server:         server.Config{Reflection: true, DrainDelay: 0},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// followerDecider starts the real decider as a follower of leader.
func followerDecider(ctx context.Context, t *testing.T, leader, stateDir string, maxStale time.Duration, log io.Writer) *runningDecider {
	t.Helper()
	if log == nil {
		log = io.Discard
	}
	d, err := startDecider(ctx, deciderSetup{
		logger:   slog.New(slog.NewJSONHandler(log, nil)),
		registry: prometheus.NewRegistry(),
		addr:     "127.0.0.1:0",
		cluster:  "west",
		follow: &followSetup{client: client.Config{Target: leader, Plaintext: true}, id: "west-decider-0", stateDir: stateDir, maxStale: maxStale,
			backoff: follower.Backoff{Initial: 50 * time.Millisecond, Factor: 1.6, Jitter: 0.2, Max: 200 * time.Millisecond}},
		server: server.Config{Reflection: true},
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

func askingPod() *deciderv1.DecisionRequest {
	return &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		Pod: &deciderv1.PodFacts{Namespace: "default", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE,
			ResourceKind: deciderv1.ResourceKind_RESOURCE_KIND_POD,
			Annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul",
				"dynamic-config.rs/endpoint": "http://consul:8500", "dynamic-config.rs/key": "myapp/config.json",
				"dynamic-config.rs/path": "/config/rendered.toml"},
			Containers: []*deciderv1.Container{{Name: "app"}}}}
}

func TestAFollowerDecidesWithTheLeadersInstallationAndSurvivesItsOutage(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	doc := filepath.Join(dir, "installation.yaml")
	replaceFile(t, doc, "watchSeconds: \"30\"\n")
	leaderCtx, stopLeader := context.WithCancel(ctx)
	lead := leaderDecider(leaderCtx, t, doc, "127.0.0.1:0")
	leaderAddr := lead.addr.String()
	stateDir := filepath.Join(dir, "state")
	if err := os.Mkdir(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var log syncWriter
	fol := followerDecider(ctx, t, leaderAddr, stateDir, 2*time.Second, &log)
	defer fol.shutdown(time.Second)
	c, err := client.New(client.Config{Target: fol.addr.String(), Plaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	callCtx, callCancel := context.WithTimeout(ctx, 60*time.Second)
	defer callCancel()

	eventually(t, "the first snapshot", 5*time.Second, func() bool { return fol.store.Current() != nil })
	t.Run("the follower's decisions carry the leader's revision, its role and its id", func(t *testing.T) {
		resp, err := c.Decide(callCtx, askingPod())
		if err != nil {
			t.Fatal(err)
		}
		a := resp.GetDecision().GetAuditAnnotations()
		if resp.GetDecision().GetOutcome() != deciderv1.Outcome_OUTCOME_INJECT || a["revision"] != lead.store.Current().Revision ||
			a["decider-role"] != "follower" || a["follower-id"] != "west-decider-0" || a["cluster"] != "west" {
			t.Fatalf("outcome %v, annotations %v; want INJECT under the leader's %s", resp.GetDecision().GetOutcome(), a, lead.store.Current().Revision)
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
		lc, err := client.New(client.Config{Target: leaderAddr, Plaintext: true})
		if err != nil {
			t.Fatal(err)
		}
		defer lc.Close()
		eventually(t, "the ACK reaching the leader", 5*time.Second, func() bool {
			li, err := lc.GetInstallation(callCtx, &deciderv1.GetInstallationRequest{})
			return err == nil && li.GetRole() == deciderv1.DeciderRole_DECIDER_ROLE_LEADER && len(li.GetFollowers()) == 1 &&
				li.GetFollowers()[0].GetFollowerId() == "west-decider-0" && li.GetFollowers()[0].GetCluster() == "west" &&
				li.GetFollowers()[0].GetAppliedRevision() == li.GetRevision() && li.GetFollowers()[0].GetLastAckAt() != nil
		})
	})
	t.Run("an edit of the leader's installation reaches the follower's next decisions", func(t *testing.T) {
		before := lead.store.Current().Revision
		replaceFile(t, doc, "watchSeconds: \"45\"\n")
		eventually(t, "the leader's reload", 5*time.Second, func() bool { return lead.store.Current().Revision != before })
		took := eventually(t, "the edit", 5*time.Second, func() bool {
			resp, err := c.Decide(callCtx, askingPod())
			return err == nil && resp.GetDecision().GetAuditAnnotations()["revision"] == lead.store.Current().Revision
		})
		t.Logf("edit → follower decisions: %s (leader reload interval 20ms)", took)
	})
	edited := lead.store.Current().Revision
	stopLeader()
	stopping := time.Now()
	lead.shutdown(10 * time.Second)
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
	t.Run("past --max-stale the follower refuses with UNAVAILABLE, then recovers by itself when the leader returns", func(t *testing.T) {
		eventually(t, "staleness", 10*time.Second, func() bool {
			_, err := c.Decide(callCtx, askingPod())
			return status.Code(err) == codes.Unavailable
		})
		if fol.server.Ready() {
			t.Fatal("a stale follower is ready")
		}
		again := leaderDecider(ctx, t, doc, leaderAddr)
		defer again.shutdown(time.Second)
		took := eventually(t, "recovery", 10*time.Second, func() bool {
			_, err := c.Decide(callCtx, askingPod())
			return err == nil
		})
		t.Logf("leader back → follower deciding again: %s", took)
	})
	t.Run("a follower restarted while the leader is down serves from its state directory", func(t *testing.T) {
		lis := mustDeadAddr(t)
		again := followerDecider(ctx, t, lis, stateDir, 0, nil)
		defer again.shutdown(time.Second)
		if cur := again.store.Current(); cur == nil || cur.Revision != edited {
			t.Fatalf("restarted follower serves %v, want %s", cur, edited)
		}
		if !again.server.Ready() {
			t.Fatal("not ready from its state")
		}
	})
}

// Issue 38: a --max-stale below three of the leader's 10 s heartbeats
// flapped a follower with a healthy leader (NOT_SERVING 4 s of every 10 s):
// it is a usage error naming the shortest one accepted.
func TestAMaxStaleBelowThreeHeartbeatsIsAUsageErrorNamingTheShortestAccepted(t *testing.T) {
	withFoundationEnv(t, nil)
	// Bounded: a decider that accepted the flag would run until ctx ends.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	code := deciderMain(ctx, []string{"--plaintext", "--follow", "127.0.0.1:1", "--max-stale", "10s"}, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "decider: --max-stale is 10s: 0 (never) or at least 30s, three of the leader's 10s heartbeats") {
		t.Errorf("exit %d, stderr %q; want a usage error naming 30s", code, stderr.String())
	}
}

// mustDeadAddr is a loopback address nothing listens on.
func mustDeadAddr(t *testing.T) string {
	t.Helper()
	d := leaderDecider(t.Context(), t, foundationEmptyFile(t), "127.0.0.1:0")
	addr := d.addr.String()
	d.shutdown(time.Second)
	return addr
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
	dir := t.TempDir()
	doc := filepath.Join(dir, "installation.yaml")
	replaceFile(t, doc, "watchSeconds: \"30\"\n")
	lead := leaderDecider(ctx, t, doc, "127.0.0.1:0")
	defer lead.shutdown(time.Second)

	heapBefore, cpuBefore := heapInUse(), cpuTime()
	stores := make([]*installationloader.Store, n)
	for i := range n {
		c, err := client.New(client.Config{Target: lead.addr.String(), Plaintext: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		stores[i] = installationloader.NewStore(nil)
		f := follower.New(follower.Config{Conn: c.Conn(), ID: fmt.Sprintf("west-%d", i), Cluster: "west", Store: stores[i]})
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
	connect := eventually(t, "100 followers on the first revision", 30*time.Second, all(lead.store.Current().Revision))
	time.Sleep(200 * time.Millisecond) // the ACKs land
	heapConnected, cpuConnected := heapInUse(), cpuTime()

	old := lead.store.Current().Revision
	start := time.Now()
	replaceFile(t, doc, "watchSeconds: \"45\"\n")
	eventually(t, "the leader's reload", 5*time.Second, func() bool { return lead.store.Current().Revision != old })
	reloaded := time.Since(start)
	took := eventually(t, "the edit on all 100 followers", 10*time.Second, all(lead.store.Current().Revision))
	cpuEdit := cpuTime()
	t.Logf("%d followers: connected and on the first revision in %s; one edit: leader reload %s, on every follower %s after the write",
		n, connect, reloaded, reloaded+took)
	t.Logf("process heap in use: %.1f MiB before, %.1f MiB with %d followers: %.1f KiB per follower (leader and follower sides together, an upper bound of the leader's)",
		mib(heapBefore), mib(heapConnected), n, float64(heapConnected-heapBefore)/1024/n)
	t.Logf("process CPU: %s to connect %d followers (%s per follower, both sides), %s for the edit to reach all (%s per follower)",
		cpuConnected-cpuBefore, n, (cpuConnected-cpuBefore)/n, cpuEdit-cpuConnected, (cpuEdit-cpuConnected)/n)
	if got := len(lead.leader.Followers()); got != n {
		t.Fatalf("the leader holds %d followers, want %d", got, n)
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
