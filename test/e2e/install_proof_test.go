package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// proofWebhookName is the chart's install-proof webhook (issue 21).
const proofWebhookName = "install-proof.dynamic-config.rs"

// installProofChart is what `make chart-render` rendered of the install
// proof (chart-install-proof.yaml: installProof.timeout 20s, release
// namespace e2e-install-proof): the hook's objects and the webhook.
type installProofChart struct {
	serviceAccount corev1.ServiceAccount
	role           rbacv1.Role
	roleBinding    rbacv1.RoleBinding
	job            batchv1.Job
	webhook        admissionv1.MutatingWebhook
}

func readInstallProofChart(t *testing.T) installProofChart {
	t.Helper()
	path := filepath.Join(chartRenderDir(t), "chart-install-proof.yaml")
	r := mustKubectl(t, nil, "create", "--dry-run=client", "-o", "json", "-f", path)
	var c installProofChart
	found := map[string]bool{}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			break
		}
		var head struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatal(err)
		}
		items := []json.RawMessage{raw}
		if head.Kind == "List" {
			items = head.Items
		}
		for _, item := range items {
			var k struct {
				Kind string `json:"kind"`
			}
			_ = json.Unmarshal(item, &k)
			var into any
			switch k.Kind {
			case "ServiceAccount":
				into = &c.serviceAccount
			case "Role":
				into = &c.role
			case "RoleBinding":
				into = &c.roleBinding
			case "Job":
				into = &c.job
			case "MutatingWebhookConfiguration":
				var cfg admissionv1.MutatingWebhookConfiguration
				if err := json.Unmarshal(item, &cfg); err != nil {
					t.Fatal(err)
				}
				for _, w := range cfg.Webhooks {
					if w.Name == proofWebhookName {
						c.webhook = w
						found["webhook"] = true
					}
				}
				continue
			default:
				continue
			}
			if err := json.Unmarshal(item, into); err != nil {
				t.Fatalf("decode the rendered %s: %v", k.Kind, err)
			}
			found[k.Kind] = true
		}
	}
	for _, want := range []string{"ServiceAccount", "Role", "RoleBinding", "Job", "webhook"} {
		if !found[want] {
			t.Fatalf("%s holds no %s of the install proof", path, want)
		}
	}
	return c
}

// TestTheInstallProofJobSucceedsWithTheFrontDoorUpAndFailsWithItDown runs
// the chart's install-proof hook Job as the kubelet would — its container's
// args and env, exactly as rendered, with its ServiceAccount's token (so its
// RBAC is the one proven) — against the real API server, with the chart's
// install-proof webhook registered by URL (the only change: there is no
// Service routing here). Up: exit 0, the answer carries the agent. Down:
// exit 1 with the API server's reason.
func TestTheInstallProofJobSucceedsWithTheFrontDoorUpAndFailsWithItDown(t *testing.T) {
	chart := readInstallProofChart(t)
	ns := chart.job.Namespace
	if r := kubectl(nil, "create", "namespace", ns); r.err != nil && !strings.Contains(r.stderr, "AlreadyExists") {
		t.Fatalf("%s", r)
	}

	installation := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, installation, "")
	s := startServe(t, installation)

	// The chart's webhook, verbatim but for the clientConfig.
	hook := chart.webhook
	url := s.door.url + "/mutate"
	hook.ClientConfig = admissionv1.WebhookClientConfig{URL: &url, CABundle: s.door.caPEM}
	configName := ns + "-install-proof"
	applyConfiguration(t, "mutatingwebhookconfiguration", configName, &admissionv1.MutatingWebhookConfiguration{
		TypeMeta:   chartTypeMeta("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
		ObjectMeta: objectMeta(configName, ""),
		Webhooks:   []admissionv1.MutatingWebhook{hook},
	})

	// The hook's RBAC, for real, and a token of its ServiceAccount.
	sa, role, binding := chart.serviceAccount, chart.role, chart.roleBinding
	sa.TypeMeta, role.TypeMeta, binding.TypeMeta = chartTypeMeta("v1", "ServiceAccount"), chartTypeMeta("rbac.authorization.k8s.io/v1", "Role"), chartTypeMeta("rbac.authorization.k8s.io/v1", "RoleBinding")
	for _, obj := range []any{&sa, &role, &binding} {
		wantAdmitted(t, applyJSON(t, obj))
	}
	account := "system:serviceaccount:" + ns + ":" + sa.Name
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "pods", "-n", ns}, "yes"},
		{[]string{"get", "pods", "-n", ns}, "no"},
		{[]string{"get", "secrets", "-n", ns}, "no"},
		{[]string{"create", "pods", "-n", "default"}, "no"},
		{[]string{"get", "mutatingwebhookconfigurations"}, "no"},
	} {
		r := kubectl(nil, append([]string{"auth", "can-i", "--as", account}, c.args...)...)
		if got := strings.TrimSpace(r.stdout); got != c.want {
			t.Errorf("the hook's ServiceAccount: can-i %s = %q; want %q", strings.Join(c.args, " "), got, c.want)
		}
	}
	token := strings.TrimSpace(mustKubectl(t, nil, "create", "token", sa.Name, "-n", ns, "--duration", "10m").stdout)
	saKubeconfig := filepath.Join(testDir(t), "install-proof.kubeconfig")
	writeTokenKubeconfig(t, saKubeconfig, token)

	container := chart.job.Spec.Template.Spec.Containers[0]
	t.Logf("the Job's command: %s %s", filepath.Base(theCluster.product), strings.Join(container.Args, " "))

	t.Run("with the front door up the Job succeeds and its log says the answer carries the agent", func(t *testing.T) {
		r := runJobContainer(t, container, saKubeconfig)
		t.Logf("exit %d in %s\nstdout:\n%s\nstderr:\n%s", r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
		if r.code != 0 {
			t.Fatalf("the install-proof Job exited %d; want 0", r.code)
		}
		if !strings.Contains(r.stderr, "install proof: the answer carries the agent") || !strings.Contains(r.stdout, "check-cluster: ok") {
			t.Errorf("the Job's log does not say the answer carried the agent")
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(line, "ok") {
				fmt.Printf("e2e install proof: up: exit %d: %s\n", r.code, strings.Join(strings.Fields(line), " "))
			}
		}
	})

	t.Run("check-cluster from a laptop checks the webhook configuration and proves injection", func(t *testing.T) {
		args := append([]string{"check-cluster", "--kubeconfig", theCluster.kubeconfig, "--mutating-webhook-configuration", configName}, container.Args[1:]...)
		args = removeArg(args, "--probe-only")
		r := runProduct(t, args, nil)
		t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		if r.code != 0 {
			t.Fatalf("check-cluster exited %d; want 0", r.code)
		}
		for _, check := range []string{"caBundle", "serving certificate", "failurePolicy", "matchConditions", "timeoutSeconds", "install proof"} {
			if !hasFindingLine(r.stdout, "ok", check) {
				t.Errorf("check-cluster does not report %q ok", check)
			}
		}
		if !hasFindingLine(r.stdout, "skip", "endpoints") {
			t.Errorf("check-cluster does not skip the endpoints of a URL webhook")
		}
	})

	t.Run("a stored pod with the proof label is never sent to the install-proof webhook", func(t *testing.T) {
		annotations := map[string]string{}
		for _, a := range container.Args {
			if kv, ok := strings.CutPrefix(a, "--probe-annotation="); ok {
				k, v, _ := strings.Cut(kv, "=")
				annotations[k] = v
			}
		}
		p := pod(ns, "stored-proof-pod", annotations)
		p.Labels = map[string]string{"dynamic-config.rs/install-proof": "true"}
		wantAdmitted(t, applyJSON(t, p))
		if _, ok := getPod(t, ns, "stored-proof-pod").Annotations[statusKey]; ok {
			t.Errorf("a stored (not dry-run) pod of the release namespace was injected; the install-proof webhook must answer dry runs only")
		}
		p = pod(ns, "unlabelled", annotations)
		r := applyJSON(t, p, "--dry-run=server", "-o", "json")
		wantAdmitted(t, r)
		if _, ok := decodePod(t, r).Annotations[statusKey]; ok {
			t.Errorf("a pod of the release namespace without the proof label was injected")
		}
	})

	t.Run("with the front door down the Job fails with the API server's reason", func(t *testing.T) {
		if err := s.proc.stop(15 * time.Second); err != nil {
			t.Fatal(err)
		}
		r := runJobContainer(t, container, saKubeconfig)
		t.Logf("exit %d in %s\nstdout:\n%s\nstderr:\n%s", r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
		if r.code != 1 {
			t.Fatalf("the install-proof Job exited %d with the front door down; want 1", r.code)
		}
		for _, want := range []string{"injection not proven after", `failed calling webhook "` + proofWebhookName + `"`} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the Job's report does not say %q", want)
			}
		}
		if !strings.Contains(r.stderr, "install proof: attempt failed, giving up") {
			t.Errorf("the Job's log has no last attempt line")
		}
		if attempts := strings.Count(r.stderr, "install proof: attempt failed"); attempts < 3 {
			t.Errorf("the Job tried %d times; want retries with backoff", attempts)
		}
		for _, line := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(line, "fail") {
				fmt.Printf("e2e install proof: down: exit %d: %s\n", r.code, strings.Join(strings.Fields(line), " "))
			}
		}
	})
}

type productRun struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runJobContainer runs the Job's container as the kubelet would: the image's
// entrypoint (the product binary) with the container's args and literal env,
// and the ServiceAccount's credentials (a kubeconfig here, for the token the
// kubelet would mount).
func runJobContainer(t *testing.T, c corev1.Container, kubeconfig string) productRun {
	t.Helper()
	env := []string{"KUBECONFIG=" + kubeconfig, "HOME=" + t.TempDir()}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return runProduct(t, c.Args, env)
}

// runProduct runs the product binary to its end (bounded) with env as its
// whole environment but PATH.
func runProduct(t *testing.T, args, env []string) productRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, theCluster.product, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := productRun{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("run %s: %v", theCluster.product, err)
	}
	return r
}

func writeTokenKubeconfig(t *testing.T, path, token string) {
	t.Helper()
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: %s, insecure-skip-tls-verify: true}
users:
- name: install-proof
  user: {token: %s}
contexts:
- name: e2e
  context: {cluster: e2e, user: install-proof}
current-context: e2e
`, theCluster.serverURL, token)
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
}

// hasFindingLine reports whether check-cluster's table has a line with
// status and check.
func hasFindingLine(table, status, check string) bool {
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, status+" ") && strings.Contains(line, "  "+check+"  ") {
			return true
		}
	}
	return false
}

func removeArg(args []string, drop string) []string {
	var out []string
	for _, a := range args {
		if a != drop {
			out = append(out, a)
		}
	}
	return out
}

func chartTypeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func objectMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace}
}
