package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

// withEnviron makes the offline commands see environ as the process environment.
func withEnviron(t *testing.T, environ ...string) {
	t.Helper()
	saved := processEnviron
	processEnviron = func() []string { return environ }
	t.Cleanup(func() { processEnviron = saved })
}

func checkInstallation(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(append([]string{"check-installation"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

const seedValues = "testdata/values/"

func TestCheckInstallationExitCodes(t *testing.T) {
	valid := testfile.Write(t, "installation.yaml", "watchSeconds: \"30\"\nfileMode: 0640\n")
	invalid := testfile.Write(t, "installation.yaml", "watchSeconds: soon\nsourceDeny: \"sandbox: got\"\n")
	tests := []struct {
		name    string
		environ []string
		args    []string
		code    int
		stdout  string // prefix
		stderr  string // substring
	}{
		{"a valid document prints its revision and settings", nil, []string{"--installation", valid}, 0, "installation is valid: sha256:", ""},
		{"an invalid document prints every problem", nil, []string{"--installation", invalid}, 2, "",
			"dynamic-config: the installation is invalid (2 problems; document " + invalid + "):\n" +
				`  watchSeconds [DYNAMIC_CONFIG_AGENT_WATCH_SECONDS]: watch-seconds is "soon": whole seconds` + "\n" +
				`  sourceDeny [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: "got" is not a store this contract knows` + "\n"},
		{"the process environment applies", []string{"DYNAMIC_CONFIG_AGENT_MODE=often"}, []string{"--installation", valid}, 2, "",
			`DYNAMIC_CONFIG_AGENT_MODE: mode is "often": init, sidecar or both`},
		{"--no-env skips the process environment", []string{"DYNAMIC_CONFIG_AGENT_MODE=often"}, []string{"--installation", valid, "--no-env"}, 0, "installation is valid: ", ""},
		{"the locator variable names the document", []string{"DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE=" + invalid}, nil, 2, "", "document " + invalid},
		{"a named document that does not exist", nil, []string{"--installation", "/nonexistent/installation.yaml"}, 2, "",
			"/nonexistent/installation.yaml: the installation document does not exist"},
		{"--values with --installation is a usage error", nil, []string{"--installation", valid, "--values", valid}, 2, "",
			"check-installation: --installation and --values cannot be used together"},
		{"an unknown output format is a usage error", nil, []string{"--installation", valid, "-o", "yaml"}, 2, "", `-o is "yaml": text or json`},
		{"an unknown flag is a short usage error pointing at --help", nil, []string{"--bogus"}, 2, "", "check-installation: unknown flag: --bogus\nSee 'dynamic-config check-installation --help'."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withEnviron(t, tt.environ...)
			code, out, errOut := checkInstallation(t, tt.args...)
			if code != tt.code || !strings.HasPrefix(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
}

func TestCheckInstallationAcceptsTheSeedValues(t *testing.T) {
	withEnviron(t)
	files, err := filepath.Glob(seedValues + "*.values.yaml")
	if err != nil || len(files) < 6 {
		t.Fatalf("seed values: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f)+" is accepted as written", func(t *testing.T) {
			code, out, errOut := checkInstallation(t, "--values", f)
			if code != 0 || !strings.HasPrefix(out, "installation is valid: sha256:") {
				t.Errorf("exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
	t.Run("the pins example shows the override rule's outcome", func(t *testing.T) {
		_, out, errOut := checkInstallation(t, "--values", seedValues+"seed000-pins.values.yaml")
		for _, want := range []string{"fileMode", "pin", "(?)", "vault   endpoint"} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, `warning: fleet metricsPort is pinned by overridable=false; pods cannot opt out with metrics-port "0"`) {
			t.Errorf("stderr %s", errOut)
		}
	})
}

func TestCheckInstallationJSON(t *testing.T) {
	withEnviron(t)
	doc := testfile.Write(t, "installation.json", `{"envPolicy": {"rules": [{"environmentVariables": [{"name": "LOG_LEVEL", "value": "debug"}]}]}}`)
	code, out, errOut := checkInstallation(t, "--installation", doc, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var resp struct {
		Revision  string `json:"revision"`
		Settings  []any  `json:"settings"`
		EnvPolicy struct {
			Rules []struct {
				EnvironmentVariables []struct {
					Name     string `json:"name"`
					HasValue bool   `json:"hasValue"`
				} `json:"environmentVariables"`
			} `json:"rules"`
		} `json:"envPolicy"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	// the fleet defaults (the registry's), then the nine plain settings no knob owns (spec 06 §5)
	if !strings.HasPrefix(resp.Revision, "sha256:") || len(resp.Settings) != len(registry.Fleet())+9 || !resp.EnvPolicy.Rules[0].EnvironmentVariables[0].HasValue {
		t.Errorf("got %s", out)
	}
	if strings.Contains(out, "debug") {
		t.Error("a listed env-policy value was printed")
	}
	if !strings.Contains(errOut, "warning: envPolicy is set; it is enforced only where a ValidatingWebhookConfiguration routes /validate here") {
		t.Errorf("stderr %s", errOut)
	}
}

func TestCheckInstallationTextShowsPolicyValuesAsSet(t *testing.T) {
	withEnviron(t)
	doc := testfile.Write(t, "installation.yaml", "envPolicy:\n  rules:\n    - environmentVariables: [{name: LOG_LEVEL, value: debug}, {name: HTTPS_PROXY}]\n      namespaces: [payments]\n")
	code, out, _ := checkInstallation(t, "--installation", doc)
	if code != 0 || !strings.Contains(out, "rule 0: reject anyIn, mode enforce, namespaces payments: LOG_LEVEL=<set>, HTTPS_PROXY") || strings.Contains(out, "debug") {
		t.Errorf("exit %d\n%s", code, out)
	}
}

func TestCheckInstallationResolvesTheDefaultDocumentAsTheDeciderDoes(t *testing.T) {
	withEnviron(t)
	if _, err := os.Stat("/etc/dynamic-config/installation.yaml"); err == nil {
		t.Skip("this machine has a default installation document; the test needs it absent")
	}
	code, out, errOut := checkInstallation(t, "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var resp struct {
		Revision        string `json:"revision"`
		DocumentPath    string `json:"documentPath"`
		DocumentPresent bool   `json:"documentPresent"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatal(err)
	}
	// The decider reports the default path, absent, holding the empty installation.
	if resp.DocumentPath != "/etc/dynamic-config/installation.yaml" || resp.DocumentPresent ||
		resp.Revision != "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" {
		t.Errorf("got %+v", resp)
	}
	if _, out, _ := checkInstallation(t); !strings.Contains(out, "document: /etc/dynamic-config/installation.yaml (absent)\n") {
		t.Errorf("text output:\n%s", out)
	}
}

func TestCheckInstallationValidatesARolloutBesideTheInstallation(t *testing.T) {
	valid := testfile.Write(t, "installation.yaml", "watchSeconds: \"30\"\n")
	invalid := testfile.Write(t, "installation.yaml", "watchSeconds: soon\n")
	good := testfile.Write(t, "rollout.yaml", "candidate:\n  watchSeconds: \"20\"\nstage: canary\ncanary: {percent: 5, clusters: [east]}\n")
	inert := testfile.Write(t, "rollout.yaml", "candidate:\n  watchSeconds: \"30\"\n")
	bad := testfile.Write(t, "rollout.yaml", "candidate:\n  watchSeconds: later\nstage: sideways\n")
	values := testfile.Write(t, "values.yaml", "rollout:\n  candidate:\n    agent: {tag: v0.4.0}\n  stage: canary\n  canary: {percent: 50}\n")
	tests := []struct {
		name    string
		environ []string
		args    []string
		code    int
		stdout  []string
		stderr  []string
	}{
		{"a valid rollout is shown after the installation", nil, []string{"--installation", valid, "--rollout", good}, 0,
			[]string{"installation is valid: sha256:", "\nrollout is valid: candidate sha256:", "  stage: canary\n", "5 % of workloads, namespaces none, clusters east"}, nil},
		{"a candidate of the installation's revision is inert and says so", nil, []string{"--installation", valid, "--rollout", inert}, 0,
			[]string{"inert: the candidate is the installation"}, nil},
		{"every problem of the rollout at once", nil, []string{"--installation", valid, "--rollout", bad}, 2, nil,
			[]string{"the rollout is invalid (2 problems; document " + bad + ")", "stage", "candidate: "}},
		{"the problems of both the installation and the rollout", nil, []string{"--installation", invalid, "--rollout", bad}, 2, nil,
			[]string{"the installation is invalid (1 problem;", "the rollout is invalid (2 problems;"}},
		{"a rollout document that does not exist", nil, []string{"--installation", valid, "--rollout", "/nonexistent/rollout.yaml"}, 2, nil,
			[]string{"/nonexistent/rollout.yaml: the rollout document does not exist"}},
		{"the candidate is validated over the process environment", []string{"DYNAMIC_CONFIG_AGENT_MODE=often"}, []string{"--installation", valid, "--rollout", good}, 2, nil,
			[]string{"the installation is invalid", "the rollout is invalid"}},
		{"--values validates the values' rollout.*", nil, []string{"--values", values, "--no-env"}, 0,
			[]string{"rollout is valid: candidate sha256:", "50 % of workloads"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withEnviron(t, tt.environ...)
			code, out, errOut := checkInstallation(t, tt.args...)
			ok := code == tt.code
			for _, want := range tt.stdout {
				ok = ok && strings.Contains(out, want)
			}
			for _, want := range tt.stderr {
				ok = ok && strings.Contains(errOut, want)
			}
			if !ok {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
	t.Run("-o json carries the rollout as GetInstallation.rollout", func(t *testing.T) {
		withEnviron(t)
		code, out, errOut := checkInstallation(t, "--installation", valid, "--rollout", good, "-o", "json")
		var resp struct {
			Rollout struct {
				CandidateRevision string `json:"candidateRevision"`
				Stage             string `json:"stage"`
			} `json:"rollout"`
		}
		if err := json.Unmarshal([]byte(out), &resp); code != 0 || err != nil || resp.Rollout.Stage != "ROLLOUT_STAGE_CANARY" || resp.Rollout.CandidateRevision == "" {
			t.Errorf("exit %d, %v\n%s\n%s", code, err, out, errOut)
		}
	})
}
