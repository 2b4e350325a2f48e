package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sigs.k8s.io/yaml"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/doors/webhookscope"
)

// explainWriteFile writes content under dir and returns the path.
func explainWriteFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const explainConsulPod = `apiVersion: v1
kind: Pod
metadata:
  name: app
  annotations:
    dynamic-config.rs/inject: "true"
    dynamic-config.rs/source: "consul"
    dynamic-config.rs/endpoint: "http://consul:8500"
    dynamic-config.rs/key: "myapp/config.json"
    dynamic-config.rs/path: "/config/rendered.toml"
spec:
  containers:
  - name: app
    image: busybox
`

const explainDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
        env:
        - name: HTTPS_PROXY
          value: http://proxy:3128
`

const explainPolicy = `envPolicy:
  rules:
  - environmentVariables:
    - name: HTTPS_PROXY
`

// explainJSONDocument is one document of explain -o json.
type explainJSONDocument struct {
	Mutate, Validate map[string]map[string]any
	Template         string
	Webhook          *webhookscope.Reach
	TemplateWebhook  *webhookscope.Reach
}

func explainRun(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = runExplain(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestExplainCommand(t *testing.T) {
	dir := t.TempDir()
	empty := explainWriteFile(t, dir, "empty.yaml", "")
	policy := explainWriteFile(t, dir, "policy.yaml", explainPolicy)
	pod := explainWriteFile(t, dir, "pod.yaml", explainConsulPod)
	deployment := explainWriteFile(t, dir, "deployment.yaml", explainDeployment)
	both := explainWriteFile(t, dir, "both.yaml", explainConsulPod+"---\n"+explainDeployment)

	t.Run("a pod prints its header with the empty installation's short revision", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", pod, "--installation", empty, "--no-env")
		if code == exitUsage {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if !strings.HasPrefix(out, "pod default/app   outcome: ") || !strings.Contains(out, "revision: sha256:44136fa355b3…\n") {
			t.Errorf("unexpected header:\n%s", out)
		}
		if !strings.Contains(out, "env policy: none\n") {
			t.Errorf("no env policy line:\n%s", out)
		}
	})
	t.Run("--cluster-name puts the cluster in the header and in the JSON decision", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", pod, "--installation", empty, "--no-env", "--cluster-name", "west")
		if code == exitUsage || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "revision: sha256:44136fa355b3…   cluster: west") {
			t.Errorf("exit %d, header:\n%s%s", code, out, errOut)
		}
		out, _, _ = explainRun(t, "-f", pod, "--installation", empty, "--no-env", "--cluster-name", "west", "-o", "json")
		if !strings.Contains(out, `"cluster": "west"`) {
			t.Errorf("no cluster in the JSON:\n%s", out)
		}
	})
	t.Run("--cluster-name refuses a name that is not a DNS name", func(t *testing.T) {
		_, errOut, code := explainRun(t, "-f", pod, "--installation", empty, "--no-env", "--cluster-name", "West")
		if code != exitUsage || !strings.Contains(errOut, `explain: --cluster-name is "West" is not a cluster name`) {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("-n names the namespace", func(t *testing.T) {
		out, _, _ := explainRun(t, "-f", pod, "--installation", empty, "--no-env", "-n", "team-a")
		if !strings.HasPrefix(out, "pod team-a/app ") {
			t.Errorf("unexpected header:\n%s", out)
		}
	})
	t.Run("-o json prints the mutate response only, without a pods-targeting policy", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", pod, "--installation", empty, "--no-env", "-o", "json")
		if code == exitUsage {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got explainJSONDocument
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if got.Validate != nil || got.Mutate["decision"]["installationRevision"] == nil || got.Webhook == nil {
			t.Errorf("want {\"mutate\": {\"decision\": …}, \"webhook\": …} only:\n%s", out)
		}
	})
	t.Run("a workload is validated itself, its template mutated as its pods, and a policy refusal exits 1", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", deployment, "--installation", policy, "--no-env", "-o", "json")
		var got explainJSONDocument
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s%s", err, out, errOut)
		}
		if got.Mutate == nil || got.Validate == nil || got.Template != "/spec/template" || got.Webhook.Path != "/validate" {
			t.Errorf("want {\"mutate\": …, \"validate\": …, \"template\": \"/spec/template\", \"webhook\": {\"path\": \"/validate\", …}}:\n%s", out)
		}
		if outcome := got.Validate["decision"]["outcome"]; outcome == "OUTCOME_REFUSE" && code != exitRefused {
			t.Errorf("a refusal exits %d, want %d", code, exitRefused)
		}
	})
	t.Run("a pod under a pods-targeting policy also gets the validating decision", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", pod, "--installation", policy, "--no-env", "-o", "json")
		if code == exitUsage {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if got["mutate"] == nil || got["validate"] == nil {
			t.Errorf("want both decisions:\n%s", out)
		}
	})
	t.Run("several documents give a JSON array", func(t *testing.T) {
		out, _, _ := explainRun(t, "-f", both, "--installation", empty, "--no-env", "-o", "json")
		var got []map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 2 {
			t.Fatalf("want an array of two: %v\n%s", err, out)
		}
		if got[0]["mutate"] == nil || got[1]["validate"] == nil {
			t.Errorf("want a pod's mutate and a deployment's validate:\n%s", out)
		}
	})
	t.Run("a workload's template is explained as the pods it creates, as inject patches them", func(t *testing.T) {
		asking := explainWriteFile(t, dir, "asking.yaml", strings.Replace(explainDeployment, "  template:\n    spec:\n",
			"  template:\n    metadata:\n      annotations:\n        dynamic-config.rs/inject: \"true\"\n        dynamic-config.rs/source: consul\n"+
				"        dynamic-config.rs/endpoint: http://consul:8500\n        dynamic-config.rs/key: app/config\n        dynamic-config.rs/path: /config/app.toml\n    spec:\n", 1))
		out, errOut, code := explainRun(t, "-f", asking, "--installation", empty, "--no-env")
		if code != exitOK {
			t.Fatalf("exit %d: %s%s", code, out, errOut)
		}
		for _, want := range []string{
			"deployment shop/web   outcome: inject",
			"pod template spec.template: the renders, gates and plan below are /mutate's on every pod the Deployment creates",
			"render (default)  source consul",
			"plan: 1 volume, mount into web, dynamic-config-agent → containers",
			"env policy: no environment-variable policy",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("explain lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("-o yaml is -o json's objects as YAML, one document each", func(t *testing.T) {
		jsonOut, _, _ := explainRun(t, "-f", both, "--installation", empty, "--no-env", "-o", "json")
		yamlOut, errOut, code := explainRun(t, "-f", both, "--installation", empty, "--no-env", "-o", "yaml")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var fromJSON []explainJSONDocument
		if err := json.Unmarshal([]byte(jsonOut), &fromJSON); err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(yamlOut, "\n---\n")
		if len(docs) != len(fromJSON) {
			t.Fatalf("%d YAML documents, want %d:\n%s", len(docs), len(fromJSON), yamlOut)
		}
		for i, doc := range docs {
			var got explainJSONDocument
			if err := yaml.UnmarshalStrict([]byte(doc), &got); err != nil {
				t.Fatalf("document %d is not strict YAML of the JSON shape: %v\n%s", i+1, err, doc)
			}
			want := fromJSON[i]
			if got.Template != want.Template || (got.Mutate == nil) != (want.Mutate == nil) || (got.Validate == nil) != (want.Validate == nil) ||
				got.Mutate["decision"]["outcome"] != want.Mutate["decision"]["outcome"] {
				t.Errorf("document %d differs from the JSON one:\n%s", i+1, doc)
			}
		}
	})
	t.Run("several documents in text are separated by a blank line", func(t *testing.T) {
		out, _, _ := explainRun(t, "-f", both, "--installation", empty, "--no-env")
		if !strings.Contains(out, "\n\ndeployment shop/web   outcome: skip (no dynamic-config.rs/ annotation)") {
			t.Errorf("unexpected text:\n%s", out)
		}
	})

	t.Run("canonical example 1 explains its knobs, gates and plan", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", pod, "--installation", empty, "--no-env")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		for _, line := range []string{
			"pod default/app   outcome: inject   revision: sha256:44136fa355b3…\n",
			"render (default)  source consul   agents: dynamic-config-agent\n",
			"\n  endpoint ", "dynamic-config.rs/endpoint\n",
			"\nplan: 1 volume, mount into app, dynamic-config-agent → containers\nwarnings: none\n",
		} {
			if !strings.Contains(out, line) {
				t.Errorf("output lacks %q:\n%s", line, out)
			}
		}
	})
	t.Run("a refused pod exits 1 and ends with the refused line, URL-redacted", func(t *testing.T) {
		refused := explainWriteFile(t, dir, "refused.yaml", strings.Replace(explainConsulPod,
			`dynamic-config.rs/endpoint: "http://consul:8500"`,
			`dynamic-config.rs/endpoint: "http://user:pw@consul:8500"
    dynamic-config.rs/watch-seconds: "soon"`, 1))
		out, errOut, code := explainRun(t, "-f", refused, "--installation", empty, "--no-env")
		if code != exitRefused {
			t.Fatalf("exit %d, want 1: %s%s", code, out, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		last := lines[len(lines)-1]
		if want := `refused (DynamicConfigMalformed 400) at watch-seconds.value: dynamic-config.rs/watch-seconds is "soon": whole seconds`; last != want {
			t.Errorf("last line %q, want %q", last, want)
		}
		if strings.Contains(out, "user:pw") {
			t.Errorf("the URL userinfo leaks:\n%s", out)
		}
	})
	t.Run("a workload refused by the env policy prints the rule results and exits 1", func(t *testing.T) {
		out, _, code := explainRun(t, "-f", deployment, "--installation", policy, "--no-env")
		if code != exitRefused {
			t.Errorf("exit %d, want 1", code)
		}
		for _, line := range []string{
			"deployment shop/web   outcome: refuse   revision: sha256:",
			"\nenv policy: rule 0 (anyIn, enforce) rejects this deployment (matched: HTTPS_PROXY)\n",
			"\nrefused (DynamicConfigEnvPolicy 403) at env-policy.rule: ",
		} {
			if !strings.Contains(out, line) {
				t.Errorf("output lacks %q:\n%s", line, out)
			}
		}
		if strings.Contains(out, "proxy:3128") {
			t.Errorf("an env value leaks:\n%s", out)
		}
	})

	t.Run("-f - reads a JSON pod from stdin", func(t *testing.T) {
		var out, errOut bytes.Buffer
		pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j","namespace":"ns","annotations":{"dynamic-config.rs/inject":"false"}},"spec":{"containers":[{"name":"app"}]}}`
		code := runExplain([]string{"-f", "-", "--installation", empty, "--no-env"}, strings.NewReader(pod), &out, &errOut)
		if code != exitOK || !strings.HasPrefix(out.String(), "pod ns/j   outcome: skip (inject is not \"true\")   revision: ") {
			t.Errorf("exit %d:\n%s%s", code, out.String(), errOut.String())
		}
	})
	t.Run("a pod without any prefixed annotation shows the decider's skip", func(t *testing.T) {
		plain := explainWriteFile(t, dir, "plain.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: app\n")
		out, errOut, code := explainRun(t, "-f", plain, "--installation", empty, "--no-env")
		if code != exitOK || !strings.HasPrefix(out, "pod default/p   outcome: skip (no dynamic-config.rs/ annotation)   revision: sha256:44136fa355b3…") {
			t.Errorf("exit %d:\n%s%s", code, out, errOut)
		}
	})

	usage := []struct {
		name string
		args []string
		want string
	}{
		{"without -f", []string{"--installation", empty}, "-f FILE is required"},
		{"with an unknown output", []string{"-f", pod, "-o", "patch", "--installation", empty}, `-o is "patch": text, json or yaml`},
		{"with --installation and --values", []string{"-f", pod, "--installation", empty, "--values", empty}, "cannot be used together"},
		{"with an unreadable file", []string{"-f", filepath.Join(dir, "missing.yaml"), "--installation", empty}, "missing.yaml"},
		{"with an invalid installation", []string{"-f", pod, "--installation", explainWriteFile(t, dir, "bad.yaml", "watchSeconds: nope\n"), "--no-env"}, "watchSeconds"},
	}
	for _, tc := range usage {
		t.Run("exit 2 "+tc.name, func(t *testing.T) {
			_, errOut, code := explainRun(t, tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 mentioning %q", code, errOut, tc.want)
			}
		})
	}
}
