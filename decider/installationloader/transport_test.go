package installationloader

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// goldenCases is the golden corpus (test/cases).
const goldenCases = "../../test/cases"

// caseEnviron reads a golden case's optional environment file (NAME=value
// lines, # comments): nil when the case has none.
func caseEnviron(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "environment"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var environ []string
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		environ = append(environ, strings.TrimRight(strings.TrimLeft(line, " \t"), "\r"))
	}
	return environ
}

// roundTrip checks that inst's transport form loads back to the same
// revision, the same policy values and the same transport form (spec 09 §2).
func roundTrip(t *testing.T, inst *installation.Installation) {
	t.Helper()
	tr := inst.Transport()
	if tr.Revision != inst.Revision {
		t.Fatalf("the transport form says %s, the installation is %s", tr.Revision, inst.Revision)
	}
	if inst.EnvPolicy == nil && !bytes.Equal(tr.Canonical, inst.Canonical) {
		t.Fatalf("without a policy the transport form is not the canonical JSON:\n%s\n%s", tr.Canonical, inst.Canonical)
	}
	back, err := installation.FromTransport(tr)
	if err != nil {
		t.Fatalf("the canonical form does not load back:\n%v\ncanonical: %s", err, tr.Canonical)
	}
	if back.Revision != inst.Revision {
		t.Fatalf("loaded back as %s, want %s", back.Revision, inst.Revision)
	}
	if !bytes.Equal(back.Canonical, inst.Canonical) {
		t.Fatalf("canonical JSON differs:\n%s\n%s", back.Canonical, inst.Canonical)
	}
	if again := back.Transport(); !bytes.Equal(again.Canonical, tr.Canonical) {
		t.Fatalf("a second round trip changes the transport form:\n%s\n%s", again.Canonical, tr.Canonical)
	}
	if (inst.EnvPolicy == nil) != (back.EnvPolicy == nil) ||
		(inst.EnvPolicy != nil && !reflect.DeepEqual(inst.EnvPolicy.Rules, back.EnvPolicy.Rules)) {
		t.Fatalf("the policy differs after the round trip: %+v, want %+v", back.EnvPolicy, inst.EnvPolicy)
	}
	if !reflect.DeepEqual(back.AgentEnv, inst.AgentEnv) || back.AgentImage != inst.AgentImage ||
		!reflect.DeepEqual(back.AgentImageAllow, inst.AgentImageAllow) || back.PullSecret != inst.PullSecret {
		t.Fatalf("settings differ after the round trip")
	}
}

func TestEveryGoldenInstallationLoadsBackFromItsCanonicalForm(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(goldenCases, "*", "installation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 50 {
		t.Fatalf("found %d golden installations under %s; the corpus moved?", len(dirs), goldenCases)
	}
	for _, doc := range dirs {
		dir := filepath.Dir(doc)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			inst, err := Load(Options{DocumentPath: doc, DocumentExplicit: true, Environ: caseEnviron(t, dir)})
			if err != nil {
				t.Fatalf("the golden installation does not load: %v", err)
			}
			roundTrip(t, inst)
		})
	}
}

func TestEverySettingKindSurvivesTheRoundTrip(t *testing.T) {
	doc := `
watchSeconds: "30!"
fileMode: "0640?"
overridable: false
agentEnv: "A=1, B=two"
storeDefaults:
  consul: {endpoint: "https://consul:8500!", overridable: "true", watch-seconds: "15"}
  vault: "endpoint=https://vault:8200, key=secret/app"
sourceAllow: {"*": [consul, vault], team-a: [git]}
sourceDeny: "team-b: redis"
agentEnvAllow: "HTTP_PROXY; ns1: NO_PROXY, FOO"
matchGuaranteed: true
envPolicy:
  targets: [workloads, pods]
  rules:
    - reject: anyIn
      environmentVariables: [{name: LD_PRELOAD}, {name: MODE, value: "debug <&>"}, {name: N, value: 3}]
      namespaces: [apps, "*"]
      mode: warn
`
	inst := mustLoad(t, doc,
		"DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=ghcr.io/acme/, registry.example/agents/",
		"DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS=true",
		"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true",
		"DYNAMIC_CONFIG_AGENT_IMAGE=registry.example/mirror/agent:v1",
		"DYNAMIC_CONFIG_AGENT_PULL_SECRET=pull",
		"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=45",
	)
	if !strings.Contains(string(inst.Transport().Canonical), "debug <&>") {
		t.Fatalf("the transport form does not carry the listed value in clear: %s", inst.Transport().Canonical)
	}
	if strings.Contains(string(inst.Canonical), "debug") {
		t.Fatalf("the canonical form carries a listed value: %s", inst.Canonical)
	}
	roundTrip(t, inst)
}

func TestTheEmptyInstallationSurvivesTheRoundTrip(t *testing.T) {
	roundTrip(t, mustLoad(t, ""))
}
