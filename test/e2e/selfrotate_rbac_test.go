package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The names the chart gives the selfRotate objects for release dynamic-config
// (charts/dynamic-config/templates/selfrotate.yaml).
const (
	chartSelfRotateName  = "dynamic-config-frontdoor-ca"
	chartFrontdoorSA     = "dynamic-config-frontdoor"
	chartMutatingName    = "dynamic-config"
	chartValidatingName  = "dynamic-config-env-policy"
	chartSelfRotateRBAC  = "dynamic-config-frontdoor-self-rotate"
	chartSelfRotateCRBAC = "dynamic-config-dynamic-config-frontdoor-self-rotate"
	chartDeciderTLS      = "dynamic-config-decider-rotated-tls"          // rendered empty under selfRotate (issue 20), a name of the mode's own (issue 40)
	chartClientTLS       = "dynamic-config-frontdoor-client-rotated-tls" // idem
)

// TestSelfRotateNeedsNoMoreThanTheChartsRBAC runs the front door with the
// token of the chart's front door ServiceAccount, bound by exactly the Role
// and ClusterRole the chart renders in tls.mode selfRotate (taken from
// `make chart-render`'s chart-self-rotate.yaml, moved into the test's
// namespace), against the empty Secret and Lease the chart renders: it fills
// the Secret, writes both caBundles and is called by the API server — and the
// same ServiceAccount may not create Secrets or Leases, nor touch another
// webhook configuration.
func TestSelfRotateNeedsNoMoreThanTheChartsRBAC(t *testing.T) {
	render := chartRenderDir(t)
	ns := newNamespace(t)
	applyChartSelfRotateObjects(t, filepath.Join(render, "chart-self-rotate.yaml"), ns)

	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	d := newDecider(t, "decider", path)
	d.start()
	port := freePort(t)
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	registerWithoutCABundle(t, chartMutatingName, chartValidatingName, ns, url, url)

	token := strings.TrimSpace(mustKubectl(t, nil, "create", "token", chartFrontdoorSA, "-n", ns, "--duration", "1h").stdout)
	kubeconfig := filepath.Join(testDir(t), "frontdoor-kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: frontdoor
  user: {token: %q}
contexts:
- name: frontdoor
  context: {cluster: e2e, user: frontdoor}
current-context: frontdoor
`, theCluster.serverURL, token)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := mustStart(t, "frontdoor", filepath.Join(testDir(t), "frontdoor.log"), nil, theCluster.product, "frontdoor",
		"--addr", "127.0.0.1:"+strconv.Itoa(port),
		"--decider-target", d.addr, "--decider-plaintext", "--decider-timeout", "2s",
		"--self-rotate", "--kubeconfig", kubeconfig, "--self-rotate-namespace", ns,
		"--self-rotate-hosts", "127.0.0.1", "--self-rotate-interval", "1s",
		"--self-rotate-decider-secret", chartDeciderTLS, "--self-rotate-decider-hosts", "127.0.0.1",
		"--self-rotate-client-secret", chartClientTLS)
	bundle := waitForMintedCA(t, p, ns, chartSelfRotateName, chartMutatingName, chartValidatingName)
	waitFrontDoorReady(t, p, frontDoor{url: url, caPEM: bundle})

	t.Run("the API server calls the front door over the CA it minted with the chart's permissions", func(t *testing.T) {
		waitForEffect(t, "the self-rotated webhook answers", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
		wantAdmitted(t, applyJSON(t, pod(ns, "consul", seedPods[0].annotations)))
		checkInjected(t, getPod(t, ns, "consul"), seedPods[0].want)
	})

	t.Run("the chart's permissions suffice to sign the decider's and the client pair into the chart's empty Secrets", func(t *testing.T) {
		ca := secretBytes(t, ns, chartSelfRotateName, "ca.crt")
		for _, name := range []string{chartDeciderTLS, chartClientTLS} {
			if err := eventually(name+" is filled", productReadyTimeout, 250*time.Millisecond, func() error {
				return signedBy(secretBytes(t, ns, name, "tls.crt"), ca)
			}); err != nil {
				t.Fatalf("%v\n%s", err, p.logTail(20))
			}
		}
	})

	t.Run("the ServiceAccount may do nothing beyond the named objects", func(t *testing.T) {
		as := "system:serviceaccount:" + ns + ":" + chartFrontdoorSA
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"update", "mutatingwebhookconfigurations/" + chartMutatingName}, "yes"},
			{[]string{"update", "secrets/" + chartSelfRotateName, "-n", ns}, "yes"},
			{[]string{"update", "secrets/" + chartDeciderTLS, "-n", ns}, "yes"},
			{[]string{"update", "secrets/" + chartClientTLS, "-n", ns}, "yes"},
			{[]string{"create", "secrets", "-n", ns}, "no"},
			{[]string{"get", "secrets/" + ns + "-other", "-n", ns}, "no"},
			{[]string{"list", "secrets", "-n", ns}, "no"},
			{[]string{"create", "leases.coordination.k8s.io", "-n", ns}, "no"},
			{[]string{"update", "mutatingwebhookconfigurations/someone-else"}, "no"},
			{[]string{"delete", "mutatingwebhookconfigurations/" + chartMutatingName}, "no"},
		} {
			r := kubectl(nil, append([]string{"auth", "can-i", "--as", as}, c.args...)...)
			if got := strings.TrimSpace(r.stdout); got != c.want {
				t.Errorf("can-i %s: %q, want %q\n%s", strings.Join(c.args, " "), got, c.want, r)
			}
		}
	})
}

// applyChartSelfRotateObjects creates the front door's ServiceAccount and the
// selfRotate objects of the chart render at path in namespace ns (the render's
// namespace is dynamic-config), and removes the cluster-scoped ones at cleanup.
func applyChartSelfRotateObjects(t *testing.T, path, ns string) {
	t.Helper()
	r := mustKubectl(t, nil, "create", "--dry-run=client", "-o", "json", "-f", path)
	var objects []map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for {
		var o map[string]any
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode kubectl's reading of %s: %v", path, err)
		}
		if items, ok := o["items"].([]any); ok && o["kind"] == "List" {
			for _, it := range items {
				objects = append(objects, it.(map[string]any))
			}
		} else {
			objects = append(objects, o)
		}
	}
	wanted := map[string][]string{
		"ServiceAccount": {chartFrontdoorSA}, "Secret": {chartSelfRotateName, chartDeciderTLS, chartClientTLS},
		"Lease": {chartSelfRotateName}, "Role": {chartSelfRotateRBAC}, "RoleBinding": {chartSelfRotateRBAC},
		"ClusterRole": {chartSelfRotateCRBAC}, "ClusterRoleBinding": {chartSelfRotateCRBAC},
	}
	count := 0
	for _, names := range wanted {
		count += len(names)
	}
	var picked []map[string]any
	for _, o := range objects {
		meta, _ := o["metadata"].(map[string]any)
		if !slices.Contains(wanted[fmt.Sprint(o["kind"])], fmt.Sprint(meta["name"])) {
			continue
		}
		if meta["namespace"] != nil {
			meta["namespace"] = ns
		}
		if subjects, ok := o["subjects"].([]any); ok {
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = ns
			}
		}
		picked = append(picked, o)
	}
	if len(picked) != count {
		t.Fatalf("chart-self-rotate.yaml holds %d of the %d selfRotate objects", len(picked), count)
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": picked})
	if err != nil {
		t.Fatal(err)
	}
	wantAdmitted(t, kubectl(b, "create", "-f", "-"))
	t.Cleanup(func() {
		kubectl(nil, "delete", "clusterrolebinding,clusterrole", chartSelfRotateCRBAC, "--ignore-not-found", "--wait=false")
	})
}
