// Package cases is the golden corpus (spec 07 §7.2): each directory here is
// one case — installation.yaml, namespace, pod.yaml (a Pod, or a workload
// whose pod template is admitted) and the expected review.json, and
// optionally `environment` and `classes.yaml` — and this package reads
// them for the tests that run the corpus through every door: the two-door
// test and the re-invocation test here, `inject -o review` in
// cmd/dynamic-config, the benchmarks, and the tests of other packages that
// borrow its pods. A new refusal gets a case here; UPDATE_GOLDEN=1 `make
// test-update` rewrites every review.json (TestTwoDoors).
//
// A case may hold a file `environment`: the installation's environment
// variables (spec 02 §2), one `NAME=value` a line; blank lines and lines
// starting with `#` are ignored, and the value is everything after the
// first `=`, kept verbatim (the loader trims it, 02 §3 rule 1). It is the
// only way to reach the env-only settings (02 §2.2–2.3: agent-image allow
// list, events, tls-skip-verify, agent image, pull secret). Every door
// reads the installation with exactly these variables and nothing of the
// real process environment; without the file, with no environment at all
// (--no-env, nil).
//
// A case may hold a file `classes.yaml`: a YAML stream of
// DynamicConfigClass / ClusterDynamicConfigClass objects (spec 08), which
// every door's decider holds (as `decider --classes-file` would); without
// the file classes are off.
package cases

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
)

// Files are the files every case holds; OptionalFiles those it may hold;
// nothing else may sit in a case.
var (
	Files         = []string{"installation.yaml", "namespace", "pod.yaml", "review.json"}
	OptionalFiles = []string{"environment", "classes.yaml"}
)

// Canonical are the patches of spec 03 §7, by case: compact bytes and SHA-256,
// with the revision stamp of spec 10 §8 (docs/spec-changes.md, issue 42) as
// their second op: the spec's bytes plus that one op.
var Canonical = map[string]struct {
	Bytes  int
	SHA256 string
}{
	"canonical-1-consul-sidecar":      {1176, "6bb5df847ba32407a03970edd49ef9f46e485cabe5ddaff85e3e3247eca753fa"},
	"canonical-2-vault-kubernetes-ca": {1448, "801035a028f976955be6c3c22f0248c4f4ba2a9940ef0463ec31394ff29fb1e6"},
}

// Dir is the corpus directory (this package's).
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Updating reports whether the goldens are being rewritten (UPDATE_GOLDEN=1).
func Updating() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Case is one case of the corpus.
type Case struct {
	Name, Dir string
}

// Named is the case called name.
func Named(name string) Case { return Case{Name: name, Dir: filepath.Join(Dir(), name)} }

// Path is the path of one of the case's files.
func (c Case) Path(file string) string { return filepath.Join(c.Dir, file) }

// All lists the cases, failing t on any file no case uses (the package's
// own Go files aside) and on a case that lacks a file.
func All(t testing.TB) []Case {
	t.Helper()
	entries, err := os.ReadDir(Dir())
	if err != nil {
		t.Fatalf("read the corpus: %v", err)
	}
	var cases []Case
	for _, e := range entries {
		if !e.IsDir() {
			if !strings.HasSuffix(e.Name(), ".go") {
				t.Errorf("unused golden file %s: the corpus holds case directories only", filepath.Join(Dir(), e.Name()))
			}
			continue
		}
		c := Named(e.Name())
		files, err := os.ReadDir(c.Dir)
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, f := range files {
			if !(slices.Contains(Files, f.Name()) || slices.Contains(OptionalFiles, f.Name())) || f.IsDir() {
				t.Errorf("unused golden file %s: a case holds only %s and optionally %s", c.Path(f.Name()),
					strings.Join(Files, ", "), strings.Join(OptionalFiles, ", "))
			}
			have[f.Name()] = true
		}
		for _, want := range Files {
			if !have[want] && !(want == "review.json" && Updating()) {
				t.Errorf("case %s lacks %s (UPDATE_GOLDEN=1 writes review.json)", c.Name, want)
			}
		}
		cases = append(cases, c)
	}
	for name := range Canonical {
		if !slices.ContainsFunc(cases, func(c Case) bool { return c.Name == name }) {
			t.Errorf("the canonical case %s is missing from the corpus", name)
		}
	}
	if len(cases) == 0 {
		t.Fatal("the corpus is empty")
	}
	return cases
}

// Environ reads the case's environment file: nil (no environment, as
// --no-env) when the case has none.
func (c Case) Environ(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(c.Path("environment"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	environ := []string{}
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimLeft(line, " \t"), "=")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			t.Fatalf("%s line %d is %q: want NAME=value", c.Path("environment"), i+1, line)
		}
		environ = append(environ, name+"="+strings.TrimRight(value, "\r"))
	}
	return environ
}

// Installation loads the case's installation as the decider would, with
// the case's environment only (none without an environment file).
func (c Case) Installation(t testing.TB) *installation.Installation {
	t.Helper()
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: c.Path("installation.yaml"), DocumentExplicit: true,
		Environ: c.Environ(t)})
	if err != nil {
		t.Fatalf("installation of case %s: %v", c.Name, err)
	}
	return inst
}

// HasClasses reports whether the case holds a classes.yaml.
func (c Case) HasClasses() bool {
	_, err := os.Stat(c.Path("classes.yaml"))
	return err == nil
}

// Classes reads the case's classes.yaml as the decider's --classes-file
// would: nil (classes off) when the case has none.
func (c Case) Classes(t testing.TB) *classes.Set {
	t.Helper()
	if !c.HasClasses() {
		return nil
	}
	set, err := deciderd.ReadClassesFile(c.Path("classes.yaml"))
	if err != nil {
		t.Fatalf("classes of case %s: %v", c.Name, err)
	}
	return set
}

// Namespace is the case's namespace.
func (c Case) Namespace(t testing.TB) string {
	t.Helper()
	ns, err := os.ReadFile(c.Path("namespace"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ns))
}

// Pod is the case's namespace and the pod (JSON) it admits: pod.yaml's
// Pod, or a workload's pod template, as inject does and as the API server
// admits the pods its controller creates.
func (c Case) Pod(t testing.TB) (namespace string, pod []byte) {
	t.Helper()
	namespace = c.Namespace(t)
	y, err := os.ReadFile(c.Path("pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	object, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("pod of case %s: %v", c.Name, err)
	}
	target, err := manifest.ObjectPodTarget(object, "", namespace, "")
	if err != nil || target.Pod == nil {
		t.Fatalf("pod.yaml of case %s is neither a Pod nor a workload inject patches: %v", c.Name, err)
	}
	return namespace, target.Pod
}

// Golden is the case's expected review.json.
func (c Case) Golden(t testing.TB) []byte {
	t.Helper()
	want, err := os.ReadFile(c.Path("review.json"))
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// DecisionIDPattern is a decision id: a random (version 4) UUID.
var DecisionIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

var decisionIDAnnotation = regexp.MustCompile(`"decision-id":"([^"]*)"`)

// StableDecisionID replaces the decision id of an answer (a fresh UUID per
// decision, audit annotation decision-id) with <decision-id>, so that the
// golden review holds still; a decided answer (one with audit annotations)
// without one fails the test. An answer made without asking the decider has
// no decision and no annotations.
func StableDecisionID(t testing.TB, body []byte) []byte {
	t.Helper()
	if !strings.Contains(string(body), `"auditAnnotations"`) {
		return body
	}
	m := decisionIDAnnotation.FindSubmatch(body)
	if m == nil || !DecisionIDPattern.Match(m[1]) {
		t.Fatalf("the answer carries no decision-id audit annotation with a UUID: %s", body)
	}
	return decisionIDAnnotation.ReplaceAll(body, []byte(`"decision-id":"<decision-id>"`))
}

// PodName is a pod's metadata.name.
func PodName(t testing.TB, pod []byte) string {
	t.Helper()
	var m struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(pod, &m); err != nil {
		t.Fatal(err)
	}
	return m.Metadata.Name
}
