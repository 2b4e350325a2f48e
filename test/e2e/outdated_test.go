package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 42 (spec 10 §8): pods injected under one revision, the agent image
// changed, the outdated workloads listed and rolled by a real
// kube-controller-manager (deployment and replicaset controllers), with the
// test playing the kubelet's one part the rollout needs: it marks every pod
// Running and Ready.

// outdatedImage is the agent image of revision n of the test's installation.
func outdatedImage(n int) string { return fmt.Sprintf("registry.local/e2e/agent:v%d", n) }

// startImageDecider runs a plaintext decider at addr whose agent image is
// image (DYNAMIC_CONFIG_AGENT_IMAGE: a decider restart is the change), and
// waits for /readyz.
func startImageDecider(t *testing.T, name, addr, installation, image string) *process {
	t.Helper()
	metrics := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	env := append(os.Environ(), "DYNAMIC_CONFIG_AGENT_IMAGE="+image, "DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=registry.local/")
	p := mustStart(t, name, filepath.Join(testDir(t), name+".log"), env, theCluster.product,
		"decider", "--addr", addr, "--metrics-addr", metrics, "--plaintext", "--installation", installation)
	if err := eventually(name+" /readyz", productReadyTimeout, 100*time.Millisecond, aliveCheck(p, func() error {
		return httpOK(http.DefaultClient, "http://"+metrics+"/readyz", "")
	})); err != nil {
		t.Fatal(err)
	}
	return p
}

// apiJSON sends one request to the API server and decodes the answer into
// out (nil: none); a status other than 200 is an error.
func apiJSON(method, path, contentType string, body []byte, out any) error {
	req, err := http.NewRequest(method, theCluster.serverURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+theCluster.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := apiHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(b, out)
}

// standInKubelet marks every pod of ns Running and Ready until ctx ends:
// without a node, the Deployment controller would never see an available
// replica, and no rollout would finish.
func standInKubelet(ctx context.Context, t *testing.T, ns string) {
	ready := []byte(`{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"},{"type":"ContainersReady","status":"True"}]}}`)
	for ctx.Err() == nil {
		var pods corev1.PodList
		if err := apiJSON(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods", "", nil, &pods); err == nil {
			for _, p := range pods.Items {
				if p.Status.Phase != corev1.PodRunning && p.DeletionTimestamp == nil {
					if err := apiJSON(http.MethodPatch, "/api/v1/namespaces/"+ns+"/pods/"+p.Name+"/status", "application/merge-patch+json", ready, nil); err != nil {
						t.Logf("stand-in kubelet: %v", err)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// outdatedDeployment is a one-replica Deployment of consul pods (extra
// annotations added).
func outdatedDeployment(ns, name string, extra map[string]string) *appsv1.Deployment {
	one := int32(1)
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	d.Spec.Replicas, d.Spec.Selector = &one, &metav1.LabelSelector{MatchLabels: labels}
	p := pod(ns, "", withAnnotations(consulAnnotations(), extra))
	d.Spec.Template = corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: p.Annotations}, Spec: p.Spec}
	return d
}

// stampsOf is the revision stamps of the pods of ns whose name starts with
// prefix (not being deleted), one per pod.
func stampsOf(t *testing.T, ns, prefix string) []string {
	t.Helper()
	var pods corev1.PodList
	if err := apiJSON(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods", "", nil, &pods); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) && p.DeletionTimestamp == nil {
			out = append(out, p.Annotations["dynamic-config.rs/revision"])
		}
	}
	return out
}

// deploymentMeta is a Deployment's resourceVersion and generation.
func deploymentMeta(t *testing.T, ns, name string) (string, int64) {
	t.Helper()
	var d appsv1.Deployment
	if err := apiJSON(http.MethodGet, "/apis/apps/v1/namespaces/"+ns+"/deployments/"+name, "", nil, &d); err != nil {
		t.Fatal(err)
	}
	return d.ResourceVersion, d.Generation
}

type outdatedReport struct {
	Active    string
	Checked   int
	Workloads []struct {
		Namespace, Kind, Name string
		Pods                  int
		Revisions, Paths      []string
	}
}

// runOutdated runs the product binary with args (runProduct) and returns
// its exit code and output.
func runOutdated(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	r := runProduct(t, args, []string{"HOME=" + t.TempDir()})
	return r.code, r.stdout, r.stderr
}

func TestOutdatedWorkloadsAreListedAndRolled(t *testing.T) {
	kcm := os.Getenv(envKubeControllerManager)
	if kcm == "" {
		t.Fatalf("%s is not set; run the end-to-end tests with `make e2e`", envKubeControllerManager)
	}
	ns := newNamespace(t)
	installation := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, installation, seedInstallation(t))
	deciderAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	r1 := startImageDecider(t, "decider-r1", deciderAddr, installation, outdatedImage(1))
	_, door := startFrontdoor(t, "frontdoor", deciderAddr)
	config := ns + "-inject"
	registerInjection(t, config, ns, door, injection{})
	waitForEffect(t, "the injection webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
	deletePods(t, ns)
	rep := startAuditReporter(t, config, "--namespace", ns)
	mustStart(t, "kube-controller-manager", filepath.Join(testDir(t), "kube-controller-manager.log"), nil, kcm,
		"--kubeconfig", theCluster.kubeconfig, "--controllers", "deployment,replicaset",
		"--leader-elect=false", "--secure-port", "0", "--v", "1")
	ctx, stop := context.WithCancel(context.Background())
	kubeletDone := make(chan struct{})
	go func() { defer close(kubeletDone); standInKubelet(ctx, t, ns) }()
	t.Cleanup(func() { stop(); <-kubeletDone })

	// Under R1: web, and pinned, whose agent image is its own (an R2 image
	// change leaves its agent part alone).
	for _, d := range []*appsv1.Deployment{
		outdatedDeployment(ns, "web", nil),
		outdatedDeployment(ns, "pinned", map[string]string{"dynamic-config.rs/agent-image": "registry.local/e2e/agent:pinned"}),
	} {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		mustKubectl(t, b, "create", "-f", "-")
	}
	var stampR1 string
	if err := eventually("both Deployments' pods, injected and stamped", 2*time.Minute, 250*time.Millisecond, func() error {
		web, pinned := stampsOf(t, ns, "web-"), stampsOf(t, ns, "pinned-")
		if len(web) != 1 || len(pinned) != 1 || web[0] == "" || web[0] != pinned[0] {
			return fmt.Errorf("web %v, pinned %v", web, pinned)
		}
		stampR1 = web[0]
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := eventually("the reporter counts 2 pods under R1", 30*time.Second, 500*time.Millisecond, func() error {
		if n := metricSum(t, rep.metricsAddr, "dynamic_config_injected_pods", `revision="`+stampR1+`"`); n != 2 {
			return fmt.Errorf("%v pods under %s", n, stampR1)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	target := []string{"--kubeconfig", theCluster.kubeconfig, "-n", ns, "--decider-target", "static:///" + deciderAddr, "--decider-plaintext"}
	audit := func(wantCode int) outdatedReport {
		t.Helper()
		code, out, errOut := runOutdated(t, append([]string{"audit-pods", "--outdated", "-o", "json"}, target...)...)
		var r outdatedReport
		if code != wantCode || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("audit-pods --outdated: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, wantCode, out, errOut)
		}
		return r
	}
	if r := audit(0); r.Active != stampR1 || len(r.Workloads) != 0 {
		t.Fatalf("under R1 nothing is outdated: %+v", r)
	}

	// R2: the agent image changes (a decider restart with the new image).
	if err := r1.stop(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	startImageDecider(t, "decider-r2", deciderAddr, installation, outdatedImage(2))
	r := audit(1)
	stampR2 := r.Active
	if stampR2 == stampR1 || len(r.Workloads) != 1 || r.Workloads[0].Kind != "Deployment" || r.Workloads[0].Name != "web" ||
		r.Workloads[0].Pods != 1 || strings.Join(r.Workloads[0].Revisions, ",") != stampR1 || strings.Join(r.Workloads[0].Paths, ",") != "containers[dynamic-config-agent].image" {
		t.Fatalf("under R2 want exactly web (1 pod on %s, its agent image), not pinned: %+v", stampR1, r)
	}
	t.Logf("e2e outdated: R1 %s → R2 %s: audit-pods --outdated lists %s/%s/%s (%d pod, %v, %v), of %d workloads on another revision",
		stampR1, stampR2, r.Workloads[0].Namespace, r.Workloads[0].Kind, r.Workloads[0].Name, r.Workloads[0].Pods, r.Workloads[0].Revisions, r.Workloads[0].Paths, r.Checked)

	t.Run("--dry-run changes nothing", func(t *testing.T) {
		webRV, _ := deploymentMeta(t, ns, "web")
		pinnedRV, _ := deploymentMeta(t, ns, "pinned")
		code, out, errOut := runOutdated(t, append([]string{"rollout", "restart", "--outdated", "--dry-run"}, target...)...)
		if code != 0 || !strings.Contains(out, "would restart: "+ns+"/Deployment/web") || strings.Contains(out, "pinned") {
			t.Fatalf("rollout restart --dry-run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		if rv, _ := deploymentMeta(t, ns, "web"); rv != webRV {
			t.Errorf("web's resourceVersion %s → %s after a dry run", webRV, rv)
		}
		if rv, _ := deploymentMeta(t, ns, "pinned"); rv != pinnedRV {
			t.Errorf("pinned's resourceVersion %s → %s after a dry run", pinnedRV, rv)
		}
	})

	t.Run("rollout restart patches web once and its new pods carry R2", func(t *testing.T) {
		_, webGen := deploymentMeta(t, ns, "web")
		pinnedRV, _ := deploymentMeta(t, ns, "pinned")
		start := time.Now()
		code, out, errOut := runOutdated(t, append([]string{"rollout", "restart", "--outdated", "--max-in-flight", "1", "--timeout", "2m"}, target...)...)
		if code != 0 || strings.Count(out, "restarted: ") != 1 || !strings.Contains(out, "rolled out: "+ns+"/Deployment/web") {
			t.Fatalf("rollout restart: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		t.Logf("e2e outdated: rollout restart --outdated: web rolled out in %s", time.Since(start).Round(time.Millisecond))
		if _, gen := deploymentMeta(t, ns, "web"); gen != webGen+1 {
			t.Errorf("web's generation %d → %d: want one patch", webGen, gen)
		}
		if rv, _ := deploymentMeta(t, ns, "pinned"); rv != pinnedRV {
			t.Errorf("pinned was touched: resourceVersion %s → %s", pinnedRV, rv)
		}
		if got := stampsOf(t, ns, "web-"); len(got) != 1 || got[0] != stampR2 {
			t.Errorf("web's pods carry %v after the rollout, want [%s]", got, stampR2)
		}
		if r := audit(0); len(r.Workloads) != 0 {
			t.Errorf("after the restart the list is not empty: %+v", r)
		}
	})

	t.Run("the reporter's gauge moves web's pod from R1 to R2", func(t *testing.T) {
		if err := eventually("the gauge", 30*time.Second, 500*time.Millisecond, func() error {
			n1 := metricSum(t, rep.metricsAddr, "dynamic_config_injected_pods", `revision="`+stampR1+`"`)
			n2 := metricSum(t, rep.metricsAddr, "dynamic_config_injected_pods", `revision="`+stampR2+`"`)
			if n1 != 1 || n2 != 1 {
				return fmt.Errorf("R1 %v, R2 %v; want 1 and 1 (pinned stays on R1)", n1, n2)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	})
}
