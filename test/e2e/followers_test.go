package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// followerDecider is one `decider --follow` process with fixed ports and
// state directory, so that a restart is the same follower.
type followerDecider struct {
	t                 *testing.T
	name, leader      string
	addr, metricsAddr string
	stateDir          string
	extra             []string
	proc              *process
	starts            int
}

func newFollower(t *testing.T, name, leader string, extra ...string) *followerDecider {
	t.Helper()
	ports, err := reservePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	return &followerDecider{t: t, name: name, leader: leader, extra: extra,
		addr: "127.0.0.1:" + strconv.Itoa(ports[0]), metricsAddr: "127.0.0.1:" + strconv.Itoa(ports[1]),
		stateDir: filepath.Join(testDir(t), name+"-state")}
}

// start runs the follower and waits for /readyz (it is ready once it serves
// an installation: its leader's, or its saved state's).
func (f *followerDecider) start() {
	t := f.t
	t.Helper()
	f.starts++
	log := filepath.Join(testDir(t), fmt.Sprintf("%s-%d.log", f.name, f.starts))
	f.proc = mustStart(t, f.name, log, nil, theCluster.product, append([]string{"decider",
		"--addr", f.addr, "--metrics-addr", f.metricsAddr, "--plaintext",
		"--follow", f.leader, "--leader-plaintext",
		"--cluster-name", "west", "--follower-id", "west-decider-0",
		"--state-dir", f.stateDir,
	}, f.extra...)...)
	if err := eventually(f.name+" /readyz", productReadyTimeout, 100*time.Millisecond, aliveCheck(f.proc, func() error {
		return httpOK(http.DefaultClient, "http://"+f.metricsAddr+"/readyz", "")
	})); err != nil {
		t.Fatal(err)
	}
}

func (f *followerDecider) stop() {
	f.t.Helper()
	if err := f.proc.stop(40 * time.Second); err != nil {
		f.t.Fatalf("%s: %v", f.name, err)
	}
}

// TestAFollowerKeepsWestAdmittingWithTheWANDown is spec 09 end to end: two
// kube-apiservers; east (the run's cluster) holds the leader decider, west a
// follower decider and west's front door, which asks the follower.
func TestAFollowerKeepsWestAdmittingWithTheWANDown(t *testing.T) {
	west := startSecondCluster(t, "west")
	dir := testDir(t)
	installation := filepath.Join(dir, "installation.yaml")
	seed := seedInstallation(t)
	writeInstallation(t, installation, seed)
	leader := newDecider(t, "decider-east-leader", installation)
	leader.extra = []string{"--cluster-name", "east", "--drain-delay", "0s"}
	leader.start()
	follower := newFollower(t, "decider-west-follower", leader.addr)
	follower.start()
	_, westDoor := startFrontdoor(t, "frontdoor-west", follower.addr, "--cluster-name", "west")

	consul := seedPods[0]
	var westNS string
	onCluster(west, func() {
		westNS = newNamespace(t)
		registerInjection(t, westNS+"-inject", westNS, westDoor, injection{})
		waitForEffect(t, "west's injection webhook takes effect", pod(westNS, "webhook-probe", consulAnnotations()), injectedOrRefused)
	})
	n := 0
	createAsking := func(t *testing.T) (string, kubectlResult) {
		t.Helper()
		n++
		name := fmt.Sprintf("consul-%d", n)
		return name, applyJSON(t, pod(westNS, name, consul.annotations))
	}
	// waitAdmitted creates asking pods until one is admitted (a front door
	// whose decider restarted reconnects with gRPC's backoff) and returns it.
	waitAdmitted := func(t *testing.T, what string) string {
		t.Helper()
		start := time.Now()
		for {
			name, r := createAsking(t)
			if r.err == nil {
				t.Logf("%s: admitted after %s", what, time.Since(start).Round(time.Millisecond))
				return name
			}
			if time.Since(start) > 30*time.Second {
				t.Fatalf("%s: not within 30 s: %v", what, r)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	revisionOf := func(t *testing.T, name string) map[string]string {
		t.Helper()
		return auditAnnotations(t, "pods", westNS, name)
	}

	var firstRevision string
	t.Run("a pod in west is injected by the follower with east's revision", func(t *testing.T) {
		onCluster(west, func() {
			name, r := createAsking(t)
			wantAdmitted(t, r)
			checkInjected(t, getPod(t, westNS, name), consul.want)
			audit := revisionOf(t, name)
			firstRevision = audit[injectWebhookName+"/revision"]
			if !revisionPattern.MatchString(firstRevision) || audit[injectWebhookName+"/decider-role"] != "follower" ||
				audit[injectWebhookName+"/follower-id"] != "west-decider-0" || audit[injectWebhookName+"/cluster"] != "west" {
				t.Fatalf("audit annotations %v; want east's revision, decider-role follower, follower-id west-decider-0, cluster west", audit)
			}
		})
		asserted(t, "west pod injected by the follower; audit revision %s, decider-role=follower, follower-id=west-decider-0", firstRevision)
	})

	t.Run("an edit of east's installation reaches west's next admissions within 2 s", func(t *testing.T) {
		start := time.Now()
		writeInstallation(t, installation, strings.Replace(seed, `watchSeconds: "30"`, `watchSeconds: "31"`, 1))
		var took time.Duration
		var revision string
		onCluster(west, func() {
			for time.Since(start) < 10*time.Second {
				name, r := createAsking(t)
				answered := time.Since(start) // the admission happened before this
				wantAdmitted(t, r)
				if rev := revisionOf(t, name)[injectWebhookName+"/revision"]; rev != firstRevision {
					took, revision = answered, rev
					break
				}
			}
		})
		if revision == "" {
			t.Fatal("the edit did not reach west within 10 s")
		}
		asserted(t, "edit of east's installation → a west pod admitted at most %s after the write carries the new revision %s", took.Round(time.Millisecond), revision)
		if took > 2*time.Second {
			t.Fatalf("the edit took %s to reach west; want at most 2 s", took)
		}
	})

	leader.stop()
	t.Run("with the leader stopped, west keeps injecting asking pods for 60 s without a failure", func(t *testing.T) {
		ok, failed := 0, 0
		onCluster(west, func() {
			for start := time.Now(); time.Since(start) < 60*time.Second; {
				name, r := createAsking(t)
				if r.err != nil || !podExists(t, westNS, name) {
					failed++
					t.Errorf("pod %s: %v", name, r)
					continue
				}
				ok++
			}
		})
		asserted(t, "leader down 60 s: %d asking pods created in west, %d failed", ok, failed)
		if failed > 0 || ok == 0 {
			t.Fatalf("%d ok, %d failed", ok, failed)
		}
	})
	t.Run("the follower restarted while the leader is still down serves from its state directory", func(t *testing.T) {
		follower.stop()
		follower.start() // waits for /readyz: it is ready from its state
		onCluster(west, func() {
			name := waitAdmitted(t, "west's front door back on the restarted follower")
			checkInjected(t, getPod(t, westNS, name), consul.want)
		})
		asserted(t, "follower restarted with the leader down: ready from its state directory, west pod injected")
	})

	leader.start()
	follower.stop()
	// 30 s, the shortest --max-stale but 0: three of the leader's 10 s
	// heartbeats (issue 38; a shorter one is a usage error).
	follower.extra = []string{"--max-stale", "30s"}
	follower.start()
	t.Run("with --max-stale 30s and the leader down for 35 s, west refuses asking pods as decider-unavailable and admits plain ones", func(t *testing.T) {
		onCluster(west, func() { waitAdmitted(t, "west's front door on the follower with --max-stale") })
		leader.stop()
		time.Sleep(35 * time.Second)
		onCluster(west, func() {
			name, r := createAsking(t)
			wantRefused(t, r, "DynamicConfigDeciderUnavailable", unavailablePrefix, mutateDenySuffix)
			// the front door's health check drops the NOT_SERVING follower, or the
			// follower itself answers UNAVAILABLE naming --max-stale
			if !strings.Contains(r.stderr, "status=NOT_SERVING") && !strings.Contains(r.stderr, "longer than --max-stale") {
				t.Fatalf("the refusal is not the follower's staleness:\n%s", r.stderr)
			}
			if podExists(t, westNS, name) {
				t.Fatal("the refused pod was stored")
			}
			wantAdmitted(t, applyJSON(t, pod(westNS, "plain", nil)))
		})
		asserted(t, "stale follower: asking pod refused as DynamicConfigDeciderUnavailable, plain pod admitted")
	})
	t.Run("the stale follower recovers by itself when the leader returns", func(t *testing.T) {
		start := time.Now()
		leader.start()
		var took time.Duration
		onCluster(west, func() {
			for time.Since(start) < 60*time.Second {
				_, r := createAsking(t)
				if r.err == nil {
					took = time.Since(start)
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
		if took == 0 {
			t.Fatal("west did not recover within 60 s of the leader's return")
		}
		asserted(t, "leader back → west admits asking pods again after %s (leader start included)", took.Round(time.Millisecond))
	})
}
