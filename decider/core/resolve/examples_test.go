package resolve

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

func TestTheCanonicalExamplesResolveUnderTheEmptyInstallation(t *testing.T) {
	tests := []struct {
		name string
		pod  *decision.Facts
		want string
	}{
		{"example 1: consul in sidecar mode", consulPod(),
			"--source consul --endpoint http://consul:8500 --key myapp/config.json --out /config/rendered.toml --watch 15"},
		{"example 2: vault with kubernetes auth and a private CA", facts("inject", "true", "source", "vault",
			"endpoint", "https://vault.vault:8200", "key", "secret/myapp", "path", "/config/rendered.yaml",
			"auth", "kubernetes", "auth-role", "myapp", "ca-configmap", "vault-ca"),
			"--source vault --endpoint https://vault.vault:8200 --key secret/myapp --out /config/rendered.yaml --auth kubernetes --auth-role myapp --ca /etc/dynamic-config/ca/ca.crt --watch 15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(installation.Empty(), nil, tt.pod)
			mustInject(t, d)
			if got := args(agent(t, d, "dynamic-config-agent")); got != tt.want {
				t.Fatalf("args\n got %s\nwant %s", got, tt.want)
			}
			if len(d.Warnings) != 0 {
				t.Errorf("warnings %+v, want none", d.Warnings)
			}
			if d.AuditAnnotations["revision"] != installation.EmptyRevision || d.InstallationRevision != installation.EmptyRevision {
				t.Errorf("revision not recorded: %+v", d.AuditAnnotations)
			}
			if len(d.Renders) != 1 || !d.Renders[0].Validated || len(d.Renders[0].Values) != registry.Count {
				t.Fatalf("renders %+v", d.Renders)
			}
			if got := d.Renders[0].AgentContainers; len(got) != 1 || got[0] != "dynamic-config-agent" {
				t.Errorf("agent containers %v", got)
			}
		})
	}
}
