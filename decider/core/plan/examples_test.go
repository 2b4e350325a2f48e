package plan

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// builtInValues are the built-ins a resolver hands over explicitly.
var builtInValues = map[string]string{
	"mode": "sidecar", "watch-seconds": "15", "volume-medium": "memory", "native-sidecar": "false",
	"agent-cpu-request": "10m", "agent-memory-request": "32Mi", "agent-memory-limit": "64Mi",
	"agent-run-as-user": "65532", "agent-run-as-group": "65532", "readiness": "true",
	"tls-reload": "true", "revoke-on-shutdown": "true",
}

// The two canonical examples of spec 03 §7, each resolved once with the
// built-ins left to the plan and once with the built-ins handed over.
func TestCanonicalExamples(t *testing.T) {
	example2 := map[string]string{
		"source":       "vault",
		"endpoint":     "https://vault.vault:8200",
		"key":          "secret/myapp",
		"path":         "/config/rendered.yaml",
		"auth":         "kubernetes",
		"auth-role":    "myapp",
		"ca-configmap": "vault-ca",
	}
	resources := func(a *decision.AgentContainer) {
		a.Requests = map[string]string{"cpu": "10m", "memory": "32Mi"}
		a.Limits = map[string]string{"memory": "64Mi"}
	}
	want1 := decision.AgentContainer{
		Name:  "dynamic-config-agent",
		Image: "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0",
		Args: []string{"--source", "consul", "--endpoint", "http://consul:8500", "--key", "myapp/config.json",
			"--out", "/config/rendered.toml", "--watch", "15"},
		VolumeMounts:    []decision.VolumeMount{{Name: "dynamic-config", MountPath: "/config"}},
		SecurityContext: restricted(65532, 65532),
	}
	resources(&want1)
	want2 := decision.AgentContainer{
		Name:  "dynamic-config-agent",
		Image: "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0",
		Args: []string{"--source", "vault", "--endpoint", "https://vault.vault:8200", "--key", "secret/myapp",
			"--out", "/config/rendered.yaml", "--auth", "kubernetes", "--auth-role", "myapp",
			"--ca", "/etc/dynamic-config/ca/ca.crt", "--watch", "15"},
		VolumeMounts: []decision.VolumeMount{
			{Name: "dynamic-config", MountPath: "/config"},
			{Name: "dynamic-config-ca", MountPath: "/etc/dynamic-config/ca", ReadOnly: true},
		},
		SecurityContext: restricted(65532, 65532),
	}
	resources(&want2)

	shared := decision.Volume{Name: "dynamic-config", EmptyDir: &decision.EmptyDirVolume{Medium: "Memory", SizeLimit: "16Mi"}}
	appMount := []decision.AppMount{{ContainerIndex: 0, ContainerName: "app",
		Mount: decision.VolumeMount{Name: "dynamic-config", MountPath: "/config"}}}

	cases := []struct {
		name        string
		values      map[string]string
		wantVolumes []decision.Volume
		wantAgent   decision.AgentContainer
	}{
		{"example 1 (consul, sidecar) with the built-ins left to the plan", consul(),
			[]decision.Volume{shared}, want1},
		{"example 1 (consul, sidecar) with the built-ins handed over", with(consul(), builtInValues),
			[]decision.Volume{shared}, want1},
		{"example 2 (vault, kubernetes auth, private CA) with the built-ins left to the plan", example2,
			[]decision.Volume{shared, {Name: "dynamic-config-ca", ConfigMap: &decision.ConfigMapVolume{Name: "vault-ca"}}}, want2},
		{"example 2 (vault, kubernetes auth, private CA) with the built-ins handed over", with(example2, builtInValues),
			[]decision.Volume{shared, {Name: "dynamic-config-ca", ConfigMap: &decision.ConfigMapVolume{Name: "vault-ca"}}}, want2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(tc.values)
			p := Build(in)
			equal(t, "status annotation", p.StatusAnnotation, decision.Annotation{Key: "dynamic-config.rs/status", Value: "injected"})
			equal(t, "volumes", p.Volumes, tc.wantVolumes)
			equal(t, "app mounts", p.AppMounts, appMount)
			equal(t, "pull secret", p.ImagePullSecret, "")
			if p.CommandRewrite != nil {
				t.Errorf("command rewrite = %+v, want none", p.CommandRewrite)
			}
			if len(p.Agents) != 1 {
				t.Fatalf("agents = %v, want one", agentNames(p))
			}
			equal(t, "placement", []any{p.Agents[0].List, p.Agents[0].Position},
				[]any{decision.ListContainers, decision.PositionAppend})
			equal(t, "agent", p.Agents[0].Container, tc.wantAgent)
			if w := Warnings(in); len(w) != 0 {
				t.Errorf("warnings = %v, want none", w)
			}
		})
	}
}
