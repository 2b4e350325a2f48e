package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// envChartRenderDir is the directory `make chart-render` writes the rendered
// chart into (mk/chart.mk CHART_RENDER_DIR); `make e2e` renders first and
// passes it.
const envChartRenderDir = "E2E_CHART_RENDER_DIR"

// repoRoot is the product repository, seen from this module's directory.
const repoRoot = "../.."

// manifestSet is one set of manifests the platform team would apply: a file of
// `make chart-render`, or the output of `kubectl kustomize` of a directory.
type manifestSet struct {
	name      string
	rendered  string // file name in the render directory
	kustomize string // directory under the repository root, rendered with `kubectl kustomize`
	crds      bool   // needs the cert-manager and prometheus-operator CRDs
}

var chartManifestSets = []manifestSet{
	{name: "the chart with its default values is accepted", rendered: "chart-default.yaml"},
	{name: "the chart with every feature on is accepted", rendered: "chart-all-features.yaml"},
	{name: "the chart's cert-manager Certificates and ServiceMonitors are accepted against their CRDs", rendered: "chart-crd-features.yaml", crds: true},
	{name: "kubectl kustomize of the base is accepted", kustomize: "deploy/kustomize/base"},
	{name: "kubectl kustomize of the example overlay is accepted", kustomize: "deploy/kustomize/overlays/example"},
	{name: "the chart's remote front door (frontdoor.remote) is accepted", rendered: "chart-remote.yaml"},
	{name: "kubectl kustomize of the remote overlay is accepted", kustomize: "deploy/kustomize/overlays/remote"},
}

// TestTheChartAndKustomizeManifestsPassStrictServerValidation applies every
// rendered set with `kubectl apply --dry-run=server --validate=strict` (issue
// 8): the real apiserver runs its schema, defaulting, validation and
// admission on every object and refuses unknown or duplicate fields, without
// storing anything. The namespaces the manifests use are created for real
// first (a dry-run namespace does not exist for the objects inside it).
func TestTheChartAndKustomizeManifestsPassStrictServerValidation(t *testing.T) {
	render := chartRenderDir(t)

	for _, set := range chartManifestSets {
		t.Run(set.name, func(t *testing.T) {
			path := set.materialise(t, render)
			if set.crds {
				installChartCRDs(t)
			}
			objects := manifestObjects(t, path)
			createNamespaces(t, objects)
			r := strictServerDryRun(t, path)
			if r.err != nil {
				t.Fatalf("the apiserver refused %s:\n%s", path, r)
			}
			wantEveryObjectAccepted(t, objects, r)
			for _, w := range warningLines(r) {
				if !strings.Contains(w, "last-applied-configuration") {
					t.Errorf("the apiserver warned about %s: %s", path, w)
				}
			}
		})
	}

	t.Run("a rendered manifest with an unknown field is refused", func(t *testing.T) {
		original, err := os.ReadFile(filepath.Join(render, "chart-default.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		mutated, ok := withUnknownDeploymentField(original, "replicaCount: 2")
		if !ok {
			t.Fatalf("no Deployment spec in chart-default.yaml to put an unknown field into")
		}
		path := filepath.Join(testDir(t), "chart-default-unknown-field.yaml")
		if err := os.WriteFile(path, mutated, 0o644); err != nil {
			t.Fatal(err)
		}
		createNamespaces(t, manifestObjects(t, path))
		r := strictServerDryRun(t, path)
		if r.err == nil {
			t.Fatalf("kubectl accepted a Deployment with spec.replicaCount; want a strict-validation refusal\n%s", r)
		}
		if !strings.Contains(r.stderr, `unknown field "spec.replicaCount"`) {
			t.Errorf("kubectl's refusal does not name the unknown field spec.replicaCount\n%s", r)
		}
	})
}

// chartRenderDir is the render directory, which must hold the rendered files.
func chartRenderDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(envChartRenderDir)
	if dir == "" {
		t.Fatalf("%s is not set; run `make e2e`, which runs `make chart-render` first", envChartRenderDir)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the rendered manifests are missing (run `make chart-render`): %v", err)
	}
	return dir
}

// materialise returns the path of the set's manifests: the rendered file, or
// the output of `kubectl kustomize`, written into the test's directory.
func (s manifestSet) materialise(t *testing.T, render string) string {
	t.Helper()
	if s.rendered != "" {
		path := filepath.Join(render, s.rendered)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("the rendered manifests are missing (run `make chart-render`): %v", err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			t.Fatalf("%s is empty", path)
		}
		return path
	}
	dir := filepath.Join(repoRoot, s.kustomize)
	if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err != nil {
		t.Fatalf("no kustomization to render: %v", err)
	}
	r := mustKubectl(t, nil, "kustomize", dir)
	if strings.TrimSpace(r.stdout) == "" {
		t.Fatalf("kubectl kustomize %s rendered nothing\n%s", s.kustomize, r)
	}
	path := filepath.Join(testDir(t), "kustomized.yaml")
	if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// manifestObject is what the test needs to know of one object of a set.
type manifestObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// manifestObjects lists the objects of a manifest file as kubectl reads them
// (`kubectl create --dry-run=client -o json`, which contacts the apiserver only
// for discovery). A file without objects fails the test.
func manifestObjects(t *testing.T, path string) []manifestObject {
	t.Helper()
	r := mustKubectl(t, nil, "create", "--dry-run=client", "-o", "json", "-f", path)
	var objects []manifestObject
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for {
		var v struct {
			manifestObject
			Items []manifestObject `json:"items"`
		}
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode kubectl's reading of %s: %v\n%s", path, err, r)
		}
		if v.Kind == "List" {
			objects = append(objects, v.Items...)
		} else {
			objects = append(objects, v.manifestObject)
		}
	}
	if len(objects) == 0 {
		t.Fatalf("%s holds no objects", path)
	}
	return objects
}

// createNamespaces creates, for real, every namespace the objects live in.
func createNamespaces(t *testing.T, objects []manifestObject) {
	t.Helper()
	var names []string
	for _, o := range objects {
		if ns := o.Metadata.Namespace; ns != "" && !slices.Contains(names, ns) {
			names = append(names, ns)
		}
	}
	for _, ns := range names {
		r := kubectl(nil, "create", "namespace", ns)
		if r.err != nil && !strings.Contains(r.stderr, "AlreadyExists") {
			t.Fatalf("create namespace %s:\n%s", ns, r)
		}
	}
}

// installChartCRDs installs chartCRDs (for real: the CRDs are cluster-scoped
// and no other test uses their kinds) and waits until they are served.
func installChartCRDs(t *testing.T) {
	t.Helper()
	mustKubectl(t, []byte(chartCRDs), "apply", "--validate=strict", "-f", "-")
	mustKubectl(t, nil, append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, chartCRDNames...)...)
}

// strictServerDryRun is the check of issue 8.
func strictServerDryRun(t *testing.T, path string) kubectlResult {
	t.Helper()
	return kubectl(nil, "apply", "--dry-run=server", "--validate=strict", "-f", path)
}

// wantEveryObjectAccepted checks that kubectl reported each object of the set
// as accepted by the server's dry run (`<kind>/<name> created (server dry run)`).
func wantEveryObjectAccepted(t *testing.T, objects []manifestObject, r kubectlResult) {
	t.Helper()
	accepted := 0
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasSuffix(line, "(server dry run)") {
			accepted++
		}
	}
	if accepted != len(objects) {
		t.Errorf("kubectl reported %d objects accepted by the server's dry run; the set holds %d\n%s", accepted, len(objects), r)
	}
	t.Logf("%d objects accepted", accepted)
}

// withUnknownDeploymentField puts field (a `key: value` line) into the spec of
// the first Deployment of a rendered multi-document manifest.
func withUnknownDeploymentField(manifest []byte, field string) ([]byte, bool) {
	docs := strings.Split(string(manifest), "\n---")
	for i, doc := range docs {
		if !strings.Contains(doc, "\nkind: Deployment\n") {
			continue
		}
		at := strings.Index(doc, "\nspec:\n")
		if at < 0 {
			continue
		}
		at += len("\nspec:\n")
		docs[i] = doc[:at] + "  " + field + "\n" + doc[at:]
		return []byte(strings.Join(docs, "\n---")), true
	}
	return manifest, false
}
