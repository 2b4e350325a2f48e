package main

// The golden corpus and the two-door test (spec 07 §7.2): every case of
// testdata/cases/<case>/ (installation.yaml, namespace, pod.yaml, the
// expected review.json) goes through (pod.yaml may hold a workload instead
// of a Pod: the offline door reads the workload, the cluster door admits
// its pod template)
//   (a) the offline door: `dynamic-config inject -o review`, and
//   (b) the cluster door: the HTTPS front door (real httpserver, generated
//       certificate) talking gRPC over loopback TCP to a real decider,
// and both answers must equal the golden review (the uid aside: the cluster
// door is sent another uid, which must be echoed). Every injected pod is
// admitted again and must be skipped with zero ops. A file in the corpus
// that no case uses fails the test; UPDATE_GOLDEN=1 rewrites review.json.
//
// A case may also hold an optional file `environment`: the installation's
// environment variables (spec 02 §2), one `NAME=value` a line; blank lines
// and lines starting with `#` are ignored, and the value is everything after
// the first `=`, kept verbatim (the loader trims it, 02 §3 rule 1). It is the
// only way to reach the env-only settings (02 §2.2–2.3: agent-image allow
// list, events, tls-skip-verify, agent image, pull secret). Both doors read
// the installation with exactly these variables and nothing of the real
// process environment: the offline door runs inject without --no-env while
// processEnviron (installation_flags.go) answers the case's list — the
// process environment itself is never touched — and the cluster door's
// decider loads with installationloader.Options.Environ set to the same list.
// Without the file both doors use no environment at all (--no-env, nil).
// The subtests are not parallel, since processEnviron is package state.
//
// A case may also hold an optional file `classes.yaml`: a YAML stream of
// DynamicConfigClass / ClusterDynamicConfigClass objects (spec 08). The
// offline door runs inject with --classes-file classes.yaml, the cluster
// door's decider holds the same set (as `decider --classes-file` would);
// without the file classes are off at both doors.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	dmetrics "github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/httpserver"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	fmetrics "github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

const casesDir = "testdata/cases"

// caseFiles are the files every case holds; optionalCaseFiles those it may
// hold; nothing else may sit in a case.
var (
	caseFiles         = []string{"installation.yaml", "namespace", "pod.yaml", "review.json"}
	optionalCaseFiles = []string{"environment", "classes.yaml"}
)

// canonical are the patches of spec 03 §7, by case: compact bytes and SHA-256.
var canonical = map[string]struct {
	bytes  int
	sha256 string
}{
	"canonical-1-consul-sidecar":      {1081, "78db0d92db38ff57d33727832731d813f547c6a370940b4842b216a25fbac01b"},
	"canonical-2-vault-kubernetes-ca": {1353, "e99ae340e56f087e9ee91424300988c61072072e2cc0a9191daa40073c545f1e"},
}

type goldenCase struct {
	name, dir string
}

func (c goldenCase) path(file string) string { return filepath.Join(c.dir, file) }

// discoverCases lists the cases and fails on any file no case uses.
func discoverCases(t *testing.T) []goldenCase {
	t.Helper()
	entries, err := os.ReadDir(casesDir)
	if err != nil {
		t.Fatalf("read the corpus: %v", err)
	}
	update := os.Getenv("UPDATE_GOLDEN") == "1"
	var cases []goldenCase
	for _, e := range entries {
		if !e.IsDir() {
			t.Errorf("unused golden file %s: the corpus holds case directories only", filepath.Join(casesDir, e.Name()))
			continue
		}
		c := goldenCase{name: e.Name(), dir: filepath.Join(casesDir, e.Name())}
		files, err := os.ReadDir(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, f := range files {
			if !(slices.Contains(caseFiles, f.Name()) || slices.Contains(optionalCaseFiles, f.Name())) || f.IsDir() {
				t.Errorf("unused golden file %s: a case holds only %s and optionally %s", c.path(f.Name()),
					strings.Join(caseFiles, ", "), strings.Join(optionalCaseFiles, ", "))
			}
			have[f.Name()] = true
		}
		for _, want := range caseFiles {
			if !have[want] && !(want == "review.json" && update) {
				t.Errorf("case %s lacks %s (UPDATE_GOLDEN=1 writes review.json)", c.name, want)
			}
		}
		cases = append(cases, c)
	}
	for name := range canonical {
		if !slices.ContainsFunc(cases, func(c goldenCase) bool { return c.name == name }) {
			t.Errorf("the canonical case %s is missing from the corpus", name)
		}
	}
	if len(cases) == 0 {
		t.Fatal("the corpus is empty")
	}
	return cases
}

// clusterDoor is the in-cluster path on loopback: the decider (decider/server
// around decider/service) on TCP gRPC, and the front door's HTTPS server
// dialing it with frontdoor/client — with the production logger (to
// io.Discard) and metrics, so benchmarks measure what a cluster runs.
type clusterDoor struct {
	store   *installationloader.Store
	classes *classes.Store // TurnOff for a case without classes.yaml
	url     string
	client  *http.Client
}

func startClusterDoor(tb testing.TB) *clusterDoor {
	tb.Helper()
	logger, err := newLogger(io.Discard, "info", "json")
	if err != nil {
		tb.Fatal(err)
	}
	return startClusterDoorLogging(tb, logger)
}

// startClusterDoorLogging is startClusterDoor with both doors logging to logger.
func startClusterDoorLogging(tb testing.TB, logger *slog.Logger) *clusterDoor {
	tb.Helper()
	store := installationloader.NewStore(installation.Empty())
	cs := classes.NewStore(classes.NewSet(nil))
	cs.TurnOff()
	dm := dmetrics.NewDecider(prometheus.NewRegistry())
	dsrv, err := server.New(server.Config{Logger: logger, Metrics: dm}, store, service.New(store, logger, dm).WithClasses(cs))
	if err != nil {
		tb.Fatal(err)
	}
	dlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = dsrv.Serve(dlis) }()
	tb.Cleanup(func() { dsrv.Shutdown(time.Second) })

	dc, err := client.New(client.Config{Target: dlis.Addr().String(), Plaintext: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { dc.Close() })

	bundle, err := certstest.Write(tb.TempDir(), "tls", time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	pair := certs.New(bundle.CertFile, bundle.KeyFile, nil, nil)
	if err := pair.Load(); err != nil {
		tb.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	hs := httpserver.New(httpserver.Config{
		Admission: handler.New(handler.Config{Decider: dc, Logger: logger, Metrics: fmetrics.NewFrontdoor(reg)}),
		Certs:     pair,
		Gatherer:  reg,
		Logger:    logger,
	})
	hlis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = hs.Serve(ctx, hlis); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })

	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: bundle.Pool(), MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 64,
	}
	tb.Cleanup(transport.CloseIdleConnections)
	return &clusterDoor{
		classes: cs,
		store:   store,
		url:     "https://" + hlis.Addr().String(),
		client:  &http.Client{Timeout: 10 * time.Second, Transport: transport},
	}
}

// door posts a review over HTTPS.
func (d *clusterDoor) door(path string, body []byte) (*review.Response, *deciderv1.Decision, error) {
	resp, err := d.client.Post(d.url+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, data)
	}
	if resp.ProtoMajor != 1 {
		return nil, nil, fmt.Errorf("the front door spoke %s, want HTTP/1.1", resp.Proto)
	}
	answer, err := review.DecodeAnswer(data)
	return answer, nil, err
}

// caseEnviron reads a case's optional environment file: nil (no
// environment, as --no-env) when the case has none.
func caseEnviron(t *testing.T, c goldenCase) []string {
	t.Helper()
	data, err := os.ReadFile(c.path("environment"))
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
			t.Fatalf("%s line %d is %q: want NAME=value", c.path("environment"), i+1, line)
		}
		environ = append(environ, name+"="+strings.TrimRight(value, "\r"))
	}
	return environ
}

// loadCaseInstallation loads a case's installation as the decider would,
// with the case's environment only (none without an environment file).
func loadCaseInstallation(t *testing.T, c goldenCase) *installation.Installation {
	t.Helper()
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: c.path("installation.yaml"), DocumentExplicit: true,
		Environ: caseEnviron(t, c)})
	if err != nil {
		t.Fatalf("installation of case %s: %v", c.name, err)
	}
	return inst
}

// caseClasses reads a case's optional classes.yaml as the decider's
// --classes-file would: nil (classes off) when the case has none.
func caseClasses(t *testing.T, c goldenCase) *classes.Set {
	t.Helper()
	if _, err := os.Stat(c.path("classes.yaml")); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	set, err := loadClassesFile(c.path("classes.yaml"))
	if err != nil {
		t.Fatalf("classes of case %s: %v", c.name, err)
	}
	return set
}

func readCase(t *testing.T, c goldenCase) (namespace string, pod []byte) {
	t.Helper()
	ns, err := os.ReadFile(c.path("namespace"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile(c.path("pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pod, err = yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatalf("pod of case %s: %v", c.name, err)
	}
	namespace = strings.TrimSpace(string(ns))
	// A workload's case admits its pod template, as inject does and as the
	// API server admits the pods its controller creates.
	target, err := manifest.ObjectPodTarget(pod, "", namespace, "")
	if err != nil || target.Pod == nil {
		t.Fatalf("pod.yaml of case %s is neither a Pod nor a workload inject patches: %v", c.name, err)
	}
	return namespace, target.Pod
}

func TestTwoDoors(t *testing.T) {
	cases := discoverCases(t)
	cluster := startClusterDoor(t)
	update := os.Getenv("UPDATE_GOLDEN") == "1"

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			namespace, pod := readCase(t, c)

			// (a) the offline door, through the command itself.
			args := []string{"inject", "-f", c.path("pod.yaml"), "--installation", c.path("installation.yaml"),
				"-n", namespace, "-o", "review"}
			if environ := caseEnviron(t, c); environ != nil {
				saved := processEnviron
				processEnviron = func() []string { return environ }
				t.Cleanup(func() { processEnviron = saved })
			} else {
				args = append(args, "--no-env")
			}
			cls := caseClasses(t, c)
			if cls != nil {
				args = append(args, "--classes-file", c.path("classes.yaml"))
			}
			var stdout, stderr bytes.Buffer
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != exitOK && code != exitRefused {
				t.Fatalf("inject exited %d: %s", code, stderr.String())
			}
			offline, err := review.DecodeAnswer(stdout.Bytes())
			if err != nil {
				t.Fatalf("inject -o review printed %q: %v", stdout.String(), err)
			}
			if (code == exitRefused) == offline.Allowed {
				t.Fatalf("inject exited %d for allowed=%v", code, offline.Allowed)
			}
			if offline.UID != engine.UID {
				t.Fatalf("inject answered uid %q", offline.UID)
			}

			golden := c.path("review.json")
			offlineBody := stableDecisionID(t, stdout.Bytes())
			if update {
				if err := os.WriteFile(golden, offlineBody, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(offlineBody, want) {
				t.Fatalf("inject -o review differs from %s\n got: %s\nwant: %s\nstderr: %s", golden, stdout.Bytes(), want, stderr.String())
			}

			// (b) the cluster door, over HTTPS and loopback gRPC.
			inst := loadCaseInstallation(t, c)
			cluster.store.Swap(inst)
			if cls != nil {
				cluster.classes.Swap(cls)
			} else {
				cluster.classes.TurnOff()
			}
			got, err := engine.AdmitThrough(cluster.door, inst.EnvPolicy, "two-door", pod, namespace, podName(t, pod))
			if err != nil {
				t.Fatal(err)
			}
			if got.Answer.UID != "two-door" {
				t.Fatalf("the front door echoed uid %q", got.Answer.UID)
			}
			got.Answer.UID = engine.UID
			if clusterBody := stableDecisionID(t, append(review.Encode(got.Answer), '\n')); !bytes.Equal(clusterBody, want) {
				t.Fatalf("the cluster door differs from the offline door\ncluster: %s\noffline: %s", clusterBody, want)
			}

			// The canonical examples, byte for byte.
			if canon, ok := canonical[c.name]; ok {
				raw, err := base64.StdEncoding.DecodeString(offline.Patch)
				if err != nil {
					t.Fatal(err)
				}
				sum := sha256.Sum256(raw)
				if len(raw) != canon.bytes || hex.EncodeToString(sum[:]) != canon.sha256 || len(offline.Warnings) != 0 {
					t.Fatalf("canonical patch: %d bytes, sha256 %x, %d warnings; want %d bytes, %s, none\n%s",
						len(raw), sum, len(offline.Warnings), canon.bytes, canon.sha256, raw)
				}
			}

			// Idempotency: the patched pod, admitted again, is skipped with zero ops.
			if offline.Patch != "" {
				_, mutated, err := engine.ApplyAnswerPatch(pod, offline.Patch)
				if err != nil {
					t.Fatal(err)
				}
				again := readmit(t, inst, cls, mutated, namespace)
				if again.Answer.Patch != "" || !again.Answer.Allowed ||
					again.Mutate.GetSkipReason() != deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED {
					t.Fatalf("the patched pod was not skipped as already injected: %s (decision %v)", review.Encode(again.Answer), again.Mutate)
				}
			}
		})
	}
}

// decisionIDPattern is a decision id: a random (version 4) UUID.
var decisionIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// stableDecisionID replaces the decision id of an answer (a fresh UUID per
// decision, audit annotation decision-id) with <decision-id>, so that the
// golden review holds still; a decided answer (one with audit annotations)
// without one fails the test. An answer made without asking the decider has
// no decision and no annotations.
func stableDecisionID(t *testing.T, body []byte) []byte {
	t.Helper()
	re := regexp.MustCompile(`"decision-id":"([^"]*)"`)
	if !bytes.Contains(body, []byte(`"auditAnnotations"`)) {
		return body
	}
	m := re.FindSubmatch(body)
	if m == nil || !decisionIDPattern.Match(m[1]) {
		t.Fatalf("the answer carries no decision-id audit annotation with a UUID: %s", body)
	}
	return re.ReplaceAll(body, []byte(`"decision-id":"<decision-id>"`))
}

func podName(t *testing.T, pod []byte) string {
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

func readmit(t *testing.T, inst *installation.Installation, cls *classes.Set, pod []byte, namespace string) *engine.Admitted {
	t.Helper()
	e, err := engine.New(inst, cls)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	a, err := e.AdmitPod(pod, namespace, podName(t, pod))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestReinvocation: our patch is applied, another mutating webhook then adds
// a container (the API server reinvokes us under reinvocationPolicy
// IfNeeded), and we are called again — nothing may be added twice.
func TestReinvocation(t *testing.T) {
	for _, c := range discoverCases(t) {
		c := c
		t.Run(c.name, func(t *testing.T) {
			namespace, pod := readCase(t, c)
			inst := loadCaseInstallation(t, c)
			cls := caseClasses(t, c)
			first := readmit(t, inst, cls, pod, namespace)
			if first.Answer.Patch == "" {
				t.Skip("the case injects nothing")
			}
			// Another webhook adds a sidecar and a volume after us.
			other := `[{"op":"add","path":"/spec/containers/-","value":{"name":"mesh-proxy","image":"proxy:1"}},` +
				`{"op":"add","path":"/spec/volumes/-","value":{"name":"mesh-certs","emptyDir":{}}}]`
			reinvoked, err := jsonpatch.Apply(first.Mutated, []byte(other))
			if err != nil {
				t.Fatal(err)
			}
			second := readmit(t, inst, cls, reinvoked, namespace)
			if !second.Answer.Allowed || second.Answer.Patch != "" || string(second.Patch) != "[]" {
				t.Fatalf("the reinvocation patched again: %s", review.Encode(second.Answer))
			}
			var final struct {
				Spec struct {
					Containers, InitContainers, Volumes []struct {
						Name string `json:"name"`
					}
				} `json:"spec"`
			}
			if err := json.Unmarshal(second.Mutated, &final); err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, list := range [][]struct {
				Name string `json:"name"`
			}{final.Spec.Containers, final.Spec.InitContainers, final.Spec.Volumes} {
				for _, x := range list {
					seen[x.Name]++
				}
			}
			for name, n := range seen {
				if n > 1 {
					t.Fatalf("%s appears %d times", name, n)
				}
			}
		})
	}
}

// TestInjectCommand covers the offline door's command line (spec 07 §1.4):
// formats, stderr lines and exit codes.
func TestInjectCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.yaml", "")
	canon := filepath.Join(casesDir, "canonical-1-consul-sidecar", "pod.yaml")
	refused := filepath.Join(casesDir, "refuse-malformed-watch-seconds", "pod.yaml")
	plain := filepath.Join(casesDir, "skip-no-annotations", "pod.yaml")
	canonJSON := write("pod.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"app","namespace":"team-a","annotations":{`+
		`"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul","dynamic-config.rs/endpoint":"http://consul:8500",`+
		`"dynamic-config.rs/key":"myapp/config.json","dynamic-config.rs/path":"/config/rendered.toml"}},"spec":{"containers":[{"name":"app"}]}}`)
	multi := write("multi.yaml", "---\n"+mustRead(t, canon)+"---\n"+mustRead(t, plain))
	deployment := write("deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n")

	tests := []struct {
		name       string
		args       []string
		stdin      string
		code       int
		stdout     []string // fragments, in order
		stderr     string   // exact
		noStdout   bool
		stdoutFull string
	}{
		{
			name: "a YAML pod comes out as the mutated YAML", args: []string{"-f", canon}, code: exitOK,
			stdout: []string{"apiVersion: v1\n", "dynamic-config.rs/status: injected\n", "name: dynamic-config-agent\n"},
			stderr: canon + ": injected (1 agent container(s))\n",
		},
		{
			name: "a JSON pod comes out as indented JSON", args: []string{"-f", canonJSON}, code: exitOK,
			stdout: []string{"{\n  \"apiVersion\": \"v1\",", `"dynamic-config.rs/status": "injected"`},
			stderr: canonJSON + ": injected (1 agent container(s))\n",
		},
		{
			name: "-o patch prints the canonical patch", args: []string{"-f", canon, "-o", "patch"}, code: exitOK,
			stdout: []string{`[{"op":"add","path":"/metadata/annotations/dynamic-config.rs~1status","value":"injected"},`},
			stderr: canon + ": injected (1 agent container(s))\n",
		},
		{
			name: "a refused pod prints nothing on stdout and exits 1", args: []string{"-f", refused}, code: exitRefused, noStdout: true,
			stderr: refused + `: refused (DynamicConfigMalformed 400): dynamic-config.rs/watch-seconds is "15s": whole seconds` + "\n",
		},
		{
			name: "several documents answer with a JSON array of reviews", args: []string{"-f", multi, "-o", "review"}, code: exitOK,
			stdout: []string{`[{"apiVersion":"admission.k8s.io/v1"`, `},{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"allowed":true,"uid":"offline"}}]` + "\n"},
			stderr: multi + ": injected (1 agent container(s))\n" + multi + ": nothing to inject (no dynamic-config.rs/ annotation)\n",
		},
		{
			name: "several documents are separated by ---", args: []string{"-f", multi}, code: exitOK,
			stdout: []string{"name: dynamic-config-agent\n", "---\napiVersion: v1\n"},
			stderr: multi + ": injected (1 agent container(s))\n" + multi + ": nothing to inject (no dynamic-config.rs/ annotation)\n",
		},
		{
			name: "stdin is read with -f -", args: []string{"-f", "-", "-o", "patch"}, stdin: mustRead(t, plain), code: exitOK,
			stdoutFull: "[]\n", stderr: "-: nothing to inject (no dynamic-config.rs/ annotation)\n",
		},
		{
			name: "a Deployment without a pod template is a usage error", args: []string{"-f", deployment}, code: exitUsage, noStdout: true,
			stderr: "inject: " + deployment + " document 1: Deployment/d has no pod template (spec.template): no spec\n",
		},
		{
			name: "an unknown output format is a usage error", args: []string{"-f", canon, "-o", "xml"}, code: exitUsage, noStdout: true,
			stderr: "inject: -o is \"xml\": yaml, json, patch or review\n",
		},
		{
			name: "a missing -f is a usage error", args: []string{}, code: exitUsage, noStdout: true,
			stderr: "inject: -f FILE is required\n" + injectUsage + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"inject", "--installation", empty, "--no-env"}, tt.args...)
			code := run(args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.code || stderr.String() != tt.stderr {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tt.code, tt.stderr)
			}
			out := stdout.String()
			if tt.noStdout && out != "" {
				t.Fatalf("stdout %q, want nothing", out)
			}
			if tt.stdoutFull != "" && out != tt.stdoutFull {
				t.Fatalf("stdout %q, want %q", out, tt.stdoutFull)
			}
			rest := out
			for _, frag := range tt.stdout {
				i := strings.Index(rest, frag)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", frag, out)
				}
				rest = rest[i+len(frag):]
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
