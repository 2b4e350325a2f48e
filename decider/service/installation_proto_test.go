package service

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func loadInstallation(t *testing.T, doc string, env ...string) *installation.Installation {
	t.Helper()
	p := filepath.Join(t.TempDir(), "installation.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: p, DocumentExplicit: true, Environ: env})
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
	resp := installationToProto(inst, &installationloader.ReloadStatus{OK: false, At: at, Problems: []string{"p1"}, AttemptedRevision: "sha256:x"})

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
		if f := lr.GetProblemFields(); len(f) != 1 || f[0].GetText() != "p1" || f[0].GetSetting() != "" {
			t.Errorf("a problem without its typed form carries its text only: %v", f)
		}
	})
	t.Run("the envPolicy warning is served", func(t *testing.T) {
		// The fleet sets HTTPS_PROXY, which rule 0 rejects: that warning comes first.
		if w := resp.GetWarnings(); len(w) != 2 || !strings.Contains(w[0], "rejects HTTPS_PROXY") || w[1] != installation.EnvPolicyWarning {
			t.Errorf("warnings %q", w)
		}
	})
	t.Run("a typed problem's value is served with its URL userinfo redacted", func(t *testing.T) {
		item := installation.Problem{Setting: "DYNAMIC_CONFIG_X", Path: "x", Value: "https://u:pw@h/", Expected: "a URL", Text: "x: is bad"}
		rs := &installationloader.ReloadStatus{Problems: []string{item.String()}, Items: []installation.Problem{item}}
		f := installationToProto(installation.Empty(), rs).GetLastReload().GetProblemFields()
		if len(f) != 1 || f[0].GetValue() != "https://…@h/" || f[0].GetSetting() != "DYNAMIC_CONFIG_X" || f[0].GetPath() != "x" || f[0].GetExpected() != "a URL" {
			t.Errorf("problem_fields %v", f)
		}
	})
	t.Run("no reload yet means no last_reload", func(t *testing.T) {
		if installationToProto(installation.Empty(), nil).GetLastReload() != nil {
			t.Error("last_reload present")
		}
	})
}

// TestGetInstallationAfterARejectedReload drives a real Watch behind a real
// gRPC server: a broken edit and then a deleted document keep the last good
// installation, GetInstallation shows each failed attempt, and a listed
// env-policy value never reaches the response, a log line or a revision.
func TestGetInstallationAfterARejectedReload(t *testing.T) {
	const secret = "zq5f1e2d3c4b5a69" // marker alphabet: a hit is a leak
	good := "watchSeconds: \"30\"\nenvPolicy:\n  rules:\n    - environmentVariables: [{name: LOG_LEVEL, value: " + secret + "}]\n"
	broken := "watchSeconds: soon\nenvPolicy:\n  rules:\n    - environmentVariables: [{name: LOG_LEVEL, value: " + secret + "}]\n      mode: loud\n"
	path := filepath.Join(t.TempDir(), "installation.yaml")
	if err := os.WriteFile(path, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := installationloader.Options{DocumentPath: path, DocumentExplicit: true}
	inst, err := installationloader.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	store := installationloader.NewStore(inst)
	s := serve(t, store)
	watchLogs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		installationloader.Watch(ctx, store, opts, 10*time.Millisecond, slog.New(slog.NewJSONHandler(watchLogs, nil)), s.svc.metrics)
	}()
	t.Cleanup(func() { cancel(); <-done })

	// lastReload waits for a failed attempt whose problems satisfy want.
	lastReload := func(want func([]string) bool) *deciderv1.GetInstallationResponse {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := s.client.GetInstallation(context.Background(), &deciderv1.GetInstallationRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if lr := resp.GetLastReload(); lr != nil && !lr.GetOk() && want(lr.GetProblems()) {
				return resp
			}
			if time.Now().After(deadline) {
				t.Fatalf("no rejected reload seen; last %v", resp.GetLastReload())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	noLeak := func(t *testing.T, resp *deciderv1.GetInstallationResponse) {
		t.Helper()
		b, err := protojson.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		for what, text := range map[string]string{"GetInstallation": string(b), "the watch log": watchLogs.String(), "the service log": s.logs.String(), "the canonical form": string(inst.Canonical)} {
			if strings.Contains(text, secret) {
				t.Errorf("the listed value leaked into %s: %s", what, text)
			}
		}
	}

	write := func(content string) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("a broken edit keeps the last good installation and shows the attempt", func(t *testing.T) {
		write(broken)
		resp := lastReload(func(p []string) bool { return len(p) == 2 })
		want := []string{
			`watchSeconds [DYNAMIC_CONFIG_AGENT_WATCH_SECONDS]: watch-seconds is "soon": whole seconds`,
			`envPolicy.rules[0].mode: "loud": enforce, warn or audit`,
		}
		lr := resp.GetLastReload()
		if resp.GetRevision() != inst.Revision || strings.Join(lr.GetProblems(), "\n") != strings.Join(want, "\n") ||
			!strings.HasPrefix(lr.GetAttemptedRevision(), "sha256:") || lr.GetAttemptedRevision() == inst.Revision {
			t.Errorf("got revision %s, last reload %v", resp.GetRevision(), lr)
		}
		fields := lr.GetProblemFields()
		if len(fields) != 2 {
			t.Fatalf("problem_fields %v: want one per problem", fields)
		}
		type where struct{ setting, path, value, expected, text string }
		for i, w := range []where{
			{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS", "watchSeconds", "soon", "whole seconds", want[0]},
			{"DYNAMIC_CONFIG_ENV_POLICY", "envPolicy", "", "", want[1]},
		} {
			f := fields[i]
			if got := (where{f.GetSetting(), f.GetPath(), f.GetValue(), f.GetExpected(), f.GetText()}); got != w {
				t.Errorf("problem_fields[%d] = %+v, want %+v", i, got, w)
			}
		}
		if store.Current() != inst {
			t.Error("the broken edit was swapped in")
		}
		if !strings.Contains(watchLogs.String(), "installation reload rejected; keeping the last good one") {
			t.Errorf("log %s", watchLogs.String())
		}
		if n := counterValue(t, s.reg, "dynamic_config_installation_reloads_total", "error"); n != 1 {
			t.Errorf("reloads_total{result=\"error\"} = %v", n)
		}
		noLeak(t, resp)
	})
	t.Run("a deleted document keeps the last good installation and shows the attempt", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		resp := lastReload(func(p []string) bool {
			return len(p) == 1 && p[0] == path+": the installation document does not exist"
		})
		if resp.GetRevision() != inst.Revision || store.Current() != inst {
			t.Errorf("revision %s, want %s", resp.GetRevision(), inst.Revision)
		}
		if n := counterValue(t, s.reg, "dynamic_config_installation_reloads_total", "error"); n != 2 {
			t.Errorf("reloads_total{result=\"error\"} = %v", n)
		}
		noLeak(t, resp)
	})
}
