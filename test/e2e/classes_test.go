package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The class CRDs of the chart (spec 08 §1).
const classCRDDir = repoRoot + "/charts/dynamic-config/files/crds"

// classTimeout bounds how long a class edit may take to reach a decision:
// the watch delivers it at once; the bound covers a loaded machine.
const classTimeout = 30 * time.Second

// teamVault is the DynamicConfigClass "team-vault" of namespace billing with endpoint.
func teamVault(endpoint string) string {
	return `apiVersion: dynamic-config.rs/v1alpha1
kind: DynamicConfigClass
metadata:
  name: team-vault
  namespace: billing
spec:
  source: vault
  endpoint: ` + endpoint + `
  tokenSecret: billing-vault-token
`
}

// classPodAnnotations are the done-when pod's: only inject, class, key and path.
func classPodAnnotations() map[string]string {
	return map[string]string{
		"dynamic-config.rs/inject": "true",
		"dynamic-config.rs/class":  "team-vault",
		"dynamic-config.rs/key":    "secret/billing/app",
		"dynamic-config.rs/path":   "/config/app.json",
	}
}

// TestClassesAreWatchedThroughTheAPIServer (spec 08 §5): the decider runs
// with --classes against the real API server; it is not ready before the
// CRDs exist and its informers synced; a DynamicConfigClass created with
// kubectl fills a pod's source, endpoint and token Secret; the same pod in
// another namespace is refused; an edit of the class reaches the next pod
// with a new classes revision, without a restart.
func TestClassesAreWatchedThroughTheAPIServer(t *testing.T) {
	dir := testDir(t)
	installation := filepath.Join(dir, "installation.yaml")
	writeInstallation(t, installation, "")
	ports, err := reservePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	addr, metricsAddr := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	readyz := "http://" + metricsAddr + "/readyz"

	// The decider starts before the CRDs exist (another test may have
	// installed them: they are removed first), so its informers cannot sync.
	mustKubectl(t, nil, "delete", "--ignore-not-found", "--wait", "--timeout", "60s",
		"crd/dynamicconfigclasses.dynamic-config.rs", "crd/clusterdynamicconfigclasses.dynamic-config.rs")
	d := mustStart(t, "decider", filepath.Join(dir, "decider.log"), nil, theCluster.product, "decider",
		"--addr", addr, "--metrics-addr", metricsAddr, "--plaintext", "--installation", installation,
		"--classes", "--kubeconfig", theCluster.kubeconfig)
	t.Run("the decider is not ready before both informers synced", func(t *testing.T) {
		if err := eventually("the decider's metrics listener", productReadyTimeout, 100*time.Millisecond, aliveCheck(d, func() error {
			resp, err := http.Get(readyz)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				return fmt.Errorf("/readyz answered %d, want 503 before the classes synced", resp.StatusCode)
			}
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		// still not ready a moment later: nothing to sync from yet
		time.Sleep(2 * time.Second)
		if err := httpOK(http.DefaultClient, readyz, ""); err == nil {
			t.Fatalf("/readyz answered 200 while the class CRDs do not exist")
		}
	})

	installClassCRDs(t)

	t.Run("the CRD schemas refuse invalid classes with their messages", func(t *testing.T) {
		for _, tc := range []struct {
			name, manifest string
			fragments      []string
		}{
			{"an unknown store", strings.Replace(teamVault("https://vault:8200"), "source: vault", "source: mysql", 1),
				[]string{`spec.source: Unsupported value: "mysql"`}},
			{"an empty endpoint", teamVault(`""`),
				[]string{"spec.endpoint", "should be at least 1 chars long"}},
			{"a cluster class token Secret without a namespace", `apiVersion: dynamic-config.rs/v1alpha1
kind: ClusterDynamicConfigClass
metadata: {name: no-ns}
spec: {source: consul, endpoint: "http://consul:8500", tokenSecret: {name: t}}
`, []string{"spec.tokenSecret.namespace: Required value"}},
			{"a key prefix with another placeholder", `apiVersion: dynamic-config.rs/v1alpha1
kind: ClusterDynamicConfigClass
metadata: {name: bad-prefix}
spec: {source: consul, endpoint: "http://consul:8500", keyPrefixes: ["apps/{name}/"]}
`, []string{"the only placeholder a key prefix may hold is {namespace}"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ensureNamespace(t, "billing")
				r := kubectl([]byte(tc.manifest), "apply", "--dry-run=server", "-f", "-")
				if r.err == nil {
					t.Fatalf("the API server accepted it\n%s", r)
				}
				for _, f := range tc.fragments {
					if !strings.Contains(r.stderr, f) {
						t.Errorf("the refusal lacks %q\n%s", f, r)
					}
				}
			})
		}
		r := kubectl([]byte(teamVault("https://vault.billing.svc:8200")), "apply", "--dry-run=server", "-f", "-")
		if r.err != nil {
			t.Fatalf("a valid class was refused\n%s", r)
		}
	})

	if err := eventually("the decider's /readyz after the sync", 60*time.Second, 200*time.Millisecond, aliveCheck(d, func() error {
		return httpOK(http.DefaultClient, readyz, "")
	})); err != nil {
		t.Fatal(err)
	}

	_, door := startFrontdoor(t, "frontdoor", addr)
	billing, payments := ensureNamespace(t, "billing"), ensureNamespace(t, "payments")
	for _, ns := range []string{billing, payments} {
		registerInjection(t, ns+"-classes-inject", ns, door, injection{})
		waitForEffect(t, "the injection webhook takes effect in "+ns, pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
	}

	mustKubectl(t, []byte(teamVault("https://vault.billing.svc:8200")), "apply", "-f", "-")
	waitForClassEndpoint(t, billing, "https://vault.billing.svc:8200")

	var firstRevision string
	t.Run("a pod naming the class in billing is stored with the class's source, endpoint and token Secret", func(t *testing.T) {
		wantAdmitted(t, applyJSON(t, pod(billing, "app-1", classPodAnnotations())))
		checkClassAgent(t, getPod(t, billing, "app-1"), "https://vault.billing.svc:8200")
		audit := auditAnnotations(t, "pods", billing, "app-1")
		firstRevision = audit[injectWebhookName+"/classes-revision"]
		if !strings.HasPrefix(firstRevision, "sha256:") {
			t.Errorf("audit annotation %s/classes-revision = %q; want a sha256 revision (all: %v)", injectWebhookName, firstRevision, audit)
		}
	})

	t.Run("the same pod in payments is refused: the namespaced class is invisible there", func(t *testing.T) {
		r := applyJSON(t, pod(payments, "app-1", classPodAnnotations()))
		wantRefused(t, r, "DynamicConfigPolicy",
			`dynamic-config.rs/class is "team-vault", but no class of that name is visible from namespace payments: list them with kubectl get dynamicconfigclasses,clusterdynamicconfigclasses`)
		if podExists(t, payments, "app-1") {
			t.Errorf("the refused pod was stored")
		}
	})

	t.Run("kubectl lists the class with its printer columns", func(t *testing.T) {
		r := mustKubectl(t, nil, "get", "dcc", "-n", billing)
		for _, f := range []string{"SOURCE", "ENDPOINT", "AGE", "team-vault", "vault", "https://vault.billing.svc:8200"} {
			if !strings.Contains(r.stdout, f) {
				t.Errorf("kubectl get dcc lacks %q:\n%s", f, r.stdout)
			}
		}
	})

	t.Run("an edit of the class reaches the next pod with a new classes revision, without a restart", func(t *testing.T) {
		mustKubectl(t, []byte(teamVault("https://vault-2.billing.svc:8200")), "apply", "-f", "-")
		waitForClassEndpoint(t, billing, "https://vault-2.billing.svc:8200")
		wantAdmitted(t, applyJSON(t, pod(billing, "app-2", classPodAnnotations())))
		checkClassAgent(t, getPod(t, billing, "app-2"), "https://vault-2.billing.svc:8200")
		second := auditAnnotations(t, "pods", billing, "app-2")[injectWebhookName+"/classes-revision"]
		if !strings.HasPrefix(second, "sha256:") || second == firstRevision {
			t.Errorf("classes-revision after the edit = %q; want a sha256 revision other than %q", second, firstRevision)
		}
		if d.exited() {
			t.Fatalf("the decider exited:\n%s", d.logTail(20))
		}
	})
}

// ensureNamespace creates namespace name unless it exists, and returns it.
func ensureNamespace(t *testing.T, name string) string {
	t.Helper()
	if kubectl(nil, "get", "namespace", name).err != nil {
		mustKubectl(t, nil, "create", "namespace", name)
	}
	return name
}

// waitForClassEndpoint waits until a dry-run of the class pod in ns comes
// back injected with endpoint: the decider holds the class as edited.
func waitForClassEndpoint(t *testing.T, ns, endpoint string) {
	t.Helper()
	var last kubectlResult
	err := eventually("the decider sees the class with endpoint "+endpoint, classTimeout, 200*time.Millisecond, func() error {
		last = applyJSON(t, pod(ns, "class-probe", classPodAnnotations()), "--dry-run=server", "-o", "json")
		if last.err == nil && strings.Contains(last.stdout, `"`+endpoint+`"`) {
			return nil
		}
		return errNoEffectYet
	})
	if err != nil {
		t.Fatalf("%v\nlast probe: %s", err, last)
	}
}

// checkClassAgent checks that the stored pod's agent reads vault at endpoint
// with the class's token Secret.
func checkClassAgent(t *testing.T, p *corev1.Pod, endpoint string) {
	t.Helper()
	var agent *corev1.Container
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == "dynamic-config-agent" {
			agent = &p.Spec.Containers[i]
		}
	}
	if agent == nil {
		t.Fatalf("pod %s/%s has no dynamic-config-agent container", p.Namespace, p.Name)
	}
	for _, pair := range [][2]string{{"--source", "vault"}, {"--endpoint", endpoint}, {"--key", "secret/billing/app"}} {
		i := slices.Index(agent.Args, pair[0])
		if i < 0 || i+1 >= len(agent.Args) || agent.Args[i+1] != pair[1] {
			t.Errorf("agent args %q lack %s %s", agent.Args, pair[0], pair[1])
		}
	}
	found := false
	for _, e := range agent.Env {
		if e.Name == "DYNAMIC_CONFIG_AGENT_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
			e.ValueFrom.SecretKeyRef.Name == "billing-vault-token" && e.ValueFrom.SecretKeyRef.Key == "token" {
			found = true
		}
	}
	if !found {
		t.Errorf("agent env %v lacks DYNAMIC_CONFIG_AGENT_TOKEN from Secret billing-vault-token key token", agent.Env)
	}
}
