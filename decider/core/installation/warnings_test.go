package installation

import (
	"reflect"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

func TestAdvisoryWarnings(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		env  []string
		want []string
	}{
		{"no warnings for a plain installation", "watchSeconds: \"30\"\n", nil, nil},
		{"an anyIn rule rejecting what the fleet environment sets",
			"agentEnv: \"HTTPS_PROXY=http://egress:3128\"\nenvPolicy:\n  rules:\n    - environmentVariables: [{name: HTTPS_PROXY}]\n", nil,
			[]string{
				"envPolicy rule 0 (anyIn) rejects HTTPS_PROXY, which the fleet agentEnv sets on every agent: every injected pod it applies to would be reported or refused",
				EnvPolicyWarning,
			}},
		{"an anyIn rule whose listed value differs from the fleet's is no finding",
			"agentEnv: \"LOG_LEVEL=info\"\nenvPolicy:\n  rules:\n    - environmentVariables: [{name: LOG_LEVEL, value: debug}]\n", nil,
			[]string{EnvPolicyWarning}},
		{"a bare star in agentEnvAllow, per namespace and everywhere", "agentEnvAllow: \"dev: *; *\"\n", nil,
			[]string{
				`agentEnvAllow opens every agent-env name with "*" in namespace "dev"; pods there may steer the agent's proxies and trust roots`,
				`agentEnvAllow opens every agent-env name with "*" in every namespace; pods there may steer the agent's proxies and trust roots`,
			}},
		{"TLS skip-verify offered", "", []string{"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true"},
			[]string{"allowTlsSkipVerify is true: pods may turn off TLS verification towards their store with dynamic-config.rs/tls-skip-verify"}},
		{"a redundant ! under a strict fleet flag", "overridable: \"false\"\nfileMode: \"0640!\"\n", nil,
			[]string{`fleet fileMode carries "!" while overridable is "false": the marker is redundant`}},
		{"a fleet metricsPort pinned by the fleet flag", "overridable: \"false\"\nmetricsPort: 9110\n", nil,
			[]string{`fleet metricsPort is pinned by overridable=false; pods cannot opt out with metrics-port "0"`}},
		{"a fleet metricsPort opened by its own marker is no finding", "overridable: \"false\"\nmetricsPort: 9110?\n", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := mustLoad(t, tt.doc, tt.env...)
			if !reflect.DeepEqual(inst.Warnings, tt.want) {
				t.Errorf("got  %q\nwant %q", inst.Warnings, tt.want)
			}
		})
	}
}

func TestDisplaySettings(t *testing.T) {
	inst := mustLoad(t, "watchSeconds: \"30!\"\n", "DYNAMIC_CONFIG_AGENT_ENV=HTTPS_PROXY=http://u:pw@proxy:3128")
	byName := map[string]Setting{}
	var names []string
	for _, s := range inst.Settings {
		byName[s.Name] = s
		names = append(names, s.Name)
	}
	t.Run("every plain setting appears in table order", func(t *testing.T) {
		// the fleet defaults (the registry's, in spec 02 §2.1 order), then the rest
		var want []string
		for _, id := range registry.Fleet() {
			want = append(want, id.Row().Setting.Key)
		}
		want = append(want, "agentEnv", "overridable",
			"agentImageAllow", "allowEvents", "allowTlsSkipVerify", "classesEnabled", "agentImage", "pullSecret", "matchGuaranteed")
		if !reflect.DeepEqual(names, want) {
			t.Errorf("got %q", names)
		}
	})
	t.Run("a document value names its file and key", func(t *testing.T) {
		s := byName["watchSeconds"]
		if s.Value != "30" || !s.Set || s.Marker != MarkerPinned || !s.Pinned || s.Source != SourceDocument ||
			s.Origin != inst.DocumentPath+": watchSeconds" || s.BuiltIn != "15" || s.ChartValue != "agent.defaults.watchSeconds" {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("an environment value is URL-redacted", func(t *testing.T) {
		if s := byName["agentEnv"]; s.Value != "HTTPS_PROXY=http://…@proxy:3128" || s.Origin != "DYNAMIC_CONFIG_AGENT_ENV" || s.Source != SourceEnvironment {
			t.Errorf("got %+v", s)
		}
	})
	t.Run("an unset setting shows its built-in", func(t *testing.T) {
		if s := byName["agentImage"]; s.Value != BuiltInAgentImage || s.Set || s.Source != SourceBuiltIn {
			t.Errorf("got %+v", s)
		}
		if s := byName["source"]; s.Value != "" || s.Set || s.Source != SourceUnset {
			t.Errorf("got %+v", s)
		}
	})
}
