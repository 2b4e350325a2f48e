package resolve

import (
	"os"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// seedInstallation is the nine-store installation of the installation-defaults guide (seed 000).
const seedInstallation = `
watchSeconds: "30"
fileMode: "0640"
storeDefaults:
  consul: "endpoint=http://consul.infra.svc:8500!, watch-seconds=10"
  vault: "overridable=false, endpoint=https://vault.vault.svc:8200, auth=kubernetes, ca-configmap=vault-ca, file-mode=0400, agent-run-as-user=1000, agent-run-as-group=1000"
  config-server: "watch-seconds=20, agent-memory-limit=96Mi"
  firestore: "watch-seconds=120"
  git: "watch-seconds=120, agent-memory-limit=128Mi"
  redis: "watch-seconds=10"
  etcd: "watch-seconds=60"
  nats: "watch-seconds=10"
  s3: "watch-seconds=60, agent-memory-limit=128Mi"
`

func TestTheSeedPodsOfAllNineStoresResolveAsTheSeedSays(t *testing.T) {
	inst := load(t, seedInstallation)
	tests := []struct {
		store     string
		pod       []string
		watch     string
		fileMode  string
		memLimit  string
		uid       int64
		extraArgs string
		env       string
	}{
		{"consul", []string{"endpoint", "http://consul.infra.svc:8500", "key", "myapp/config.json", "path", "/config/rendered.toml"},
			"10", "0640", "64Mi", 65532, "", ""},
		{"vault", []string{"endpoint", "https://vault.vault.svc:8200", "key", "secret/myapp", "section", "db", "auth", "kubernetes",
			"auth-role", "myapp", "ca-configmap", "vault-ca", "path", "/config/rendered.yaml"},
			"30", "0400", "64Mi", 1000, "--ca /etc/dynamic-config/ca/ca.crt", ""},
		{"config-server", []string{"endpoint", "http://config-server.infra.svc:8888", "key", "billing/prod", "path", "/config/rendered.json"},
			"20", "0640", "96Mi", 65532, "", ""},
		{"firestore", []string{"endpoint", "acme-prod", "key", "config/billing", "path", "/config/rendered.json"},
			"120", "0640", "64Mi", 65532, "", ""},
		{"git", []string{"endpoint", "git@github.com:acme/config.git", "ref", "main", "key", "billing/prod.yaml",
			"ssh-secret", "config-deploy-key", "path", "/config/rendered.yaml"},
			"120", "0640", "128Mi", 65532, "--ref main --auth ssh-key --ssh-key /etc/dynamic-config/ssh/ssh-privatekey", ""},
		{"redis", []string{"endpoint-secret", "redis-cred/url", "key", "myapp/config.json", "path", "/config/rendered.toml"},
			"10", "0640", "64Mi", 65532, "", "DYNAMIC_CONFIG_AGENT_ENDPOINT"},
		{"etcd", []string{"endpoint", "https://etcd.infra.svc:2379", "key", "myapp/config.json", "tls-secret", "etcd-client-tls",
			"ca-configmap", "etcd-ca", "path", "/config/rendered.toml"},
			"60", "0640", "64Mi", 65532, "--tls-cert /etc/dynamic-config/tls/tls.crt --tls-key /etc/dynamic-config/tls/tls.key", ""},
		{"nats", []string{"endpoint", "nats://nats.infra.svc:4222", "key", "config/db.json", "path", "/config/rendered.toml"},
			"10", "0640", "64Mi", 65532, "", ""},
		{"s3", []string{"endpoint", "myapp-config", "key", "prod/db.json", "api-url", "http://minio.infra.svc:9000",
			"aws-secret", "minio-cred", "path", "/config/rendered.toml"},
			"60", "0640", "128Mi", 65532, "--api-url http://minio.infra.svc:9000", "AWS_ACCESS_KEY_ID,AWS_SECRET_ACCESS_KEY"},
	}
	for _, tt := range tests {
		t.Run("the "+tt.store+" pod", func(t *testing.T) {
			d := Decide(inst, nil, facts(append([]string{"inject", "true", "source", tt.store}, tt.pod...)...))
			mustInject(t, d)
			a := agent(t, d, "dynamic-config-agent")
			got := args(a)
			for _, want := range []string{"--file-mode " + tt.fileMode + " ", "--watch " + tt.watch, tt.extraArgs} {
				if !strings.Contains(got, want) {
					t.Errorf("args %q lack %q", got, want)
				}
			}
			if a.Limits["memory"] != tt.memLimit || a.SecurityContext.RunAsUser != tt.uid || a.SecurityContext.RunAsGroup != tt.uid {
				t.Errorf("limits %v, security context %+v", a.Limits, a.SecurityContext)
			}
			var names []string
			for _, e := range a.Env {
				names = append(names, e.Name)
			}
			if strings.Join(names, ",") != tt.env {
				t.Errorf("env %v, want %s", names, tt.env)
			}
			if ws := resolved(t, d, "", "watch-seconds"); tt.watch != "30" && (ws.Tier != decision.TierStoreDefault || ws.Store != tt.store) {
				t.Errorf("watch-seconds provenance %+v", ws)
			}
		})
	}
}

func TestServesEmbeddedInstallationInjectsAPodCarryingOnlyInject(t *testing.T) {
	doc, err := os.ReadFile("../../../cmd/dynamic-config/default-installation.yaml")
	if err != nil {
		t.Fatalf("the embedded installation is part of the repository: %v", err)
	}
	d := Decide(load(t, string(doc)), nil, facts("inject", "true"))
	mustInject(t, d)
	want := "--source consul --endpoint http://consul.infra.svc:8500 --key myapp/config.json --out /config/rendered.json --file-mode 0640 --watch 10"
	if got := args(agent(t, d, "dynamic-config-agent")); got != want {
		t.Fatalf("args\n got %s\nwant %s", got, want)
	}
}
