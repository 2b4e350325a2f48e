package plan

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// everyDefaultKnob sets every knob that feeds a default-render argument row.
var everyDefaultKnob = map[string]string{
	"mode": "both", "source": "vault", "endpoint": "https://vault:8200", "key": "secret/app",
	"path": "/config/app.json", "section": "db", "auth": "kubernetes", "auth-mount": "k8s",
	"auth-role": "app", "auth-username": "bob", "auth-token-path": "/var/run/token",
	"namespace": "team-a", "ref": "main", "api-url": "http://api:9000",
	"startup-policy": "require-fresh", "on-delete": "remove", "max-document-bytes": "1000",
	"max-staleness": "6h", "ssh-secret": "git-ssh", "ca-configmap": "vault-ca/root.pem",
	"tls-server-name": "vault.local", "tls-skip-verify": "true", "file-mode": "0640",
	"template-configmap": "tpl", "schema-configmap": "schema", "tls-secret": "client",
	"watch-seconds": "30", "dynamic": "true", "meta": "true", "revoke-on-shutdown": "true",
	"notify-http": "http://localhost:8080/reload", "on-drift": "repair", "tls-reload": "false",
	"history": "3", "require-ack": "true", "events": "true", "timeout": "30",
	"canary-configmap": "canary", "revoke-grace": "10s", "metrics-port": "9110",
}

// everyNamedKnob sets every per-render knob of a named render, plus
// default-only knobs that a named render must ignore.
var everyNamedKnob = map[string]string{
	"source": "git", "endpoint-secret": "git-url/url", "key": "repo/config.json",
	"path": "/config/cache.json", "section": "cache", "auth": "ssh-key", "auth-mount": "m",
	"auth-role": "r", "auth-username": "u", "auth-token-path": "/t", "namespace": "n",
	"ref": "tag:v1", "api-url": "http://api", "ssh-secret": "deploy-key/id",
	"ca-configmap": "ca", "tls-server-name": "git.local", "tls-skip-verify": "true",
	"file-mode": "0o600", "template": "{{ .x }}", "tls-secret": "tls", "watch-seconds": "020",
	"tls-reload": "false", "timeout": "5", "metrics-port": "9111",
	// default-only: never an argument of a named render
	"startup-policy": "require-fresh", "on-delete": "remove", "max-document-bytes": "9",
	"max-staleness": "1h", "schema-configmap": "s", "dynamic": "true", "meta": "true",
	"notify-http": "http://localhost/", "on-drift": "fail", "history": "2", "require-ack": "true",
	"events": "true", "canary-configmap": "c", "revoke-grace": "3",
}

func TestEveryArgumentRowInOrder(t *testing.T) {
	named := Render{Name: "cache", Values: values(everyNamedKnob)}
	in := input(everyDefaultKnob, named)
	in.Also = []Also{{Name: "a", Path: "/config/a.json"}, {Name: "b", Path: "/config/b.yaml", Section: "x"}}
	p := Build(in)

	common := "--source vault --endpoint https://vault:8200 --key secret/app --out /config/app.json" +
		" --section db --auth kubernetes --auth-mount k8s --auth-role app --auth-username bob" +
		" --auth-token-path /var/run/token --namespace team-a --ref main --api-url http://api:9000" +
		" --startup-policy require-fresh --on-delete remove --max-document-bytes 1000 --max-staleness 6h" +
		" --ssh-key /etc/dynamic-config/ssh/ssh-privatekey --ca /etc/dynamic-config/ca/root.pem" +
		" --tls-server-name vault.local --tls-skip-verify --file-mode 0640" +
		" --template /etc/dynamic-config/template/template --schema /etc/dynamic-config/schema/schema.json" +
		" --tls-cert /etc/dynamic-config/tls/tls.crt --tls-key /etc/dynamic-config/tls/tls.key"
	also := " --dynamic --also out=/config/a.json --also out=/config/b.yaml,section=x"
	cases := []struct {
		name  string
		agent string
		want  string
	}{
		{"the default watching agent gets rows 1–41 that apply, in table order", "dynamic-config-agent",
			common + " --watch 30" + also + " --meta --notify-http http://localhost:8080/reload --on-drift repair" +
				" --no-tls-reload --history 3 --require-ack --events --timeout 30" +
				" --canary /etc/dynamic-config/canary/percent --revoke-grace 10 --metrics-addr 0.0.0.0:9110"},
		{"the default init agent gets only the I rows", "dynamic-config-init", common + also},
		{"a named watching agent gets only the rows for every render, with its own paths", "dynamic-config-agent-cache",
			"--source git --key repo/config.json --out /config/cache.json --section cache --auth ssh-key" +
				" --auth-mount m --auth-role r --auth-username u --auth-token-path /t --namespace n --ref tag:v1" +
				" --api-url http://api --ssh-key /etc/dynamic-config/ssh-cache/id --ca /etc/dynamic-config/ca-cache/ca.crt" +
				" --tls-server-name git.local --tls-skip-verify --file-mode 0600 --template-inline {{ .x }}" +
				" --tls-cert /etc/dynamic-config/tls-cache/tls.crt --tls-key /etc/dynamic-config/tls-cache/tls.key" +
				" --watch 20 --no-tls-reload --timeout 5 --metrics-addr 0.0.0.0:9111"},
		{"a named init agent gets neither watching nor default-only rows", "dynamic-config-init-cache",
			"--source git --key repo/config.json --out /config/cache.json --section cache --auth ssh-key" +
				" --auth-mount m --auth-role r --auth-username u --auth-token-path /t --namespace n --ref tag:v1" +
				" --api-url http://api --ssh-key /etc/dynamic-config/ssh-cache/id --ca /etc/dynamic-config/ca-cache/ca.crt" +
				" --tls-server-name git.local --tls-skip-verify --file-mode 0600 --template-inline {{ .x }}" +
				" --tls-cert /etc/dynamic-config/tls-cache/tls.crt --tls-key /etc/dynamic-config/tls-cache/tls.key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := agent(t, p, tc.agent).Args
			// the inline template holds a space; compare token lists
			want := splitArgs(tc.want)
			equal(t, "args", got, want)
		})
	}
}

// splitArgs splits on spaces, keeping "{{ .x }}" as one token.
func splitArgs(s string) []string {
	s = strings.ReplaceAll(s, "{{ .x }}", "\x00")
	fields := strings.Fields(s)
	for i, f := range fields {
		fields[i] = strings.ReplaceAll(f, "\x00", "{{ .x }}")
	}
	return fields
}

func TestArgumentRowConditions(t *testing.T) {
	base := consul()
	cases := []struct {
		name   string
		values map[string]string
		agent  string
		want   string
	}{
		{"row 2: an endpoint-secret sends no --endpoint", with(base, map[string]string{"endpoint": "", "endpoint-secret": "s/url"}),
			"dynamic-config-agent", "--source consul --key myapp/config.json --out /config/rendered.toml --watch 15"},
		{"row 18: an ssh-secret without auth adds --auth ssh-key before --ssh-key", with(base, map[string]string{"ssh-secret": "key/id_ed25519"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --auth ssh-key --ssh-key /etc/dynamic-config/ssh/id_ed25519 --watch 15"},
		{"row 18: an ssh-secret with a resolved auth adds no second --auth", with(base, map[string]string{"ssh-secret": "key", "auth": "ssh-key"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --auth ssh-key --ssh-key /etc/dynamic-config/ssh/ssh-privatekey --watch 15"},
		{"row 22: tls-skip-verify false sends nothing", with(base, map[string]string{"tls-skip-verify": "false"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15"},
		{"row 23: file-mode is printed as normalised octal", with(base, map[string]string{"file-mode": "640"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --file-mode 0640 --watch 15"},
		{"row 24: a template-configmap with its own key", with(base, map[string]string{"template-configmap": "tpl/app.tmpl"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --template /etc/dynamic-config/template/app.tmpl --watch 15"},
		{"row 27: watch-seconds is printed in plain decimal", with(base, map[string]string{"watch-seconds": "007"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 7"},
		{"row 31: dynamic with revoke-on-shutdown false sends --no-revoke-on-shutdown", with(base, map[string]string{"dynamic": "true", "revoke-on-shutdown": "false"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15 --dynamic --no-revoke-on-shutdown"},
		{"row 31: revoke-on-shutdown false without dynamic sends nothing", with(base, map[string]string{"revoke-on-shutdown": "false"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15"},
		{"row 34: tls-reload true sends nothing", with(base, map[string]string{"tls-reload": "true"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15"},
		{"row 40: revoke-grace needs dynamic", with(base, map[string]string{"revoke-grace": "10"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15"},
		{"row 40: revoke-grace is dropped when revoke-on-shutdown is false", with(base, map[string]string{"dynamic": "true", "revoke-on-shutdown": "false", "revoke-grace": "10s"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15 --dynamic --no-revoke-on-shutdown"},
		{"row 40: revoke-grace with dynamic (revoke-on-shutdown built-in true) without the s", with(base, map[string]string{"dynamic": "true", "revoke-grace": "10s"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15 --dynamic --revoke-grace 10"},
		{"row 41: metrics-port 0 sends no --metrics-addr", with(base, map[string]string{"metrics-port": "0"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15"},
		{"row 41: --metrics-addr comes last", with(base, map[string]string{"metrics-port": "9110", "timeout": "3"}),
			"dynamic-config-agent", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15 --timeout 3 --metrics-addr 0.0.0.0:9110"},
		{"mode init: the init agent gets no --watch, --timeout or --metrics-addr", with(base, map[string]string{"mode": "init", "timeout": "3", "metrics-port": "9110"}),
			"dynamic-config-init", "--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Build(input(tc.values))
			equal(t, "args", agent(t, p, tc.agent).Args, strings.Fields(tc.want))
		})
	}
}

// TestArgumentTableIsNumberedInOrder holds the rows' At numbers (the
// registry's agent sides and the unowned rows) to spec 03 §3.2's numbering:
// 1 to the table's length, each once.
func TestArgumentTableIsNumberedInOrder(t *testing.T) {
	for i, r := range argRows {
		if r.at != i+1 {
			t.Fatalf("row %d is numbered %d: two rows share a number or one is missing", i+1, r.at)
		}
	}
}

func TestEveryAgentSideServesTheRendersItsScopeNames(t *testing.T) {
	for _, id := range registry.All {
		r := id.Row()
		if r.Agent == nil {
			continue
		}
		if r.Scope != registry.ScopeEach && r.Scope != registry.ScopeDefault {
			t.Errorf("%s: an agent argument of scope %s; want each or default", r.Name, r.Scope)
		}
		if r.PerRender != (r.Scope == registry.ScopeEach) {
			t.Errorf("%s: per-render %v with scope %s", r.Name, r.PerRender, r.Scope)
		}
		if !strings.HasPrefix(r.Agent.Flag, "--") || r.Agent.Kinds&bothAgents == 0 {
			t.Errorf("%s: agent side %+v", r.Name, *r.Agent)
		}
	}
}
