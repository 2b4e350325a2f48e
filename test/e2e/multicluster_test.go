package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startSecondCluster starts another etcd + kube-apiserver pair on loopback
// (state under the run's work dir, in name/), stopped at cleanup.
func startSecondCluster(t *testing.T, name string) *cluster {
	t.Helper()
	c := &cluster{workDir: filepath.Join(theCluster.workDir, name), product: theCluster.product, kubectl: theCluster.kubectl}
	stop, err := c.start(os.Getenv(envEtcd), os.Getenv(envKubeAPIServer))
	t.Cleanup(stop)
	if err != nil {
		t.Fatalf("start cluster %s: %v", name, err)
	}
	return c
}

// onCluster runs fn with c as the cluster the kubectl, namespace, webhook and
// audit helpers talk to, then restores the run's cluster. The end-to-end
// tests never run in parallel, so the swap is seen by fn alone.
func onCluster(c *cluster, fn func()) {
	saved := theCluster
	theCluster = c
	defer func() { theCluster = saved }()
	fn()
}

// asserted prints one checked assertion, so the run's output lists what the
// scenario established.
func asserted(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf("ASSERT ok: "+format, args...)
}

// tokenDigest is the callers file's tokenSHA256 of token.
func tokenDigest(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TestTwoClustersShareOneDecider is the primary–remote topology of
// docs/multi-cluster.md: two kube-apiservers ("east", the run's cluster, and
// "west"), one decider in east with a callers file, and a front door per
// cluster naming its own cluster with its own token. A third front door in
// west presents west's token but claims to be east.
func TestTwoClustersShareOneDecider(t *testing.T) {
	east := theCluster
	west := startSecondCluster(t, "west")
	dir := testDir(t)

	eastToken, westToken := "east-"+randomHex(16), "west-"+randomHex(16)
	eastTokenFile, westTokenFile := filepath.Join(dir, "east.token"), filepath.Join(dir, "west.token")
	callersFile := filepath.Join(dir, "callers.yaml")
	for path, content := range map[string]string{
		eastTokenFile: eastToken + "\n",
		westTokenFile: westToken + "\n",
		callersFile: `callers:
  - name: east-frontdoor
    clusters: [east]
    credentials:
      - tokenSHA256: ` + tokenDigest(eastToken) + `
  - name: west-frontdoor
    clusters: [west]
    credentials:
      - tokenSHA256: ` + tokenDigest(westToken) + `
`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	installation := filepath.Join(dir, "installation.yaml")
	writeInstallation(t, installation, seedInstallation(t))
	d := newDecider(t, "decider-east", installation)
	d.extra = []string{"--callers", callersFile, "--cluster-name", "east"}
	d.start()
	_, eastDoor := startFrontdoor(t, "frontdoor-east", d.addr, "--cluster-name", "east", "--decider-token-file", eastTokenFile)
	_, westDoor := startFrontdoor(t, "frontdoor-west", d.addr, "--cluster-name", "west", "--decider-token-file", westTokenFile)
	_, liarDoor := startFrontdoor(t, "frontdoor-west-claims-east", d.addr, "--cluster-name", "east", "--decider-token-file", westTokenFile)

	consul := seedPods[0]
	var eastNS, westNS, liarNS string
	onCluster(east, func() {
		eastNS = newNamespace(t)
		registerInjection(t, eastNS+"-inject", eastNS, eastDoor, injection{})
		waitForEffect(t, "east's injection webhook takes effect", pod(eastNS, "webhook-probe", consulAnnotations()), injectedOrRefused)
	})
	onCluster(west, func() {
		westNS, liarNS = newNamespace(t), newNamespace(t)
		registerInjection(t, westNS+"-inject", westNS, westDoor, injection{})
		waitForEffect(t, "west's injection webhook takes effect", pod(westNS, "webhook-probe", consulAnnotations()), injectedOrRefused)
		registerInjection(t, liarNS+"-inject", liarNS, liarDoor, injection{})
		waitForEffect(t, "the claiming front door's webhook takes effect", pod(liarNS, "webhook-probe", consulAnnotations()), injectedOrRefused)
	})

	var eastRevision string
	t.Run("a pod created in east is injected and its audit annotations name east", func(t *testing.T) {
		onCluster(east, func() {
			wantAdmitted(t, applyJSON(t, pod(eastNS, "consul", consul.annotations)))
			checkInjected(t, getPod(t, eastNS, "consul"), consul.want)
			audit := auditAnnotations(t, "pods", eastNS, "consul")
			eastRevision = audit[injectWebhookName+"/revision"]
			if got := audit[injectWebhookName+"/cluster"]; got != "east" {
				t.Fatalf("audit annotation %s/cluster = %q; want east (all: %v)", injectWebhookName, got, audit)
			}
			if !revisionPattern.MatchString(eastRevision) {
				t.Fatalf("audit annotation %s/revision = %q", injectWebhookName, eastRevision)
			}
		})
		asserted(t, "east pod injected; audit %s/cluster=east, revision %s", injectWebhookName, eastRevision)
	})
	t.Run("a pod created in west is injected with the same installation revision and its audit annotations name west", func(t *testing.T) {
		onCluster(west, func() {
			wantAdmitted(t, applyJSON(t, pod(westNS, "consul", consul.annotations)))
			checkInjected(t, getPod(t, westNS, "consul"), consul.want)
			audit := auditAnnotations(t, "pods", westNS, "consul")
			if got := audit[injectWebhookName+"/cluster"]; got != "west" {
				t.Fatalf("audit annotation %s/cluster = %q; want west (all: %v)", injectWebhookName, got, audit)
			}
			if got := audit[injectWebhookName+"/revision"]; got != eastRevision || got == "" {
				t.Fatalf("west's revision %q differs from east's %q", got, eastRevision)
			}
		})
		asserted(t, "west pod injected; audit %s/cluster=west, revision %s (the same as east's)", injectWebhookName, eastRevision)
	})
	t.Run("the decider records each decision with its caller and cluster, and counts it per caller", func(t *testing.T) {
		log := d.proc.logText()
		for _, want := range []string{`"cluster":"east","caller":"east-frontdoor"`, `"cluster":"west","caller":"west-frontdoor"`} {
			if !strings.Contains(log, want) {
				t.Fatalf("the decider's log has no decision line with %s", want)
			}
		}
		metrics := fetch(t, "http://"+d.metricsAddr+"/metrics")
		for _, want := range []string{
			`dynamic_config_caller_decisions_total{caller="east-frontdoor",outcome="inject"}`,
			`dynamic_config_caller_decisions_total{caller="west-frontdoor",outcome="inject"}`,
		} {
			if !strings.Contains(metrics, want) {
				t.Fatalf("the decider's metrics lack %s", want)
			}
		}
		asserted(t, "decision lines name cluster and caller; dynamic_config_caller_decisions_total has east-frontdoor and west-frontdoor")
	})

	// texts of east's setup a west pod must never see
	eastSetup := []string{"east", eastToken, tokenDigest(eastToken), callersFile, eastNS}
	wantNothingOfEast := func(t *testing.T, text string) {
		t.Helper()
		for _, secret := range eastSetup {
			if strings.Contains(strings.ToLower(text), strings.ToLower(secret)) {
				t.Fatalf("the refusal a west pod sees names %q of east's setup:\n%s", secret, text)
			}
		}
	}

	t.Run("west's credential claiming to be east is refused as a caller, and the refusal names nothing of east's setup", func(t *testing.T) {
		var r kubectlResult
		onCluster(west, func() {
			r = applyJSON(t, pod(liarNS, "consul", consul.annotations))
			// an authorization failure is never an outage (issue 23): 403
			// DynamicConfigCallerRefused, naming the cluster the front door
			// itself claims and the callers file
			wantRefused(t, r, "DynamicConfigCallerRefused",
				"PermissionDenied: this caller may not speak for the cluster named in the request")
			if !strings.Contains(r.stderr, `does not let this front door's caller speak for cluster "east"`) {
				t.Fatalf("the refusal does not name the front door's own (claimed) cluster and the callers file:\n%s", r.stderr)
			}
			if podExists(t, liarNS, "consul") {
				t.Fatalf("the refused pod was stored")
			}
		})
		// "east" is the liar's own --cluster-name, quoted back to it; nothing
		// else of east's setup may appear
		wantNothingOfEast(t, strings.ReplaceAll(r.stderr, `cluster "east"`, `cluster "<claimed>"`))
		if !strings.Contains(d.proc.logText(), `"msg":"caller denied","caller":"west-frontdoor","cluster":"east"`) {
			t.Fatalf("the decider did not log the denial with the caller and the cluster claimed")
		}
		asserted(t, "west token + cluster east → PermissionDenied, pod not stored; kubectl saw: %s", strings.TrimSpace(r.stderr))
	})

	d.stop()

	t.Run("while the decider is down, pods that ask are refused in both clusters (fail closed)", func(t *testing.T) {
		onCluster(east, func() {
			r := applyJSON(t, pod(eastNS, "consul-down", consul.annotations))
			wantRefused(t, r, "DynamicConfigDeciderUnavailable", unavailablePrefix, mutateDenySuffix)
		})
		var westText string
		onCluster(west, func() {
			r := applyJSON(t, pod(westNS, "consul-down", consul.annotations))
			wantRefused(t, r, "DynamicConfigDeciderUnavailable", unavailablePrefix, mutateDenySuffix)
			if podExists(t, westNS, "consul-down") {
				t.Fatalf("the refused west pod was stored")
			}
			westText = r.stderr
		})
		wantNothingOfEast(t, westText)
		asserted(t, "decider down → east and west both deny asking pods with the unchanged decider-unavailable answer; west's text names nothing of east")
	})
}

// TestADeciderRefusesACallersFileWithTyposListingEveryProblem starts the
// real binary on a callers file with three mistakes: it must not start, and
// it must name all three.
func TestADeciderRefusesACallersFileWithTyposListingEveryProblem(t *testing.T) {
	dir := testDir(t)
	callers := filepath.Join(dir, "callers.yaml")
	typos := "callers:\n  - name: west-frontdoor\n    cluster: [west]\n    credentials:\n      - tokenSHA265: " + tokenDigest("t") + "\n  - name: West\n    clusters: [west]\n    credentials: [{tokenSHA256: 1234}]\n"
	if err := os.WriteFile(callers, []byte(typos), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "installation.yaml")
	writeInstallation(t, empty, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, theCluster.product, "decider", "--plaintext", "--addr", "127.0.0.1:0", "--metrics-addr", "",
		"--installation", empty, "--callers", callers, "--cluster-name", "east")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("decider exited with %v; want exit 2\n%s", err, out)
	}
	for _, want := range []string{
		"has 5 problem(s):",
		"line 2: callers[0] (west-frontdoor).clusters: missing",
		"line 3: callers[0] (west-frontdoor).cluster: unknown key; accepted: name, clusters, credentials",
		"line 5: callers[0] (west-frontdoor).credentials[0].tokenSHA265: unknown credential kind",
		`line 6: callers[1].name: "West" is not a caller name`,
		"line 8: callers[1].credentials[0].tokenSHA256: 64 hexadecimal digits",
	} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the refusal lacks %q:\n%s", want, out)
		}
	}
	asserted(t, "a callers file with 5 mistakes: the decider exits 2 and lists all 5:\n%s", out)
}

// fetch GETs url and returns the body (bounded).
func fetch(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
