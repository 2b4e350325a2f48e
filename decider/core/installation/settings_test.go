package installation

import (
	"testing"
)

func TestFleetSettingValues(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		problem string // "" = accepted
	}{
		{"whole seconds", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30", ""},
		{"leading zeros are accepted", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=030", ""},
		{"not a number", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=abc", `DYNAMIC_CONFIG_AGENT_WATCH_SECONDS: watch-seconds is "abc": whole seconds`},
		{"a sign is not strict decimal", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=+5", `DYNAMIC_CONFIG_AGENT_WATCH_SECONDS: watch-seconds is "+5": whole seconds`},
		{"a root UID", "DYNAMIC_CONFIG_AGENT_RUN_AS_USER=0", `DYNAMIC_CONFIG_AGENT_RUN_AS_USER: agent-run-as-user is 0: the agent stays nonroot in every configuration`},
		{"a relative path", "DYNAMIC_CONFIG_AGENT_PATH=config/app.toml", `DYNAMIC_CONFIG_AGENT_PATH: path is "config/app.toml": an absolute file path in a directory of its own, like "/config/app.toml"`},
		{"a path under the agent's own tree", "DYNAMIC_CONFIG_AGENT_PATH=/etc/dynamic-config/x.json", `DYNAMIC_CONFIG_AGENT_PATH: path is "/etc/dynamic-config/x.json": /etc/dynamic-config and everything under it is where the agent mounts its own files — choose another directory`},
		{"a store that is not one of the nine", "DYNAMIC_CONFIG_AGENT_SOURCE=mongo", `DYNAMIC_CONFIG_AGENT_SOURCE: source is "mongo": one of consul, vault, config-server, firestore, git, redis, etcd, nats, s3`},
		{"an octal file mode", "DYNAMIC_CONFIG_AGENT_FILE_MODE=0o640", ""},
		{"a file mode without owner read", "DYNAMIC_CONFIG_AGENT_FILE_MODE=0240", `DYNAMIC_CONFIG_AGENT_FILE_MODE: file-mode is "0240": the owner must at least read it (0400 set)`},
		{"a quantity", "DYNAMIC_CONFIG_AGENT_CPU_LIMIT=500m", ""},
		{"not a quantity", "DYNAMIC_CONFIG_AGENT_CPU_LIMIT=lots", `DYNAMIC_CONFIG_AGENT_CPU_LIMIT: agent-cpu-limit is "lots": a Kubernetes quantity, like "50m" or "64Mi"`},
		{"a mode", "DYNAMIC_CONFIG_AGENT_MODE=Both", `DYNAMIC_CONFIG_AGENT_MODE: mode is "Both": init, sidecar or both`},
		{"a boolean knob", "DYNAMIC_CONFIG_AGENT_NATIVE_SIDECAR=yes", `DYNAMIC_CONFIG_AGENT_NATIVE_SIDECAR: native-sidecar is "yes": "true" or "false"`},
		{"a volume medium", "DYNAMIC_CONFIG_AGENT_VOLUME_MEDIUM=tmpfs", `DYNAMIC_CONFIG_AGENT_VOLUME_MEDIUM: volume-medium is "tmpfs": memory (default) or disk`},
		{"a port out of range", "DYNAMIC_CONFIG_AGENT_METRICS_PORT=65536", `DYNAMIC_CONFIG_AGENT_METRICS_PORT: metrics-port is "65536": a port number`},
		{"port zero means none", "DYNAMIC_CONFIG_AGENT_METRICS_PORT=0", ""},
		{"a marker alone is empty", "DYNAMIC_CONFIG_AGENT_MODE= ?", `DYNAMIC_CONFIG_AGENT_MODE: mode is empty`},
		{"a marker is stripped before the grammar", "DYNAMIC_CONFIG_AGENT_MODE=both !", ""},
		{"the fleet flag", "DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE=False", `DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE: overridable is "False": "true" or "false"`},
		{"the fleet flag takes no marker", "DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE=false!", `DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE: overridable is "false!": "true" or "false"`},
		{"allowEvents", "DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS=1", `DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS: allowEvents is "1": "true" or "false"`},
		{"allowTlsSkipVerify", "DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=on", `DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY: allowTlsSkipVerify is "on": "true" or "false"`},
		{"classes may stay false", "DYNAMIC_CONFIG_WEBHOOK_CLASSES=false", ""},
		{"classes may be enabled (spec 08)", "DYNAMIC_CONFIG_WEBHOOK_CLASSES=true", ""},
		{"classes is a boolean", "DYNAMIC_CONFIG_WEBHOOK_CLASSES=no", `DYNAMIC_CONFIG_WEBHOOK_CLASSES is "no": "true" or "false"`},
		{"an image with a space", "DYNAMIC_CONFIG_AGENT_IMAGE=ghcr.io/a b", `DYNAMIC_CONFIG_AGENT_IMAGE is "ghcr.io/a b": an image reference without spaces`},
		{"a pull secret with a slash", "DYNAMIC_CONFIG_AGENT_PULL_SECRET=ns/regcred", `DYNAMIC_CONFIG_AGENT_PULL_SECRET is "ns/regcred": a Secret name`},
		{"an image allow list", "DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=ghcr.io/acme/, registry.local/", ""},
		{"an image allow list entry *", "DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=ghcr.io/acme/, *", `DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW: "*" is not a prefix; list image prefixes like "ghcr.io/acme/"`},
		{"an image allow list that names nothing", "DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=,", `DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW: names nothing; leave it empty to allow no agent-image`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadYAML(t, "", tt.env)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("unexpected problems: %v", err)
				}
				return
			}
			assertLines(t, problemLines(t, "", tt.env), []string{tt.problem})
		})
	}
}

func TestFleetValuesKeepTheirTextAndMarker(t *testing.T) {
	inst := mustLoad(t, "watchSeconds: 30 ?\nfileMode: 0640\nmode: \"both!\"\n",
		"DYNAMIC_CONFIG_AGENT_RUN_AS_USER= 01000 ")
	tests := []struct {
		knob, text, normalised string
		marker                 Marker
		source                 Source
		docPath                string
	}{
		{"watch-seconds", "30", "30", MarkerOverridable, SourceDocument, "watchSeconds"},
		{"file-mode", "0640", "0640", MarkerNone, SourceDocument, "fileMode"},
		{"mode", "both", "both", MarkerPinned, SourceDocument, "mode"},
		{"agent-run-as-user", "01000", "1000", MarkerNone, SourceEnvironment, ""},
	}
	for _, tt := range tests {
		t.Run("the fleet "+tt.knob+" keeps what was written", func(t *testing.T) {
			v := inst.Fleet[tt.knob]
			if v.Text != tt.text || v.Normalised != tt.normalised || v.Marker != tt.marker || v.Source != tt.source || v.DocumentPath != tt.docPath {
				t.Errorf("got %+v", v)
			}
		})
	}
	if string(inst.Canonical) != `{"DYNAMIC_CONFIG_AGENT_FILE_MODE":"0640","DYNAMIC_CONFIG_AGENT_MODE":"both!","DYNAMIC_CONFIG_AGENT_RUN_AS_USER":"01000","DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"30?"}` {
		t.Errorf("canonical %s", inst.Canonical)
	}
}

func TestSwitchesImageAndPullSecretReachTheSnapshot(t *testing.T) {
	inst := mustLoad(t, "",
		"DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS=true",
		"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true",
		"DYNAMIC_CONFIG_AGENT_IMAGE=registry.local/agent:v1",
		"DYNAMIC_CONFIG_AGENT_PULL_SECRET=regcred",
		"DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW=ghcr.io/acme/, registry.local/",
	)
	if !inst.AllowEvents || !inst.AllowTLSSkipVerify || inst.AgentImage != "registry.local/agent:v1" || inst.PullSecret != "regcred" {
		t.Errorf("got %+v", inst)
	}
	if len(inst.AgentImageAllow) != 2 || inst.AgentImageAllow[1] != "registry.local/" {
		t.Errorf("allow %q", inst.AgentImageAllow)
	}
	if empty := mustLoad(t, ""); empty.AgentImage != BuiltInAgentImage || empty.AllowEvents || !empty.FleetOverridable {
		t.Errorf("built-ins %+v", empty)
	}
}
