package resolve

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// exampleA is worked example A of spec 02 §6.3, as an installation document.
const exampleA = `
overridable: "false"
fileMode: "0640"
watchSeconds: "30?"
storeDefaults:
  vault: "overridable=false, endpoint=https://vault.vault.svc:8200, auth=kubernetes, watch-seconds=30?"
  consul: "overridable=true, endpoint=http://consul.infra.svc:8500"
`

// exampleB is worked example B of spec 02 §6.4.
const exampleB = `
source: "consul"
path: "/config/app.json"
watchSeconds: "30"
fileMode: "0640"
storeDefaults:
  consul: "endpoint=http://consul.infra.svc:8500!, key=shared/app.json, watch-seconds=10"
  vault: "overridable=false, endpoint=https://vault.vault.svc:8200, auth=kubernetes, ca-configmap=vault-ca, file-mode=0400, agent-run-as-user=1000, agent-run-as-group=1000"
`

func TestWorkedExampleATheClosestWordWins(t *testing.T) {
	inst := load(t, exampleA)
	base := func(store string, extra ...string) *decision.Facts {
		return facts(append([]string{"inject", "true", "source", store, "key", "k", "path", "/config/app.json"}, extra...)...)
	}
	tests := []struct {
		name     string
		pod      *decision.Facts
		wantArgs string // contained in the watching agent's args
		check    string // refusal check, "" = injected
		message  string
	}{
		{"a consul pod with no other annotation is filled by the tiers", base("consul"),
			"--endpoint http://consul.infra.svc:8500 --key k --out /config/app.json --file-mode 0640 --watch 30", "", ""},
		{"the consul group's overridable true opens its own endpoint", base("consul", "endpoint", "http://consul.other.svc:8500"),
			"--endpoint http://consul.other.svc:8500", "", ""},
		{"the consul flag cannot open the pinned fleet file mode", base("consul", "file-mode", "0600"), "", "pin.file-mode",
			`dynamic-config.rs/file-mode is "0600", but the installation pins it to "0640" — match it or drop the annotation; the installer can reopen it with a trailing "?" or overridable "true"`},
		{"the fleet watch-seconds carries a question mark", base("consul", "watch-seconds", "10"), "--watch 10", "", ""},
		{"restating the pinned vault endpoint passes", base("vault", "endpoint", "https://vault.vault.svc:8200"),
			"--endpoint https://vault.vault.svc:8200", "", ""},
		{"a differing vault endpoint is refused", base("vault", "endpoint", "https://evil.example:8200"), "", "pin.endpoint",
			`dynamic-config.rs/endpoint is "https://evil.example:8200", but the installation pins it to "https://vault.vault.svc:8200" — match it or drop the annotation; the installer can reopen it with a trailing "?" or overridable "true"`},
		{"the pair follows the pin", base("vault", "endpoint-secret", "vault-addr/url"), "", "pair-pin.endpoint",
			`dynamic-config.rs/endpoint-secret is set, but the installation pins dynamic-config.rs/endpoint to "https://vault.vault.svc:8200" — the pair answers as one: drop dynamic-config.rs/endpoint-secret`},
		{"a differing vault auth is refused", base("vault", "auth", "token"), "", "pin.auth",
			`dynamic-config.rs/auth is "token", but the installation pins it to "kubernetes" — match it or drop the annotation; the installer can reopen it with a trailing "?" or overridable "true"`},
		{"a question mark inside a strict group opens just that value", base("vault", "watch-seconds", "5"), "--watch 5", "", ""},
		{"a redis pod restating the pinned fleet file mode passes", base("redis", "endpoint", "redis://redis:6379", "file-mode", "0640"),
			"--file-mode 0640", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(inst, nil, tt.pod)
			if tt.check != "" {
				r := mustRefuse(t, d)
				if r.Check != tt.check || r.Message != tt.message || r.Slug != SlugPinned || r.HTTPCode != 400 {
					t.Fatalf("refusal %+v\nwant %s: %s", r, tt.check, tt.message)
				}
				return
			}
			mustInject(t, d)
			if got := args(agent(t, d, "dynamic-config-agent")); !strings.Contains(got, tt.wantArgs) {
				t.Fatalf("args %q do not contain %q", got, tt.wantArgs)
			}
		})
	}
}

func TestWorkedExampleBTheMinimalPod(t *testing.T) {
	inst := load(t, exampleB)

	t.Run("a pod with only inject gets one watching agent from the tiers", func(t *testing.T) {
		d := Decide(inst, nil, facts("inject", "true"))
		mustInject(t, d)
		want := "--source consul --endpoint http://consul.infra.svc:8500 --key shared/app.json --out /config/app.json --file-mode 0640 --watch 10"
		if got := args(agent(t, d, "dynamic-config-agent")); got != want {
			t.Fatalf("args\n got %s\nwant %s", got, want)
		}
		if n := len(d.Plan.Agents); n != 1 {
			t.Fatalf("%d agents, want 1", n)
		}
		src := resolved(t, d, "", "source")
		if src.Tier != decision.TierFleetDefault || src.DocumentPath != "source" || src.Variable != "DYNAMIC_CONFIG_AGENT_SOURCE" || src.Value != "consul" {
			t.Errorf("source provenance %+v", src)
		}
		ep := resolved(t, d, "", "endpoint")
		if ep.Tier != decision.TierStoreDefault || ep.Store != "consul" || !ep.Pinned || ep.OverrideRule != decision.OverrideMarker ||
			!strings.HasPrefix(ep.DocumentPath, "storeDefaults.consul") || ep.Variable != "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS" {
			t.Errorf("endpoint provenance %+v", ep)
		}
		ws := resolved(t, d, "", "watch-seconds")
		if ws.Tier != decision.TierStoreDefault || ws.Value != "10" || ws.Pinned || ws.OverrideRule != decision.OverrideFleetFlag {
			t.Errorf("watch-seconds provenance %+v", ws)
		}
		fm := resolved(t, d, "", "file-mode")
		if fm.Tier != decision.TierFleetDefault || fm.Value != "0640" {
			t.Errorf("file-mode provenance %+v", fm)
		}
		mode := resolved(t, d, "", "mode")
		if mode.Tier != decision.TierBuiltIn || mode.Value != "sidecar" || mode.OverrideRule != decision.OverrideNotApplicable {
			t.Errorf("mode provenance %+v", mode)
		}
		if tc := resolved(t, d, "", "timeout"); tc.Tier != decision.TierNone || tc.Set {
			t.Errorf("timeout provenance %+v", tc)
		}
	})

	t.Run("the same pod with another endpoint is refused as pinned", func(t *testing.T) {
		r := mustRefuse(t, Decide(inst, nil, facts("inject", "true", "endpoint", "http://elsewhere:8500")))
		want := `dynamic-config.rs/endpoint is "http://elsewhere:8500", but the installation pins it to "http://consul.infra.svc:8500" — match it or drop the annotation; the installer can reopen it with a trailing "?" or overridable "true"`
		if r.Check != "pin.endpoint" || r.Message != want || r.Slug != SlugPinned {
			t.Fatalf("refusal %+v", r)
		}
	})

	t.Run("a vault pod resolves pod-wide knobs against the vault group", func(t *testing.T) {
		d := Decide(inst, nil, facts("inject", "true", "source", "vault", "endpoint", "https://vault.vault.svc:8200",
			"key", "secret/myapp", "section", "db", "auth", "kubernetes", "auth-role", "myapp",
			"ca-configmap", "vault-ca", "path", "/config/rendered.yaml"))
		mustInject(t, d)
		a := agent(t, d, "dynamic-config-agent")
		want := "--source vault --endpoint https://vault.vault.svc:8200 --key secret/myapp --out /config/rendered.yaml --section db --auth kubernetes --auth-role myapp --ca /etc/dynamic-config/ca/ca.crt --file-mode 0400 --watch 30"
		if got := args(a); got != want {
			t.Fatalf("args\n got %s\nwant %s", got, want)
		}
		if a.SecurityContext.RunAsUser != 1000 || a.SecurityContext.RunAsGroup != 1000 {
			t.Errorf("security context %+v", a.SecurityContext)
		}
		uid := resolved(t, d, "", "agent-run-as-user")
		if uid.Tier != decision.TierStoreDefault || uid.Store != "vault" || !uid.Pinned || uid.OverrideRule != decision.OverrideStoreFlag {
			t.Errorf("run-as-user provenance %+v", uid)
		}
	})
}
