package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// corpusDir is the golden corpus of the product (test/cases).
const corpusDir = repoRoot + "/test/cases"

// classCase is one corpus case that holds a classes.yaml.
type classCase struct {
	name, dir, namespace string
	classes              []byte
	podYAML              []byte
	pod                  corev1.Pod
	golden               struct {
		Response struct {
			Allowed          bool              `json:"allowed"`
			Patch            string            `json:"patch"`
			AuditAnnotations map[string]string `json:"auditAnnotations"`
			Status           struct {
				Message string `json:"message"`
				Reason  string `json:"reason"`
			} `json:"status"`
		} `json:"response"`
	}
}

// classCorpus reads every corpus case with a classes.yaml. The cases run
// here with the empty installation and no environment: a case that needs
// more fails the test (extend it).
func classCorpus(t *testing.T) []*classCase {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	var cases []*classCase
	for _, e := range entries {
		dir := filepath.Join(corpusDir, e.Name())
		classes, err := os.ReadFile(filepath.Join(dir, "classes.yaml"))
		if err != nil {
			continue
		}
		c := &classCase{name: e.Name(), dir: dir, classes: classes}
		read := func(file string) []byte {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if inst := strings.TrimSpace(string(read("installation.yaml"))); inst != "" {
			t.Fatalf("case %s has an installation; this test decides with the empty one", c.name)
		}
		if _, err := os.Stat(filepath.Join(dir, "environment")); err == nil {
			t.Fatalf("case %s has an environment; this test decides without one", c.name)
		}
		c.namespace = strings.TrimSpace(string(read("namespace")))
		c.podYAML = read("pod.yaml")
		if err := json.Unmarshal(read("review.json"), &c.golden); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatal("the corpus holds no case with classes.yaml")
	}
	return cases
}

// TestTheClassCorpusThroughTheAPIServer puts every corpus case with a
// classes.yaml through the cluster with the classes as real objects (spec 08
// §5): the classes are applied with kubectl, the decider watches them, the
// pod is created with kubectl, and the answer must match the golden review
// the offline and HTTPS doors give with --classes-file: the same classes
// revision, the same refusal, the same agent.
func TestTheClassCorpusThroughTheAPIServer(t *testing.T) {
	cases := classCorpus(t)
	installClassCRDs(t)
	for _, c := range cases { // kubectl reads the YAML as the user's kubectl would
		r := mustKubectl(t, c.podYAML, "create", "--dry-run=client", "-o", "json", "-f", "-")
		if err := json.Unmarshal([]byte(r.stdout), &c.pod); err != nil {
			t.Fatalf("case %s pod: %v", c.name, err)
		}
	}

	dir := testDir(t)
	installation := filepath.Join(dir, "installation.yaml")
	writeInstallation(t, installation, "")
	ports, err := reservePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	addr, metricsAddr := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	d := mustStart(t, "decider", filepath.Join(dir, "decider.log"), nil, theCluster.product, "decider",
		"--addr", addr, "--metrics-addr", metricsAddr, "--plaintext", "--installation", installation,
		"--classes", "--kubeconfig", theCluster.kubeconfig)
	if err := eventually("the decider's /readyz", 60*time.Second, 200*time.Millisecond, aliveCheck(d, func() error {
		return httpOK(http.DefaultClient, "http://"+metricsAddr+"/readyz", "")
	})); err != nil {
		t.Fatal(err)
	}
	_, door := startFrontdoor(t, "frontdoor", addr)
	var namespaces []string
	for _, c := range cases {
		if !slices.Contains(namespaces, c.namespace) {
			namespaces = append(namespaces, c.namespace)
		}
		for _, ns := range classNamespaces(t, c.classes) {
			if !slices.Contains(namespaces, ns) {
				namespaces = append(namespaces, ns)
			}
		}
	}
	for _, ns := range namespaces {
		ensureNamespace(t, ns)
		registerInjection(t, ns+"-corpus-inject", ns, door, injection{})
		waitForEffect(t, "the injection webhook takes effect in "+ns, pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
	}

	var applied []byte
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !bytes.Equal(applied, c.classes) {
				mustKubectl(t, nil, "delete", "dynamicconfigclasses", "--all", "--all-namespaces", "--wait")
				mustKubectl(t, nil, "delete", "clusterdynamicconfigclasses", "--all", "--wait")
				mustKubectl(t, c.classes, "apply", "-f", "-")
				applied = c.classes
			}
			want := c.golden.Response
			wantRevision := want.AuditAnnotations["classes-revision"]
			if wantRevision != "" {
				waitForClassesRevision(t, d, wantRevision)
			}

			p := c.pod.DeepCopy()
			p.APIVersion, p.Kind = "v1", "Pod"
			p.Namespace, p.Name = c.namespace, c.name
			r := applyJSON(t, p)
			if !want.Allowed {
				wantRefused(t, r, want.Status.Reason, want.Status.Message)
				return
			}
			wantAdmitted(t, r)
			stored := getPod(t, c.namespace, c.name)
			if got := auditAnnotations(t, "pods", c.namespace, c.name)[injectWebhookName+"/classes-revision"]; got != wantRevision {
				t.Errorf("audit classes-revision %q; the golden review has %q", got, wantRevision)
			}
			if want.Patch == "" {
				if len(stored.Spec.Containers) != len(c.pod.Spec.Containers) {
					t.Errorf("the pod was changed; the golden review has no patch")
				}
				return
			}
			golden := goldenAgent(t, want.Patch)
			var agent *corev1.Container
			for i := range stored.Spec.Containers {
				if stored.Spec.Containers[i].Name == golden.Name {
					agent = &stored.Spec.Containers[i]
				}
			}
			if agent == nil {
				t.Fatalf("the stored pod has no %s container", golden.Name)
			}
			equalLines(t, "agent args", agent.Args, golden.Args)
			equalLines(t, "agent env", lines(agent.Env, envLine), lines(golden.Env, envLine))
		})
	}
}

// installClassCRDs applies the chart's class CRDs and waits until they serve.
func installClassCRDs(t *testing.T) {
	t.Helper()
	mustKubectl(t, nil, "apply", "-f", classCRDDir)
	mustKubectl(t, nil, "wait", "--for", "condition=Established", "--timeout", "60s",
		"crd/dynamicconfigclasses.dynamic-config.rs", "crd/clusterdynamicconfigclasses.dynamic-config.rs")
}

// classNamespaces are the namespaces of the namespaced classes of a stream,
// as kubectl reads it (a client-side dry run prints one JSON object per
// document).
func classNamespaces(t *testing.T, stream []byte) []string {
	t.Helper()
	r := mustKubectl(t, stream, "create", "--dry-run=client", "-o", "json", "-f", "-")
	var out []string
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var obj struct {
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("kubectl printed %q: %v", r.stdout, err)
		}
		if obj.Metadata.Namespace != "" {
			out = append(out, obj.Metadata.Namespace)
		}
	}
	return out
}

// waitForClassesRevision waits until the decider's last "classes in force"
// line names revision.
func waitForClassesRevision(t *testing.T, d *process, revision string) {
	t.Helper()
	err := eventually("the decider holds classes "+revision, classTimeout, 100*time.Millisecond, aliveCheck(d, func() error {
		last := ""
		for _, line := range strings.Split(d.logText(), "\n") {
			var entry struct {
				Msg      string `json:"msg"`
				Revision string `json:"classes_revision"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "classes in force" {
				last = entry.Revision
			}
		}
		if last != revision {
			return fmt.Errorf("classes in force: %q", last)
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
}

// goldenAgent is the agent container a golden base64 JSON Patch adds.
func goldenAgent(t *testing.T, patch64 string) corev1.Container {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(patch64)
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &ops); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if !strings.HasPrefix(op.Path, "/spec/containers") {
			continue
		}
		var list []corev1.Container
		if json.Unmarshal(op.Value, &list) != nil {
			var one corev1.Container
			if json.Unmarshal(op.Value, &one) != nil {
				continue
			}
			list = []corev1.Container{one}
		}
		for _, c := range list {
			if c.Name == "dynamic-config-agent" {
				return c
			}
		}
	}
	t.Fatalf("the golden patch adds no dynamic-config-agent container: %s", raw)
	return corev1.Container{}
}
