package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/test/cases"
)

// gitTemplate is a pod template asking for a git agent; the installation
// of refuse-policy-source-deny denies git in namespace sandbox only.
const gitTemplate = `    metadata:
      labels:
        app: web
      annotations:
        dynamic-config.rs/inject: "true"
        dynamic-config.rs/source: "git"
        dynamic-config.rs/endpoint: "git@github.com:acme/config.git"
        dynamic-config.rs/ref: "main"
        dynamic-config.rs/key: "billing/prod.yaml"
        dynamic-config.rs/ssh-secret: "config-deploy-key"
        dynamic-config.rs/path: "/config/rendered.yaml"
    spec:
      securityContext:
        fsGroup: 65532 # the installation's file-mode 0640: the app reads by group
      containers:
      - name: app
        image: registry.example/app:1
`

func workloadYAML(apiVersion, kind, namespace, templateParent string) string {
	ns := ""
	if namespace != "" {
		ns = "  namespace: " + namespace + "\n"
	}
	return "apiVersion: " + apiVersion + "\nkind: " + kind + "\nmetadata:\n  name: web\n" + ns +
		"spec:\n" + templateParent + "  template:\n" + gitTemplate
}

// injectRun runs inject under the source-deny installation.
func injectRun(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	inst := cases.Named("refuse-policy-source-deny").Path("installation.yaml")
	var out, errOut bytes.Buffer
	code = run(append([]string{"inject", "--installation", inst, "--no-env"}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), code
}

// agentsAt decodes a YAML or JSON manifest stream and returns, per document,
// the container names at the pod spec the path leads to.
func containersAt(t *testing.T, doc []byte, path ...string) []string {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			t.Fatalf("no %s in %s", p, doc)
		}
		cur = m[p]
	}
	var names []string
	for _, list := range []string{"initContainers", "containers"} {
		items, _ := cur.(map[string]any)[list].([]any)
		for _, c := range items {
			names = append(names, c.(map[string]any)["name"].(string))
		}
	}
	return names
}

func splitYAML(s string) []string {
	var docs []string
	for _, d := range strings.Split(s, "---\n") {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, d)
		}
	}
	return docs
}

func TestInjectPatchesEveryWorkloadKindsPodTemplate(t *testing.T) {
	withFoundationEnv(t, nil)
	cases := []struct {
		apiVersion, kind, parent string
		path                     []string
	}{
		{"apps/v1", "Deployment", "  replicas: 2\n", []string{"spec", "template", "spec"}},
		{"apps/v1", "StatefulSet", "  serviceName: web\n", []string{"spec", "template", "spec"}},
		{"apps/v1", "DaemonSet", "", []string{"spec", "template", "spec"}},
		{"apps/v1", "ReplicaSet", "", []string{"spec", "template", "spec"}},
		{"v1", "ReplicationController", "", []string{"spec", "template", "spec"}},
		{"batch/v1", "Job", "", []string{"spec", "template", "spec"}},
	}
	for _, c := range cases {
		t.Run("a "+c.kind+" gets the agent in its pod template", func(t *testing.T) {
			stdout, stderr, code := injectRun(t, workloadYAML(c.apiVersion, c.kind, "", c.parent), "-f", "-")
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := "-: " + c.kind + "/web: injected (1 agent container(s))\n"; stderr != want {
				t.Errorf("stderr %q, want %q", stderr, want)
			}
			if got := containersAt(t, []byte(stdout), c.path...); len(got) != 2 || got[1] != "app" && got[0] != "app" {
				t.Errorf("containers %v, want app and the agent", got)
			}
			if !strings.Contains(stdout, "kind: "+c.kind+"\n") || !strings.Contains(stdout, "dynamic-config.rs/status: injected") {
				t.Errorf("the manifest is not the %s with its template marked injected:\n%s", c.kind, stdout)
			}
		})
	}
	t.Run("a CronJob gets the agent in spec.jobTemplate.spec.template", func(t *testing.T) {
		cron := "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: web\nspec:\n  schedule: '@hourly'\n  jobTemplate:\n    spec:\n      template:\n" +
			indent(gitTemplate, "    ")
		stdout, stderr, code := injectRun(t, cron, "-f", "-")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if got := containersAt(t, []byte(stdout), "spec", "jobTemplate", "spec", "template", "spec"); len(got) != 2 {
			t.Errorf("containers %v, want app and the agent", got)
		}
	})
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// The Deployment end to end: a YAML stream of a Deployment and a Service in,
// the same stream out with only the template patched; the decision is made
// in the Deployment's namespace.
func TestInjectDeploymentEndToEnd(t *testing.T) {
	withFoundationEnv(t, nil)
	service := "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n"
	deploy := workloadYAML("apps/v1", "Deployment", "shop", "  replicas: 3\n  selector:\n    matchLabels:\n      app: web\n")
	dir := t.TempDir()
	path := explainWriteFile(t, dir, "deploy.yaml", deploy+"---\n"+service)

	t.Run("-v also notes the Service passed through", func(t *testing.T) {
		_, stderr, code := injectRun(t, "", "-f", path, "-v")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		wantErr := path + ": Deployment/web: injected (1 agent container(s))\n" +
			path + ": Service/web: passed through unchanged (inject patches " + manifest.Kinds + ")\n"
		if stderr != wantErr {
			t.Errorf("stderr:\n%s\nwant:\n%s", stderr, wantErr)
		}
	})
	t.Run("the YAML stream comes back whole, the template injected, the Service untouched", func(t *testing.T) {
		stdout, stderr, code := injectRun(t, "", "-f", path)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		wantErr := path + ": Deployment/web: injected (1 agent container(s))\n"
		if stderr != wantErr {
			t.Errorf("stderr:\n%s\nwant:\n%s", stderr, wantErr)
		}
		docs := splitYAML(stdout)
		if len(docs) != 2 {
			t.Fatalf("%d documents out, want 2:\n%s", len(docs), stdout)
		}
		var got, in map[string]any
		if err := yaml.Unmarshal([]byte(docs[0]), &got); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(deploy), &in); err != nil {
			t.Fatal(err)
		}
		// everything but the pod template is as it came
		for _, key := range []string{"apiVersion", "kind", "metadata"} {
			if !jsonEqual(got[key], in[key]) {
				t.Errorf("%s changed: %v, was %v", key, got[key], in[key])
			}
		}
		gotSpec, inSpec := got["spec"].(map[string]any), in["spec"].(map[string]any)
		for key := range inSpec {
			if key != "template" && !jsonEqual(gotSpec[key], inSpec[key]) {
				t.Errorf("spec.%s changed: %v, was %v", key, gotSpec[key], inSpec[key])
			}
		}
		tmpl := gotSpec["template"].(map[string]any)
		if _, ok := tmpl["metadata"].(map[string]any)["namespace"]; ok {
			t.Error("the template gained a namespace")
		}
		if names := containersAt(t, []byte(docs[0]), "spec", "template", "spec"); len(names) != 2 {
			t.Errorf("template containers %v, want app and the agent", names)
		}
		if !jsonEqualYAML(t, docs[1], service) {
			t.Errorf("the Service changed:\n%s", docs[1])
		}
	})

	t.Run("the template is decided in the Deployment's namespace: -n sandbox denies git", func(t *testing.T) {
		stdout, stderr, code := injectRun(t, "", "-f", path, "-n", "sandbox")
		// a refused document prints nothing; the other documents still do
		if code != exitRefused || strings.Contains(stdout, "Deployment") || !strings.Contains(stdout, "kind: Service") {
			t.Fatalf("exit %d, stdout %q; want %d and only the Service", code, stdout, exitRefused)
		}
		if !strings.HasPrefix(stderr, path+": Deployment/web: refused (") || !strings.Contains(stderr, "sandbox") {
			t.Errorf("stderr %q, want the template's refusal naming the namespace", stderr)
		}
	})

	t.Run("metadata.namespace of the Deployment is the template's namespace", func(t *testing.T) {
		sandboxed := strings.Replace(deploy, "namespace: shop", "namespace: sandbox", 1)
		_, stderr, code := injectRun(t, sandboxed, "-f", "-")
		if code != exitRefused || !strings.Contains(stderr, "refused") {
			t.Fatalf("exit %d, stderr %q; want the sandbox refusal", code, stderr)
		}
	})

	t.Run("-o patch points into the template", func(t *testing.T) {
		stdout, _, code := injectRun(t, deploy, "-f", "-", "-o", "patch")
		if code != exitOK || !strings.Contains(stdout, `"path":"/spec/template/spec/containers/-"`) ||
			!strings.Contains(stdout, `"path":"/spec/template/metadata/annotations/dynamic-config.rs~1status"`) {
			t.Errorf("exit %d, patch %s", code, stdout)
		}
	})

	t.Run("JSON in comes back as JSON", func(t *testing.T) {
		j, err := yaml.YAMLToJSON([]byte(deploy))
		if err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := injectRun(t, string(j), "-f", "-")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var out map[string]any
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || !strings.HasPrefix(stdout, "{\n  \"apiVersion\"") {
			t.Fatalf("stdout is not indented JSON (%v):\n%s", err, stdout)
		}
	})

	t.Run("a List is patched item by item", func(t *testing.T) {
		d, _ := yaml.YAMLToJSON([]byte(deploy))
		s, _ := yaml.YAMLToJSON([]byte(service))
		list := `{"apiVersion":"v1","kind":"List","items":[` + string(s) + `,` + string(d) + `]}`
		stdout, stderr, code := injectRun(t, list, "-f", "-", "-o", "patch", "--verbose")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr, "-: List item 2 Deployment/web: injected") || !strings.Contains(stderr, "-: List item 1 Service/web: passed through") {
			t.Errorf("stderr %q", stderr)
		}
		if !strings.Contains(stdout, `"path":"/items/1/spec/template/spec/containers/-"`) {
			t.Errorf("patch %s, want it to point into items/1", stdout)
		}
	})

	t.Run("a Deployment of an old apiVersion is refused, never passed through", func(t *testing.T) {
		old := strings.Replace(deploy, "apps/v1", "extensions/v1beta1", 1)
		_, stderr, code := injectRun(t, old, "-f", "-")
		if code != exitUsage || !strings.Contains(stderr, `is a Deployment of apiVersion "extensions/v1beta1" (want apps/v1)`) {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func jsonEqualYAML(t *testing.T, a, b string) bool {
	t.Helper()
	x, err := yaml.YAMLToJSON([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	y, _ := yaml.YAMLToJSON([]byte(b))
	return bytes.Equal(x, y)
}
