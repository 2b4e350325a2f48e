package chart

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// seedValues are the worked chart-values files, beside the check-installation
// tests that read them through the command line.
const seedValues = "../../cmd/dynamic-config/testdata/values/"

// loadValues loads a testdata chart-values file without the process environment.
func loadValues(t *testing.T, name string) *installation.Installation {
	t.Helper()
	inst, err := Load(seedValues+name, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return inst
}

// pinState is what a test expects of one installation value.
type pinState struct {
	text   string
	pinned bool
	rule   installation.OverrideRule
}

func checkValue(t *testing.T, where string, v installation.Value, ok bool, want pinState) {
	t.Helper()
	if !ok {
		t.Errorf("%s: not set", where)
		return
	}
	if v.Text != want.text || v.Pinned != want.pinned || v.Rule != want.rule {
		t.Errorf("%s: got text %q pinned %v rule %v, want %+v", where, v.Text, v.Pinned, v.Rule, want)
	}
}

func TestSeedNineStoreInstallation(t *testing.T) {
	inst := loadValues(t, "seed000-nine-stores.values.yaml")
	fleet := func(k string) (installation.Value, bool) { v, ok := inst.Fleet[k]; return v, ok }
	t.Run("the fleet's floor and file mode", func(t *testing.T) {
		v, ok := fleet("watch-seconds")
		checkValue(t, "watchSeconds", v, ok, pinState{"30", false, installation.OverrideFleetFlag})
		v, ok = fleet("file-mode")
		checkValue(t, "fileMode", v, ok, pinState{"0640", false, installation.OverrideFleetFlag})
	})
	tests := []struct {
		name  string
		store string
		knob  string
		want  pinState
	}{
		{"consul's address is the platform's, pinned", "consul", "endpoint", pinState{"http://consul.infra.svc:8500", true, installation.OverrideMarker}},
		{"consul polls every 10s, overridable", "consul", "watch-seconds", pinState{"10", false, installation.OverrideFleetFlag}},
		{"vault's whole group is the platform team's word", "vault", "endpoint", pinState{"https://vault.vault.svc:8200", true, installation.OverrideStoreFlag}},
		{"vault auth", "vault", "auth", pinState{"kubernetes", true, installation.OverrideStoreFlag}},
		{"vault CA", "vault", "ca-configmap", pinState{"vault-ca", true, installation.OverrideStoreFlag}},
		{"the vault file lands owner-only", "vault", "file-mode", pinState{"0400", true, installation.OverrideStoreFlag}},
		{"owned by the app's uid", "vault", "agent-run-as-user", pinState{"1000", true, installation.OverrideStoreFlag}},
		{"and gid", "vault", "agent-run-as-group", pinState{"1000", true, installation.OverrideStoreFlag}},
		{"config-server gets room to answer", "config-server", "watch-seconds", pinState{"20", false, installation.OverrideFleetFlag}},
		{"config-server's memory limit", "config-server", "agent-memory-limit", pinState{"96Mi", false, installation.OverrideFleetFlag}},
		{"firestore polls gently", "firestore", "watch-seconds", pinState{"120", false, installation.OverrideFleetFlag}},
		{"git polls gently", "git", "watch-seconds", pinState{"120", false, installation.OverrideFleetFlag}},
		{"git's clone gets memory", "git", "agent-memory-limit", pinState{"128Mi", false, installation.OverrideFleetFlag}},
		{"redis is near-free", "redis", "watch-seconds", pinState{"10", false, installation.OverrideFleetFlag}},
		{"etcd's interval is a backstop", "etcd", "watch-seconds", pinState{"60", false, installation.OverrideFleetFlag}},
		{"nats is push-cheap", "nats", "watch-seconds", pinState{"10", false, installation.OverrideFleetFlag}},
		{"s3 polls per bill", "s3", "watch-seconds", pinState{"60", false, installation.OverrideFleetFlag}},
		{"s3 documents are big", "s3", "agent-memory-limit", pinState{"128Mi", false, installation.OverrideFleetFlag}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, ok := inst.Stores[tt.store]
			if !ok {
				t.Fatalf("no %s group", tt.store)
			}
			v, ok := g.Knobs[tt.knob]
			checkValue(t, tt.store+"."+tt.knob, v, ok, tt.want)
		})
	}
	t.Run("all nine stores have a group", func(t *testing.T) {
		for _, s := range installation.Stores {
			if _, ok := inst.Stores[s]; !ok {
				t.Errorf("no group for %s", s)
			}
		}
	})
	t.Run("the kustomize form of the same lines gives the same store defaults", func(t *testing.T) {
		env := mustLoad(t, "",
			"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30", "DYNAMIC_CONFIG_AGENT_FILE_MODE=0640", "DYNAMIC_CONFIG_AGENT_METRICS_PORT=9110",
			"DYNAMIC_CONFIG_AGENT_IMAGE=ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0",
			"DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=false", "DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS=false",
			"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=consul: endpoint=http://consul.infra.svc:8500!, watch-seconds=10; "+
				"vault: overridable=false, endpoint=https://vault.vault.svc:8200, auth=kubernetes, ca-configmap=vault-ca, file-mode=0400, agent-run-as-user=1000, agent-run-as-group=1000; "+
				"config-server: watch-seconds=20, agent-memory-limit=96Mi; firestore: watch-seconds=120; git: watch-seconds=120, agent-memory-limit=128Mi; "+
				"redis: watch-seconds=10; etcd: watch-seconds=60; nats: watch-seconds=10; s3: watch-seconds=60, agent-memory-limit=128Mi")
		if env.Revision != inst.Revision {
			t.Errorf("revisions differ\n env:    %s\n values: %s", env.Canonical, inst.Canonical)
		}
	})
}

func TestSeedKustomizeOverlay(t *testing.T) {
	inst := mustLoad(t, "",
		"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS=vault: file-mode=0400; git: watch-seconds=120",
		"DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY=sandbox: git")
	if inst.Stores["vault"].Knobs["file-mode"].Text != "0400" || inst.Stores["git"].Knobs["watch-seconds"].Text != "120" {
		t.Errorf("stores %+v", inst.Stores)
	}
	if !inst.SourceDeny.Matches("sandbox", "git") || inst.SourceDeny.Matches("default", "git") {
		t.Errorf("deny %+v", inst.SourceDeny)
	}
}

func TestWorkedExampleAClosestWordWins(t *testing.T) {
	inst := loadValues(t, "seed000-pins.values.yaml")
	tests := []struct {
		name string
		v    func() (installation.Value, bool)
		want pinState
	}{
		{"fileMode is pinned by the fleet flag", func() (installation.Value, bool) { v, ok := inst.Fleet["file-mode"]; return v, ok },
			pinState{"0640", true, installation.OverrideFleetFlag}},
		{"watchSeconds is opened by its own marker", func() (installation.Value, bool) { v, ok := inst.Fleet["watch-seconds"]; return v, ok },
			pinState{"30", false, installation.OverrideMarker}},
		{"the consul group's flag opens its endpoint under a strict fleet", func() (installation.Value, bool) { v, ok := inst.Stores["consul"].Knobs["endpoint"]; return v, ok },
			pinState{"http://consul.infra.svc:8500", false, installation.OverrideStoreFlag}},
		{"the vault group's flag pins its endpoint", func() (installation.Value, bool) { v, ok := inst.Stores["vault"].Knobs["endpoint"]; return v, ok },
			pinState{"https://vault.vault.svc:8200", true, installation.OverrideStoreFlag}},
		{"the vault group's flag pins its auth", func() (installation.Value, bool) { v, ok := inst.Stores["vault"].Knobs["auth"]; return v, ok },
			pinState{"kubernetes", true, installation.OverrideStoreFlag}},
		{"a ? inside a strict group opens just that value", func() (installation.Value, bool) { v, ok := inst.Stores["vault"].Knobs["watch-seconds"]; return v, ok },
			pinState{"30", false, installation.OverrideMarker}},
		{"the chart's metricsPort default is pinned by the fleet flag", func() (installation.Value, bool) { v, ok := inst.Fleet["metrics-port"]; return v, ok },
			pinState{"9110", true, installation.OverrideFleetFlag}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := tt.v()
			checkValue(t, tt.name, v, ok, tt.want)
		})
	}
	t.Run("the chart's own resource defaults never become pins", func(t *testing.T) {
		for _, k := range []string{"agent-cpu-request", "agent-memory-request", "agent-memory-limit"} {
			if v, ok := inst.Fleet[k]; ok {
				t.Errorf("%s written: %+v", k, v)
			}
		}
	})
	t.Run("the fleet flag is false", func(t *testing.T) {
		if inst.FleetOverridable {
			t.Error("overridable true")
		}
	})
}

func TestWorkedExampleBTheMinimalPod(t *testing.T) {
	inst := loadValues(t, "worked-example-b.values.yaml")
	tests := []struct {
		name string
		v    func() (installation.Value, bool)
		want pinState
	}{
		{"the fleet source", func() (installation.Value, bool) { v, ok := inst.Fleet["source"]; return v, ok }, pinState{"consul", false, installation.OverrideFleetFlag}},
		{"the fleet path", func() (installation.Value, bool) { v, ok := inst.Fleet["path"]; return v, ok }, pinState{"/config/app.json", false, installation.OverrideFleetFlag}},
		{"the consul endpoint carries !", func() (installation.Value, bool) { v, ok := inst.Stores["consul"].Knobs["endpoint"]; return v, ok },
			pinState{"http://consul.infra.svc:8500", true, installation.OverrideMarker}},
		{"the consul key", func() (installation.Value, bool) { v, ok := inst.Stores["consul"].Knobs["key"]; return v, ok },
			pinState{"shared/app.json", false, installation.OverrideFleetFlag}},
		{"the consul watch outranks the fleet's 30", func() (installation.Value, bool) { v, ok := inst.Stores["consul"].Knobs["watch-seconds"]; return v, ok },
			pinState{"10", false, installation.OverrideFleetFlag}},
		{"the vault file mode is pinned but fills what pods omit", func() (installation.Value, bool) { v, ok := inst.Stores["vault"].Knobs["file-mode"]; return v, ok },
			pinState{"0400", true, installation.OverrideStoreFlag}},
		{"the vault uid", func() (installation.Value, bool) {
			v, ok := inst.Stores["vault"].Knobs["agent-run-as-user"]
			return v, ok
		},
			pinState{"1000", true, installation.OverrideStoreFlag}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := tt.v()
			checkValue(t, tt.name, v, ok, tt.want)
		})
	}
}

func TestSeedGatesAndFleetEnvironment(t *testing.T) {
	allow := loadValues(t, "seed000-agent-env-allow.values.yaml")
	if got := strings.Join(allow.AgentEnvAllow.Listing("default"), ", "); got != "RUST_LOG" {
		t.Errorf("default listing %q", got)
	}
	if !allow.AgentEnvAllow.Matches("payments", "AWS_REGION") || allow.AgentEnvAllow.Matches("default", "HTTPS_PROXY") {
		t.Errorf("matching %+v", allow.AgentEnvAllow)
	}
	fleet := loadValues(t, "seed000-fleet-env.values.yaml")
	if len(fleet.AgentEnv) != 2 || fleet.AgentEnv[0] != (installation.EnvEntry{Name: "HTTPS_PROXY", Value: "http://egress.infra.svc:3128"}) || fleet.AgentEnv[1] != (installation.EnvEntry{Name: "RUST_LOG", Value: "info"}) {
		t.Errorf("agent env %+v", fleet.AgentEnv)
	}
	gates := loadValues(t, "seed000-source-gates.values.yaml")
	if got := strings.Join(gates.SourceAllow.Listing("payments"), ", "); got != "vault, s3, consul" {
		t.Errorf("payments listing %q", got)
	}
	if got := strings.Join(gates.SourceAllow.Listing("team-a"), ", "); got != "consul" {
		t.Errorf("team-a listing %q", got)
	}
	if !gates.SourceDeny.Matches("sandbox", "git") {
		t.Error("sandbox git not denied")
	}
}

// BenchmarkLoadSeedInstallation is one reload of the nine-store installation.
func BenchmarkLoadSeedInstallation(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(seedValues+"seed000-nine-stores.values.yaml", nil); err != nil {
			b.Fatal(err)
		}
	}
}
