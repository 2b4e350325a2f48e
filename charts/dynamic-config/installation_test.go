package chart

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

func loadValuesText(t *testing.T, values string, environ ...string) (*installation.Installation, error) {
	t.Helper()
	return Load(testfile.Write(t, "values.yaml", values), environ)
}

func TestChartValuesMapping(t *testing.T) {
	t.Run("the chart's defaults alone give the chart's own installation", func(t *testing.T) {
		inst, err := loadValuesText(t, "")
		if err != nil {
			t.Fatal(err)
		}
		want := `{"DYNAMIC_CONFIG_AGENT_IMAGE":"ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0","DYNAMIC_CONFIG_AGENT_METRICS_PORT":"9110","DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS":"false","DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY":"false"}`
		if string(inst.Canonical) != want {
			t.Errorf("canonical %s", inst.Canonical)
		}
	})
	t.Run("resource values are written only when they differ from the built-ins", func(t *testing.T) {
		inst, err := loadValuesText(t, "agent:\n  defaults:\n    cpuRequest: 10m\n    memoryRequest: 32Mi!\n    memoryLimit: 128Mi\n")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inst.Fleet["agent-cpu-request"]; ok {
			t.Error("cpuRequest written")
		}
		if v := inst.Fleet["agent-memory-request"]; v.Text != "32Mi" || v.Marker != installation.MarkerPinned {
			t.Errorf("memoryRequest %+v", v)
		}
		if v := inst.Fleet["agent-memory-limit"]; v.Text != "128Mi" {
			t.Errorf("memoryLimit %+v", v)
		}
	})
	t.Run("an empty metricsPort leaves the fleet without a port", func(t *testing.T) {
		inst, err := loadValuesText(t, "agent:\n  defaults:\n    metricsPort: \"\"\n")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inst.Fleet["metrics-port"]; ok {
			t.Error("metricsPort written")
		}
	})
	t.Run("a null deletes a default as helm does", func(t *testing.T) {
		inst, err := loadValuesText(t, "agent:\n  defaults:\n    metricsPort: null\n")
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := inst.Fleet["metrics-port"]; ok {
			t.Error("metricsPort written")
		}
	})
	t.Run("the image takes the digest over the tag", func(t *testing.T) {
		inst, err := loadValuesText(t, "agent:\n  image: registry.local/agent\n  tag: v9\n  digest: sha256:abc\n  pullSecret: regcred\n")
		if err != nil {
			t.Fatal(err)
		}
		if inst.AgentImage != "registry.local/agent@sha256:abc" || inst.PullSecret != "regcred" {
			t.Errorf("image %q secret %q", inst.AgentImage, inst.PullSecret)
		}
	})
	t.Run("events are allowed by either value", func(t *testing.T) {
		inst, err := loadValuesText(t, "agent:\n  events: {enabled: true}\n")
		if err != nil || !inst.AllowEvents {
			t.Errorf("%v %+v", err, inst)
		}
	})
	t.Run("env, perStore, gates, switches and the env policy land under their keys", func(t *testing.T) {
		inst, err := loadValuesText(t, `agent:
  defaults:
    env: "RUST_LOG=info"
    perStore:
      redis: {watch-seconds: "10"}
webhook:
  agentEnvAllow: {payments: [AWS_*]}
  sourceAllow: "*: consul"
  sourceDeny: "sandbox: git"
  agentImageAllow: "ghcr.io/acme/"
  allowTlsSkipVerify: true
envPolicy:
  targets: [pods]
  rules:
    - environmentVariables: [{name: HTTPS_PROXY}]
`)
		if err != nil {
			t.Fatal(err)
		}
		if len(inst.AgentEnv) != 1 || inst.Stores["redis"] == nil || !inst.AgentEnvAllow.Set() || !inst.SourceAllow.Set() || !inst.SourceDeny.Set() ||
			!reflect.DeepEqual(inst.AgentImageAllow, []string{"ghcr.io/acme/"}) || !inst.AllowTLSSkipVerify || inst.EnvPolicy == nil ||
			!reflect.DeepEqual(inst.EnvPolicy.Targets, []string{"pods"}) {
			t.Errorf("got %s", inst.Canonical)
		}
	})
	t.Run("a switch that is not a boolean is refused, never coerced", func(t *testing.T) {
		_, err := loadValuesText(t, "webhook:\n  allowEvents: \"yes\"\n  allowTlsSkipVerify: \"false\"\n")
		var p *installation.Problems
		if !errors.As(err, &p) {
			t.Fatalf("got %v", err)
		}
		assertLines(t, p.Lines, []string{`DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS: allowEvents is "yes": "true" or "false"`})
	})
	t.Run("a map-form gate reaches the document in Helm's sorted key order", func(t *testing.T) {
		inst, err := loadValuesText(t, "webhook:\n  sourceAllow:\n    team-b: [s3]\n    \"*\": [consul]\n    team-a: vault\n")
		if err != nil {
			t.Fatal(err)
		}
		want := []installation.GateGroup{{Namespace: "*", Names: []string{"consul"}}, {Namespace: "team-a", Names: []string{"vault"}}, {Namespace: "team-b", Names: []string{"s3"}}}
		if !reflect.DeepEqual(inst.SourceAllow.Groups, want) {
			t.Errorf("got %+v", inst.SourceAllow.Groups)
		}
	})
	t.Run("values the chart refuses are refused with the installation's messages", func(t *testing.T) {
		_, err := loadValuesText(t, "agent:\n  defaults:\n    endpoint: http://x\n    fileMode: \"0999\"\nwebhook:\n  classes: {enabled: true}\n  selfRotate: {enabled: true}\n")
		var p *installation.Problems
		if !errors.As(err, &p) {
			t.Fatalf("got %v", err)
		}
		assertLines(t, p.Lines, []string{
			`endpoint: "endpoint" is not an installation setting; endpoint is a per-store knob — set it under storeDefaults.<store>; the ones there are: ` + joinKeys(),
			`fileMode [DYNAMIC_CONFIG_AGENT_FILE_MODE]: file-mode is "0999": octal, like "0640"`,
		})
	})
	t.Run("the process environment wins over what the chart would set", func(t *testing.T) {
		inst, err := loadValuesText(t, "agent:\n  defaults:\n    watchSeconds: \"30\"\n", "DYNAMIC_CONFIG_AGENT_IMAGE=registry.local/a:1", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=5")
		if err != nil {
			t.Fatal(err)
		}
		if inst.AgentImage != "registry.local/a:1" || inst.Fleet["watch-seconds"].Text != "5" {
			t.Errorf("got %s", inst.Canonical)
		}
	})
	t.Run("a missing values file is reported", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "values.yaml")
		_, err := Load(p, nil)
		if err == nil || err.Error() != "dynamic-config: the installation is invalid (1 problem; document "+p+"):\n  "+p+": the chart values file does not exist" {
			t.Errorf("got %v", err)
		}
	})
}

func joinKeys() string {
	out := ""
	for i, k := range installation.DocumentKeys() {
		if i > 0 {
			out += ", "
		}
		out += k
	}
	return out
}

func TestChartValuesTakeWholeNumbersForWatchSecondsAndCPUs(t *testing.T) {
	numbers, err := loadValuesText(t, "agent:\n  defaults:\n    watchSeconds: 30\n    cpuLimit: 2\n    perStore:\n      git: {watch-seconds: 120, agent-cpu-request: 1}\n")
	if err != nil {
		t.Fatal(err)
	}
	quoted, err := loadValuesText(t, "agent:\n  defaults:\n    watchSeconds: \"30\"\n    cpuLimit: \"2\"\n    perStore:\n      git: {watch-seconds: \"120\", agent-cpu-request: \"1\"}\n")
	if err != nil {
		t.Fatal(err)
	}
	if numbers.Revision != quoted.Revision {
		t.Errorf("numbers give revision %s, the same values quoted %s", numbers.Revision, quoted.Revision)
	}
}

func TestChartValuesRefuseNumbersWhereTheChartTakesStrings(t *testing.T) {
	tests := []struct {
		name   string
		values string
		want   []string
	}{
		{"an unquoted fleet fileMode, which Helm would read as 416",
			"agent:\n  defaults:\n    fileMode: 0640\n",
			[]string{`agent.defaults.fileMode: quote it ("0640"), or YAML reads it as a number`}},
		{"unquoted memory quantities, and seconds or CPUs that are no plain whole number",
			"agent:\n  defaults:\n    watchSeconds: 030\n    cpuLimit: 1.5\n    memoryRequest: 64\n",
			[]string{
				`agent.defaults.memoryRequest: quote it ("64Mi"), or YAML reads it as a number`,
				`agent.defaults.cpuLimit: quote it ("64Mi"), or YAML reads it as a number`,
				`agent.defaults.watchSeconds: quote it ("30"), or YAML reads it as a number`,
			}},
		{"unquoted knobs of a map-form perStore, stores in sorted order",
			"agent:\n  defaults:\n    perStore:\n      vault: {file-mode: 0400}\n      git: {watch-seconds: 120, agent-cpu-limit: 0.5, agent-memory-limit: \"128Mi\"}\n",
			[]string{
				`agent.defaults.perStore.git.agent-cpu-limit: quote it ("64Mi"), or YAML reads it as a number`,
				`agent.defaults.perStore.vault.file-mode: quote it ("0640"), or YAML reads it as a number`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadValuesText(t, tt.values)
			var p *installation.Problems
			if !errors.As(err, &p) {
				t.Fatalf("got %v", err)
			}
			assertLines(t, p.Lines, tt.want)
		})
	}
	t.Run("an unquoted 0o640, a string to Helm, is accepted", func(t *testing.T) {
		inst, err := loadValuesText(t, "agent:\n  defaults:\n    fileMode: 0o640\n")
		if err != nil {
			t.Fatal(err)
		}
		if v := inst.Fleet["file-mode"]; v.Text != "0o640" {
			t.Errorf("file-mode %+v", v)
		}
	})
	t.Run("the same values quoted are accepted", func(t *testing.T) {
		if _, err := loadValuesText(t, "agent:\n  defaults:\n    fileMode: \"0640\"\n    watchSeconds: \"30\"\n    perStore:\n      vault: {file-mode: \"0400\"}\n"); err != nil {
			t.Fatal(err)
		}
	})
}

// assertLines compares problem lines, all of them in order.
func assertLines(t *testing.T, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems differ\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// mustLoad loads an installation from the environment alone.
func mustLoad(t *testing.T, doc string, env ...string) *installation.Installation {
	t.Helper()
	if doc != "" {
		t.Fatal("mustLoad takes the environment only here")
	}
	inst, err := installationloader.Load(installationloader.Options{Environ: env})
	if err != nil {
		t.Fatalf("unexpected problems:\n%v", err)
	}
	return inst
}
