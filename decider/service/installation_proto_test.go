package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dynamic-config-admission/dynamic-config/decider/installation"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func loadInstallation(t *testing.T, doc string, env ...string) *installation.Installation {
	t.Helper()
	p := filepath.Join(t.TempDir(), "installation.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	inst, err := installation.Load(installation.Options{DocumentPath: p, DocumentExplicit: true, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func TestInstallationToProto(t *testing.T) {
	inst := loadInstallation(t, `watchSeconds: "30?"
storeDefaults:
  vault:
    overridable: false
    endpoint: https://admin:s3cret@vault.vault.svc:8200
    token-secret: vault-token/token
  consul: "endpoint=http://consul:8500!"
sourceDeny:
  sandbox: [git]
envPolicy:
  rules:
    - environmentVariables:
        - {name: LOG_LEVEL, value: debug}
        - {name: HTTPS_PROXY}
`, "DYNAMIC_CONFIG_AGENT_ENV=HTTPS_PROXY=http://u:pw@proxy:3128")
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	resp := installationToProto(inst, &installation.ReloadStatus{OK: false, At: at, Problems: []string{"p1"}, AttemptedRevision: "sha256:x"})

	t.Run("the header fields", func(t *testing.T) {
		if resp.GetRevision() != inst.Revision || !resp.GetDocumentPresent() || resp.GetBuiltInAgentImage() != installation.BuiltInAgentImage ||
			len(resp.GetStores()) != 9 || resp.GetLoadedAt() == nil {
			t.Errorf("got %v", resp)
		}
	})
	t.Run("settings carry value, marker, pin, source and origin", func(t *testing.T) {
		var ws, env *deciderv1.Setting
		for _, s := range resp.GetSettings() {
			switch s.GetName() {
			case "watchSeconds":
				ws = s
			case "agentEnv":
				env = s
			}
		}
		if ws.GetValue() != "30" || ws.GetMarker() != deciderv1.Marker_MARKER_OVERRIDABLE || ws.GetPinned() ||
			ws.GetSource() != deciderv1.SettingSource_SETTING_SOURCE_DOCUMENT || !strings.HasSuffix(ws.GetOrigin(), ": watchSeconds") || ws.GetBuiltIn() != "15" {
			t.Errorf("watchSeconds %v", ws)
		}
		if env.GetValue() != "HTTPS_PROXY=http://…@proxy:3128" || env.GetSource() != deciderv1.SettingSource_SETTING_SOURCE_ENVIRONMENT {
			t.Errorf("agentEnv %v", env)
		}
	})
	t.Run("store defaults in the nine-store order, values redacted, pins resolved", func(t *testing.T) {
		sd := resp.GetStoreDefaults()
		if len(sd) != 2 || sd[0].GetStore() != "consul" || sd[1].GetStore() != "vault" {
			t.Fatalf("got %v", sd)
		}
		if sd[1].Overridable == nil || sd[1].GetOverridable() {
			t.Errorf("vault flag %v", sd[1].Overridable)
		}
		ep := sd[1].GetKnobs()[0]
		if ep.GetName() != "endpoint" || ep.GetValue() != "https://…@vault.vault.svc:8200" || !ep.GetPinned() ||
			!strings.HasSuffix(ep.GetOrigin(), ": storeDefaults.vault.endpoint") {
			t.Errorf("vault endpoint %v", ep)
		}
		if c := sd[0].GetKnobs()[0]; c.GetMarker() != deciderv1.Marker_MARKER_PINNED || !c.GetPinned() {
			t.Errorf("consul endpoint %v", c)
		}
	})
	t.Run("the three gates, set or not", func(t *testing.T) {
		g := resp.GetGates()
		if len(g) != 3 || g[0].GetName() != "agentEnvAllow" || g[0].GetSource() != deciderv1.SettingSource_SETTING_SOURCE_UNSET ||
			g[2].GetName() != "sourceDeny" || g[2].GetGroups()[0].GetNamespace() != "sandbox" || g[2].GetGroups()[0].GetNames()[0] != "git" {
			t.Errorf("gates %v", g)
		}
	})
	t.Run("env-policy values are never shown, only has_value", func(t *testing.T) {
		p := resp.GetEnvPolicy()
		vars := p.GetRules()[0].GetEnvironmentVariables()
		if !vars[0].GetHasValue() || vars[1].GetHasValue() || p.GetRules()[0].GetReject() != "anyIn" || p.GetRules()[0].GetMode() != "enforce" ||
			strings.Join(p.GetTargets(), ",") != "pods,workloads" {
			t.Errorf("policy %v", p)
		}
		b, _ := protojson.Marshal(resp)
		if strings.Contains(string(b), "debug") || strings.Contains(string(b), "s3cret") || strings.Contains(string(b), ":pw@") {
			t.Errorf("a secret value leaked: %s", b)
		}
	})
	t.Run("the latest reload attempt", func(t *testing.T) {
		lr := resp.GetLastReload()
		if lr.GetOk() || lr.GetProblems()[0] != "p1" || lr.GetAttemptedRevision() != "sha256:x" || !lr.GetAt().AsTime().Equal(at) {
			t.Errorf("last reload %v", lr)
		}
	})
	t.Run("the envPolicy warning is served", func(t *testing.T) {
		// The fleet sets HTTPS_PROXY, which rule 0 rejects: that warning comes first.
		if w := resp.GetWarnings(); len(w) != 2 || !strings.Contains(w[0], "rejects HTTPS_PROXY") || w[1] != installation.EnvPolicyWarning {
			t.Errorf("warnings %q", w)
		}
	})
	t.Run("no reload yet means no last_reload", func(t *testing.T) {
		if installationToProto(installation.Empty(), nil).GetLastReload() != nil {
			t.Error("last_reload present")
		}
	})
}
