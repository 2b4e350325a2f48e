package e2e

import (
	"regexp"
	"strings"
	"testing"
)

// The nine pods of seed 000 under the seed's nine-store installation, and
// what spec 03 says their STORED pods carry: the per-store defaults supply
// watch-seconds, the memory limit, the vault identity and file mode; the
// fleet supplies file-mode 0640.
var seedPods = []struct {
	store       string
	annotations map[string]string
	want        wantInjection
}{
	{
		store: "consul",
		annotations: map[string]string{
			"dynamic-config.rs/inject":   "true",
			"dynamic-config.rs/source":   "consul",
			"dynamic-config.rs/endpoint": "http://consul.infra.svc:8500",
			"dynamic-config.rs/key":      "myapp/config.json",
			"dynamic-config.rs/path":     "/config/rendered.toml",
		},
		want: plainInjection("64Mi", nil,
			"--source", "consul", "--endpoint", "http://consul.infra.svc:8500", "--key", "myapp/config.json", "--out", "/config/rendered.toml", "--file-mode", "0640", "--watch", "10"),
	},
	{
		store: "vault",
		annotations: map[string]string{
			"dynamic-config.rs/inject":       "true",
			"dynamic-config.rs/source":       "vault",
			"dynamic-config.rs/endpoint":     "https://vault.vault.svc:8200",
			"dynamic-config.rs/key":          "secret/myapp",
			"dynamic-config.rs/section":      "db",
			"dynamic-config.rs/auth":         "kubernetes",
			"dynamic-config.rs/auth-role":    "myapp",
			"dynamic-config.rs/ca-configmap": "vault-ca",
			"dynamic-config.rs/path":         "/config/rendered.yaml",
		},
		want: wantInjection{
			volumes:   []string{sharedVolume, "dynamic-config-ca configMap vault-ca"},
			appMounts: []string{"dynamic-config@/config"},
			agent: wantAgent{
				args: []string{"--source", "vault", "--endpoint", "https://vault.vault.svc:8200", "--key", "secret/myapp", "--out", "/config/rendered.yaml",
					"--section", "db", "--auth", "kubernetes", "--auth-role", "myapp", "--ca", "/etc/dynamic-config/ca/ca.crt", "--file-mode", "0400", "--watch", "30"},
				mounts:    []string{"dynamic-config@/config", "dynamic-config-ca@/etc/dynamic-config/ca:ro"},
				resources: "requests cpu=10m memory=32Mi; limits memory=64Mi",
				security:  restrictedAs(1000, 1000),
			},
		},
	},
	{
		store: "config-server",
		annotations: map[string]string{
			"dynamic-config.rs/inject":   "true",
			"dynamic-config.rs/source":   "config-server",
			"dynamic-config.rs/endpoint": "http://config-server.infra.svc:8888",
			"dynamic-config.rs/key":      "billing/prod",
			"dynamic-config.rs/path":     "/config/rendered.json",
		},
		want: plainInjection("96Mi", nil,
			"--source", "config-server", "--endpoint", "http://config-server.infra.svc:8888", "--key", "billing/prod", "--out", "/config/rendered.json", "--file-mode", "0640", "--watch", "20"),
	},
	{
		store: "firestore",
		annotations: map[string]string{
			"dynamic-config.rs/inject":   "true",
			"dynamic-config.rs/source":   "firestore",
			"dynamic-config.rs/endpoint": "acme-prod",
			"dynamic-config.rs/key":      "config/billing",
			"dynamic-config.rs/path":     "/config/rendered.json",
		},
		want: plainInjection("64Mi", nil,
			"--source", "firestore", "--endpoint", "acme-prod", "--key", "config/billing", "--out", "/config/rendered.json", "--file-mode", "0640", "--watch", "120"),
	},
	{
		store: "git",
		annotations: map[string]string{
			"dynamic-config.rs/inject":     "true",
			"dynamic-config.rs/source":     "git",
			"dynamic-config.rs/endpoint":   "git@github.com:acme/config.git",
			"dynamic-config.rs/ref":        "main",
			"dynamic-config.rs/key":        "billing/prod.yaml",
			"dynamic-config.rs/ssh-secret": "config-deploy-key",
			"dynamic-config.rs/path":       "/config/rendered.yaml",
		},
		want: wantInjection{
			volumes:   []string{sharedVolume, "dynamic-config-ssh secret config-deploy-key mode=0400"},
			appMounts: []string{"dynamic-config@/config"},
			agent: wantAgent{
				args: []string{"--source", "git", "--endpoint", "git@github.com:acme/config.git", "--key", "billing/prod.yaml", "--out", "/config/rendered.yaml",
					"--ref", "main", "--auth", "ssh-key", "--ssh-key", "/etc/dynamic-config/ssh/ssh-privatekey", "--file-mode", "0640", "--watch", "120"},
				mounts:    []string{"dynamic-config@/config", "dynamic-config-ssh@/etc/dynamic-config/ssh:ro"},
				resources: "requests cpu=10m memory=32Mi; limits memory=128Mi",
				security:  restrictedAs(65532, 65532),
			},
		},
	},
	{
		store: "redis",
		annotations: map[string]string{
			"dynamic-config.rs/inject":          "true",
			"dynamic-config.rs/source":          "redis",
			"dynamic-config.rs/endpoint-secret": "redis-cred/url",
			"dynamic-config.rs/key":             "myapp/config.json",
			"dynamic-config.rs/path":            "/config/rendered.toml",
		},
		want: plainInjection("64Mi", []string{"DYNAMIC_CONFIG_AGENT_ENDPOINT<-secret redis-cred/url"},
			"--source", "redis", "--key", "myapp/config.json", "--out", "/config/rendered.toml", "--file-mode", "0640", "--watch", "10"),
	},
	{
		store: "etcd",
		annotations: map[string]string{
			"dynamic-config.rs/inject":       "true",
			"dynamic-config.rs/source":       "etcd",
			"dynamic-config.rs/endpoint":     "https://etcd.infra.svc:2379",
			"dynamic-config.rs/key":          "myapp/config.json",
			"dynamic-config.rs/tls-secret":   "etcd-client-tls",
			"dynamic-config.rs/ca-configmap": "etcd-ca",
			"dynamic-config.rs/path":         "/config/rendered.toml",
		},
		want: wantInjection{
			volumes:   []string{sharedVolume, "dynamic-config-ca configMap etcd-ca", "dynamic-config-client-tls secret etcd-client-tls mode=0444"},
			appMounts: []string{"dynamic-config@/config"},
			agent: wantAgent{
				args: []string{"--source", "etcd", "--endpoint", "https://etcd.infra.svc:2379", "--key", "myapp/config.json", "--out", "/config/rendered.toml",
					"--ca", "/etc/dynamic-config/ca/ca.crt", "--file-mode", "0640",
					"--tls-cert", "/etc/dynamic-config/tls/tls.crt", "--tls-key", "/etc/dynamic-config/tls/tls.key", "--watch", "60"},
				mounts:    []string{"dynamic-config@/config", "dynamic-config-ca@/etc/dynamic-config/ca:ro", "dynamic-config-client-tls@/etc/dynamic-config/tls:ro"},
				resources: "requests cpu=10m memory=32Mi; limits memory=64Mi",
				security:  restrictedAs(65532, 65532),
			},
		},
	},
	{
		store: "nats",
		annotations: map[string]string{
			"dynamic-config.rs/inject":   "true",
			"dynamic-config.rs/source":   "nats",
			"dynamic-config.rs/endpoint": "nats://nats.infra.svc:4222",
			"dynamic-config.rs/key":      "config/db.json",
			"dynamic-config.rs/path":     "/config/rendered.toml",
		},
		want: plainInjection("64Mi", nil,
			"--source", "nats", "--endpoint", "nats://nats.infra.svc:4222", "--key", "config/db.json", "--out", "/config/rendered.toml", "--file-mode", "0640", "--watch", "10"),
	},
	{
		store: "s3",
		annotations: map[string]string{
			"dynamic-config.rs/inject":     "true",
			"dynamic-config.rs/source":     "s3",
			"dynamic-config.rs/endpoint":   "myapp-config",
			"dynamic-config.rs/key":        "prod/db.json",
			"dynamic-config.rs/api-url":    "http://minio.infra.svc:9000",
			"dynamic-config.rs/aws-secret": "minio-cred",
			"dynamic-config.rs/path":       "/config/rendered.toml",
		},
		want: plainInjection("128Mi", []string{"AWS_ACCESS_KEY_ID<-secret minio-cred/AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY<-secret minio-cred/AWS_SECRET_ACCESS_KEY"},
			"--source", "s3", "--endpoint", "myapp-config", "--key", "prod/db.json", "--out", "/config/rendered.toml",
			"--api-url", "http://minio.infra.svc:9000", "--file-mode", "0640", "--watch", "60"),
	},
}

// plainInjection is the shape of a seed pod whose store needs no secret or
// CA volume: the shared volume mounted at /config in the app and in one
// agent with the fleet's requests, the store's memory limit, the default
// non-root identity, env (nil = none) and args.
func plainInjection(memoryLimit string, env []string, args ...string) wantInjection {
	return wantInjection{
		volumes:   []string{sharedVolume},
		appMounts: []string{"dynamic-config@/config"},
		agent: wantAgent{
			args:      args,
			env:       env,
			mounts:    []string{"dynamic-config@/config"},
			resources: "requests cpu=10m memory=32Mi; limits memory=" + memoryLimit,
			security:  restrictedAs(65532, 65532),
		},
	}
}

func TestTheNineSeedPodsAreStoredWithTheirAgents(t *testing.T) {
	site := newInjectionSite(t, seedInstallation(t), injection{})
	for _, c := range seedPods {
		t.Run("the "+c.store+" pod is stored with exactly its agent, volumes, mounts and status mark", func(t *testing.T) {
			r := applyJSON(t, pod(site.ns, c.store, c.annotations))
			wantAdmitted(t, r)
			// Issue 40 item 4: the seed pods' app runs as its image's user,
			// which admission cannot see, and the file is 0640 with no
			// fsGroup: the one warning says so; nothing else is warned.
			if w := warningLines(r); len(w) != 1 || !strings.Contains(w[0], `container "app" runs as its image's user, unknown at admission`) {
				t.Errorf("kubectl printed warnings %q; want only the unknown app user's file-unreadable", w)
			}
			checkInjected(t, getPod(t, site.ns, c.store), c.want)
			// 03 §5: the API server records which installation decided.
			audit := auditAnnotations(t, "pods", site.ns, c.store)
			if rev := audit[injectWebhookName+"/revision"]; !revisionPattern.MatchString(rev) {
				t.Errorf("audit annotation %s/revision = %q; want sha256:<64 hex digits> (all: %v)", injectWebhookName, rev, audit)
			}
			// Issue 17: and the decision, so the audit line leads to the decision log line.
			if id := audit[injectWebhookName+"/decision-id"]; !decisionIDPattern.MatchString(id) {
				t.Errorf("audit annotation %s/decision-id = %q; want a UUID (all: %v)", injectWebhookName, id, audit)
			}
		})
	}
}

var revisionPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

var decisionIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
