package main

// The command line over the golden corpus (test/cases): every case through
// `dynamic-config inject -o review` itself — its flags, its reading of the
// installation and the environment, its output — must print the golden
// review. The doors behind it are proven against the corpus in test/cases
// (the two-door test); this is the one test of the command over it.

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	"github.com/dynamic-config-admission/dynamic-config/test/cases"
)

// TestInjectReviewOverTheCorpus runs `inject -o review` on every case, with
// the case's environment as the process environment (processEnviron; the
// real one is never touched) or --no-env, and its classes file.
func TestInjectReviewOverTheCorpus(t *testing.T) {
	if cases.Updating() {
		t.Skip("UPDATE_GOLDEN=1: test/cases rewrites the goldens this run; the next run compares the command with them")
	}
	for _, c := range cases.All(t) {
		t.Run(c.Name, func(t *testing.T) {
			args := []string{"inject", "-f", c.Path("pod.yaml"), "--installation", c.Path("installation.yaml"),
				"-n", c.Namespace(t), "-o", "review"}
			if environ := c.Environ(t); environ != nil {
				saved := processEnviron
				processEnviron = func() []string { return environ }
				t.Cleanup(func() { processEnviron = saved })
			} else {
				args = append(args, "--no-env")
			}
			if c.HasClasses() {
				args = append(args, "--classes-file", c.Path("classes.yaml"))
			}
			var stdout, stderr bytes.Buffer
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != exitOK && code != exitRefused {
				t.Fatalf("inject exited %d: %s", code, stderr.String())
			}
			answer, err := review.DecodeAnswer(stdout.Bytes())
			if err != nil {
				t.Fatalf("inject -o review printed %q: %v", stdout.String(), err)
			}
			if (code == exitRefused) == answer.Allowed {
				t.Fatalf("inject exited %d for allowed=%v", code, answer.Allowed)
			}
			if got, want := cases.StableDecisionID(t, stdout.Bytes()), c.Golden(t); !bytes.Equal(got, want) {
				t.Fatalf("inject -o review differs from %s\n got: %s\nwant: %s\nstderr: %s", c.Path("review.json"), got, want, stderr.String())
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
	canon := cases.Named("canonical-1-consul-sidecar").Path("pod.yaml")
	refused := cases.Named("refuse-malformed-watch-seconds").Path("pod.yaml")
	plain := cases.Named("skip-no-annotations").Path("pod.yaml")
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
