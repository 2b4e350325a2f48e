package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// kubectlResult is one kubectl run: its output and whether it succeeded.
type kubectlResult struct {
	args   []string
	stdout string
	stderr string
	err    error
}

func (r kubectlResult) String() string {
	return fmt.Sprintf("kubectl %s\nerror: %v\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.err, r.stdout, r.stderr)
}

// kubectl runs kubectl against the test cluster, with stdin when non-nil.
func kubectl(stdin []byte, args ...string) kubectlResult {
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	full := append([]string{"--kubeconfig", theCluster.kubeconfig}, args...)
	cmd := exec.CommandContext(ctx, theCluster.kubectl, full...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return kubectlResult{args: args, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// mustKubectl runs kubectl and fails the test when it does not succeed.
func mustKubectl(t *testing.T, stdin []byte, args ...string) kubectlResult {
	t.Helper()
	r := kubectl(stdin, args...)
	if r.err != nil {
		t.Fatalf("%s", r)
	}
	return r
}

// applyJSON runs `kubectl apply -f -` with obj (marshalled as JSON) plus
// extra arguments, e.g. "--dry-run=server" or "-o", "json".
func applyJSON(t *testing.T, obj any, extra ...string) kubectlResult {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("marshal manifest: %v", err)
	}
	return kubectl(b, append([]string{"apply", "-f", "-"}, extra...)...)
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

// newNamespace creates a fresh namespace for t. Without a controller-manager a
// deleted namespace stays Terminating, so namespaces are never reused and
// never deleted; the etcd of the run is thrown away afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	base := nonName.ReplaceAllString(strings.ToLower(t.Name()), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	name := strings.Trim(base, "-") + "-" + randomHex(3)
	mustKubectl(t, nil, "create", "namespace", name)
	return name
}

// getPod reads the STORED pod back from the API server.
func getPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	r := mustKubectl(t, nil, "get", "pod", name, "-n", ns, "-o", "json")
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(r.stdout), &pod); err != nil {
		t.Fatalf("decode stored pod %s/%s: %v\n%s", ns, name, err, r.stdout)
	}
	return &pod
}

// decodePod decodes kubectl's `-o json` output of one pod.
func decodePod(t *testing.T, r kubectlResult) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	if err := json.Unmarshal([]byte(r.stdout), &pod); err != nil {
		t.Fatalf("decode pod from kubectl output: %v\n%s", err, r)
	}
	return &pod
}

// podExists reports whether ns/name is stored.
func podExists(t *testing.T, ns, name string) bool {
	t.Helper()
	r := kubectl(nil, "get", "pod", name, "-n", ns, "-o", "name", "--ignore-not-found")
	if r.err != nil {
		t.Fatalf("%s", r)
	}
	return strings.TrimSpace(r.stdout) != ""
}

// appImage is the image of every application container; nothing pulls it
// (no kubelet runs).
const appImage = "registry.example/e2e/app:1.0"

// pod builds a one-container Pod manifest.
func pod(ns, name string, annotations map[string]string, env ...corev1.EnvVar) *corev1.Pod {
	p := &corev1.Pod{}
	p.APIVersion, p.Kind = "v1", "Pod"
	p.Name, p.Namespace = name, ns
	p.Annotations = annotations
	p.Spec.Containers = []corev1.Container{{Name: "app", Image: appImage, Env: env}}
	return p
}

// wantRefused asserts that kubectl failed and that its error names the reason
// and carries every fragment.
func wantRefused(t *testing.T, r kubectlResult, reason string, fragments ...string) {
	t.Helper()
	if r.err == nil {
		t.Fatalf("kubectl succeeded; want a refusal with reason %s\n%s", reason, r)
	}
	if reason != "" && !strings.Contains(r.stderr, "("+reason+")") {
		t.Errorf("kubectl's error does not show the reason (%s)\n%s", reason, r)
	}
	for _, f := range fragments {
		if !strings.Contains(r.stderr, f) {
			t.Errorf("kubectl's error lacks %q\n%s", f, r)
		}
	}
}

// wantAdmitted asserts that kubectl succeeded.
func wantAdmitted(t *testing.T, r kubectlResult) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("kubectl failed; want the object admitted\n%s", r)
	}
}

// warningLines are kubectl's `Warning: …` lines on stderr.
func warningLines(r kubectlResult) []string {
	var out []string
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(line, "Warning: ") {
			out = append(out, strings.TrimPrefix(line, "Warning: "))
		}
	}
	return out
}

// apiserverMetric sums the samples of one apiserver metric whose label set
// contains every labels fragment (e.g. `name="inject.dynamic-config.rs"`).
func apiserverMetric(t *testing.T, metric string, labels ...string) float64 {
	t.Helper()
	r := mustKubectl(t, nil, "get", "--raw", "/metrics")
	var sum float64
lines:
	for _, line := range strings.Split(r.stdout, "\n") {
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue lines
			}
		}
		var v float64
		fields := strings.Fields(line)
		if _, err := fmt.Sscan(fields[len(fields)-1], &v); err == nil {
			sum += v
		}
	}
	return sum
}
