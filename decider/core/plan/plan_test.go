package plan

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

func TestVolumeOrder(t *testing.T) {
	def := with(consul(), map[string]string{
		"ca-configmap": "ca/root.pem", "ssh-secret": "ssh/id", "extra-secret": "extra",
		"canary-configmap": "canary", "tls-secret": "client", "template-configmap": "tpl/t",
		"schema-configmap": "schema", "volume-medium": "disk",
	})
	a := Render{Name: "a", Values: values(map[string]string{"path": "/config/a.json", "ca-configmap": "ca-a",
		"ssh-secret": "ssh-a", "tls-secret": "tls-a", "template-configmap": "tpl-a/x"})}
	b := Render{Name: "b", Values: values(map[string]string{"path": "/config/b.json", "template-configmap": "tpl-b"})}
	p := Build(input(def, a, b))

	cm := func(name, cmName string) decision.Volume {
		return decision.Volume{Name: name, ConfigMap: &decision.ConfigMapVolume{Name: cmName}}
	}
	secret := func(name, secretName string, mode int32) decision.Volume {
		return decision.Volume{Name: name, Secret: &decision.SecretVolume{SecretName: secretName, DefaultMode: mode}}
	}
	equal(t, "volumes", p.Volumes, []decision.Volume{
		{Name: "dynamic-config", EmptyDir: &decision.EmptyDirVolume{SizeLimit: "16Mi"}},
		cm("dynamic-config-ca", "ca"),
		secret("dynamic-config-ssh", "ssh", 256),
		secret("dynamic-config-extra", "extra", 292),
		cm("dynamic-config-canary", "canary"),
		secret("dynamic-config-client-tls", "client", 292),
		cm("dynamic-config-ca-a", "ca-a"),
		secret("dynamic-config-ssh-a", "ssh-a", 256),
		secret("dynamic-config-client-tls-a", "tls-a", 292),
		cm("dynamic-config-template-a", "tpl-a"),
		cm("dynamic-config-template-b", "tpl-b"),
		cm("dynamic-config-template", "tpl"),
		cm("dynamic-config-schema", "schema"),
	})

	ro := func(name, path string) decision.VolumeMount {
		return decision.VolumeMount{Name: name, MountPath: path, ReadOnly: true}
	}
	shared := decision.VolumeMount{Name: "dynamic-config", MountPath: "/config"}
	t.Run("the default render's agents mount canary before extra, unlike the volume order", func(t *testing.T) {
		equal(t, "mounts", agent(t, p, "dynamic-config-agent").VolumeMounts, []decision.VolumeMount{
			shared,
			ro("dynamic-config-ca", "/etc/dynamic-config/ca"),
			ro("dynamic-config-ssh", "/etc/dynamic-config/ssh"),
			ro("dynamic-config-canary", "/etc/dynamic-config/canary"),
			ro("dynamic-config-extra", "/etc/dynamic-config/extra"),
			ro("dynamic-config-client-tls", "/etc/dynamic-config/tls"),
			ro("dynamic-config-template", "/etc/dynamic-config/template"),
			ro("dynamic-config-schema", "/etc/dynamic-config/schema"),
		})
	})
	t.Run("a named render's agents mount only their own suffixed volumes", func(t *testing.T) {
		equal(t, "mounts", agent(t, p, "dynamic-config-agent-a").VolumeMounts, []decision.VolumeMount{
			shared,
			ro("dynamic-config-ca-a", "/etc/dynamic-config/ca-a"),
			ro("dynamic-config-ssh-a", "/etc/dynamic-config/ssh-a"),
			ro("dynamic-config-client-tls-a", "/etc/dynamic-config/tls-a"),
			ro("dynamic-config-template-a", "/etc/dynamic-config/template-a"),
		})
		equal(t, "mounts", agent(t, p, "dynamic-config-agent-b").VolumeMounts, []decision.VolumeMount{
			shared, ro("dynamic-config-template-b", "/etc/dynamic-config/template-b"),
		})
	})
	t.Run("an inline template makes no template volume", func(t *testing.T) {
		p := Build(input(with(consul(), map[string]string{"template": "{{ . }}"})))
		if len(p.Volumes) != 1 || len(agent(t, p, "dynamic-config-agent").VolumeMounts) != 1 {
			t.Errorf("volumes %v, want only the shared one", p.Volumes)
		}
	})
}

func TestPlacement(t *testing.T) {
	named := []Render{
		{Name: "a", Values: values(map[string]string{"path": "/config/a.json"})},
		{Name: "b", Values: values(map[string]string{"path": "/config/b.json"})},
	}
	const (
		C     = decision.ListContainers
		I     = decision.ListInitContainers
		app   = decision.PositionAppend
		first = decision.PositionFirst
	)
	cases := []struct {
		name   string
		values map[string]string
		want   []placed
	}{
		{"sidecar mode appends the watching agents to containers", map[string]string{},
			[]placed{{"dynamic-config-agent", C, app, ""}, {"dynamic-config-agent-a", C, app, ""}, {"dynamic-config-agent-b", C, app, ""}}},
		{"init mode appends the init agents to initContainers", map[string]string{"mode": "init"},
			[]placed{{"dynamic-config-init", I, app, ""}, {"dynamic-config-init-a", I, app, ""}, {"dynamic-config-init-b", I, app, ""}}},
		{"init-first puts only the default init agent first", map[string]string{"mode": "init", "init-first": "true"},
			[]placed{{"dynamic-config-init", I, first, ""}, {"dynamic-config-init-a", I, app, ""}, {"dynamic-config-init-b", I, app, ""}}},
		{"both mode: init agents, then watching agents", map[string]string{"mode": "both"},
			[]placed{{"dynamic-config-init", I, app, ""}, {"dynamic-config-init-a", I, app, ""}, {"dynamic-config-init-b", I, app, ""},
				{"dynamic-config-agent", C, app, ""}, {"dynamic-config-agent-a", C, app, ""}, {"dynamic-config-agent-b", C, app, ""}}},
		{"native sidecars go to initContainers with restartPolicy Always", map[string]string{"native-sidecar": "true"},
			[]placed{{"dynamic-config-agent", I, app, "Always"}, {"dynamic-config-agent-a", I, app, "Always"}, {"dynamic-config-agent-b", I, app, "Always"}}},
		{"both mode with native sidecars: init agents first, watchers after them, all in initContainers",
			map[string]string{"mode": "both", "native-sidecar": "true", "init-first": "true"},
			[]placed{{"dynamic-config-init", I, first, ""}, {"dynamic-config-init-a", I, app, ""}, {"dynamic-config-init-b", I, app, ""},
				{"dynamic-config-agent", I, app, "Always"}, {"dynamic-config-agent-a", I, app, "Always"}, {"dynamic-config-agent-b", I, app, "Always"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Build(input(with(consul(), tc.values), named...))
			var got []placed
			for _, a := range p.Agents {
				got = append(got, placed{a.Container.Name, a.List, a.Position, a.Container.RestartPolicy})
			}
			equal(t, "placements", got, tc.want)
			var wantDefault []string
			for _, w := range tc.want {
				if w.name == "dynamic-config-agent" || w.name == "dynamic-config-init" {
					wantDefault = append(wantDefault, w.name)
				}
			}
			equal(t, "default render's agents", RenderAgents(p, ""), wantDefault)
		})
	}
}

// placed is one agent's name and placement.
type placed struct {
	name     string
	list     decision.ContainerList
	position decision.Position
	restart  string
}

func TestImage(t *testing.T) {
	inst := installation.Empty()
	inst.AgentImage = "registry.local/agent:v1"
	named := Render{Name: "a", Values: values(map[string]string{"path": "/config/a.json"})}
	in := input(with(consul(), map[string]string{"agent-image": "registry.local/agent:debug", "mode": "both"}), named)
	in.Installation = inst
	p := Build(in)
	for name, want := range map[string]string{
		"dynamic-config-agent": "registry.local/agent:debug", "dynamic-config-init": "registry.local/agent:debug",
		"dynamic-config-agent-a": "registry.local/agent:v1", "dynamic-config-init-a": "registry.local/agent:v1",
	} {
		equal(t, name+" image", agent(t, p, name).Image, want)
	}
	in.Default.Values = values(consul())
	equal(t, "installation image", agent(t, Build(in), "dynamic-config-agent").Image, "registry.local/agent:v1")
	in.Installation = nil
	equal(t, "built-in image", agent(t, Build(in), "dynamic-config-agent").Image, installation.BuiltInAgentImage)
}

func TestAppMounts(t *testing.T) {
	facts := &decision.Facts{Containers: []decision.Container{{Name: "web"}, {Name: "sidecar"}, {Name: "worker"}}}
	mount := func(i int32, name string) decision.AppMount {
		return decision.AppMount{ContainerIndex: i, ContainerName: name,
			Mount: decision.VolumeMount{Name: "dynamic-config", MountPath: "/config"}}
	}
	cases := []struct {
		name   string
		values map[string]string
		want   []decision.AppMount
	}{
		{"every app container gets the shared volume by default", nil,
			[]decision.AppMount{mount(0, "web"), mount(1, "sidecar"), mount(2, "worker")}},
		{"inject-containers selects, in ascending index order whatever the list order", map[string]string{"inject-containers": " worker , ,web"},
			[]decision.AppMount{mount(0, "web"), mount(2, "worker")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(with(consul(), tc.values))
			in.Facts = facts
			equal(t, "app mounts", Build(in).AppMounts, tc.want)
		})
	}
}

func TestPullSecret(t *testing.T) {
	inst := installation.Empty()
	inst.PullSecret = "regcred"
	in := input(consul())
	in.Installation = inst
	equal(t, "pull secret added", Build(in).ImagePullSecret, "regcred")
	in.Facts.ImagePullSecretNames = []string{"other", "regcred"}
	equal(t, "pull secret already listed", Build(in).ImagePullSecret, "")
	in.Installation = installation.Empty()
	in.Facts.ImagePullSecretNames = nil
	equal(t, "no pull secret", Build(in).ImagePullSecret, "")
}

func TestResourcesAndSecurityContext(t *testing.T) {
	def := with(consul(), map[string]string{
		"agent-cpu-request": "50m", "agent-memory-request": "48Mi", "agent-cpu-limit": "200m",
		"agent-memory-limit": "128Mi", "agent-ephemeral-request": "1Mi", "agent-ephemeral-limit": "2Mi",
		"agent-run-as-user": "1000", "agent-run-as-group": "2000",
	})
	p := Build(input(def, Render{Name: "a", Values: values(map[string]string{"path": "/config/a.json"})}))
	d := agent(t, p, "dynamic-config-agent")
	equal(t, "default requests", d.Requests, map[string]string{"cpu": "50m", "memory": "48Mi", "ephemeral-storage": "1Mi"})
	equal(t, "default limits", d.Limits, map[string]string{"cpu": "200m", "memory": "128Mi", "ephemeral-storage": "2Mi"})
	equal(t, "default security context", d.SecurityContext, restricted(1000, 2000))
	n := agent(t, p, "dynamic-config-agent-a")
	equal(t, "named requests: no ephemeral-storage", n.Requests, map[string]string{"cpu": "50m", "memory": "48Mi"})
	equal(t, "named limits: no ephemeral-storage", n.Limits, map[string]string{"cpu": "200m", "memory": "128Mi"})
	equal(t, "named security context: pod-wide ids", n.SecurityContext, restricted(1000, 2000))
}

func TestPortsAndReadiness(t *testing.T) {
	named := Render{Name: "a", Values: values(map[string]string{"path": "/config/a.json", "metrics-port": "9111"})}
	cases := []struct {
		name      string
		values    map[string]string
		agent     string
		wantPorts []decision.ContainerPort
		wantProbe *decision.Probe
	}{
		{"the default watching agent names its port and probes it by name", map[string]string{"metrics-port": "9110"}, "dynamic-config-agent",
			[]decision.ContainerPort{{ContainerPort: 9110, Name: "metrics"}},
			&decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/readyz", PortName: "metrics"}, PeriodSeconds: 5, FailureThreshold: 60}},
		{"a named watching agent has an unnamed port probed by number", nil, "dynamic-config-agent-a",
			[]decision.ContainerPort{{ContainerPort: 9111}},
			&decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/readyz", PortNumber: 9111}, PeriodSeconds: 5, FailureThreshold: 60}},
		{"readiness false keeps the port and drops the probe", map[string]string{"metrics-port": "9110", "readiness": "false"}, "dynamic-config-agent",
			[]decision.ContainerPort{{ContainerPort: 9110, Name: "metrics"}}, nil},
		{"no metrics port: no port, no probe", nil, "dynamic-config-agent", nil, nil},
		{"one-shot agents never get ports or probes", map[string]string{"metrics-port": "9110", "mode": "both"}, "dynamic-config-init", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := agent(t, Build(input(with(consul(), tc.values), named)), tc.agent)
			equal(t, "ports", c.Ports, tc.wantPorts)
			equal(t, "probe", c.ReadinessProbe, tc.wantProbe)
		})
	}
}

func TestEnvOrder(t *testing.T) {
	secretRef := func(variable, name, key string) decision.AgentEnvVar {
		return decision.AgentEnvVar{Name: variable, SecretKeyRef: &decision.SecretKeyRef{Name: name, Key: key}}
	}
	field := func(variable, path string) decision.AgentEnvVar {
		return decision.AgentEnvVar{Name: variable, FieldRef: &decision.FieldRef{FieldPath: path}}
	}
	plain := func(name, value string) decision.AgentEnvVar {
		return decision.AgentEnvVar{Name: name, Value: str(value)}
	}
	def := with(consul(), map[string]string{
		"endpoint": "", "endpoint-secret": "addr/url", "token-secret": "tok/token",
		"password-secret": "pw/password", "aws-secret": "aws", "events": "true", "mode": "both",
	})
	named := Render{Name: "s3", Values: values(map[string]string{"path": "/config/s3.json", "token-secret": "t3/k",
		"events": "true", "canary-configmap": "ignored"})}
	in := input(def, named)
	in.AgentEnv = []installation.EnvEntry{{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}, {Name: "RUST_LOG", Value: "debug"}}
	p := Build(in)

	wantDefault := []decision.AgentEnvVar{
		secretRef("DYNAMIC_CONFIG_AGENT_TOKEN", "tok", "token"),
		secretRef("DYNAMIC_CONFIG_AGENT_PASSWORD", "pw", "password"),
		secretRef("DYNAMIC_CONFIG_AGENT_ENDPOINT", "addr", "url"),
		secretRef("AWS_ACCESS_KEY_ID", "aws", "AWS_ACCESS_KEY_ID"),
		secretRef("AWS_SECRET_ACCESS_KEY", "aws", "AWS_SECRET_ACCESS_KEY"),
		field("DYNAMIC_CONFIG_POD_NAME", "metadata.name"),
		field("DYNAMIC_CONFIG_POD_UID", "metadata.uid"),
		plain("HTTPS_PROXY", "http://proxy:3128"),
		plain("RUST_LOG", "debug"),
	}
	t.Run("default render: secret env, AWS env, pod identity, merged agent env", func(t *testing.T) {
		equal(t, "watching env", agent(t, p, "dynamic-config-agent").Env, wantDefault)
	})
	t.Run("the default init agent gets the same list", func(t *testing.T) {
		equal(t, "init env", agent(t, p, "dynamic-config-init").Env, wantDefault)
	})
	t.Run("named render: own secret env, merged agent env, then AWS env, no pod identity", func(t *testing.T) {
		equal(t, "named env", agent(t, p, "dynamic-config-agent-s3").Env, []decision.AgentEnvVar{
			secretRef("DYNAMIC_CONFIG_AGENT_TOKEN", "t3", "k"),
			plain("HTTPS_PROXY", "http://proxy:3128"),
			plain("RUST_LOG", "debug"),
			secretRef("AWS_ACCESS_KEY_ID", "aws", "AWS_ACCESS_KEY_ID"),
			secretRef("AWS_SECRET_ACCESS_KEY", "aws", "AWS_SECRET_ACCESS_KEY"),
		})
	})
	t.Run("a canary-configmap alone brings the pod identity env", func(t *testing.T) {
		c := agent(t, Build(input(with(consul(), map[string]string{"canary-configmap": "c"}))), "dynamic-config-agent")
		equal(t, "env", c.Env, []decision.AgentEnvVar{field("DYNAMIC_CONFIG_POD_NAME", "metadata.name"), field("DYNAMIC_CONFIG_POD_UID", "metadata.uid")})
	})
	t.Run("env is omitted when empty", func(t *testing.T) {
		if env := agent(t, Build(input(consul())), "dynamic-config-agent").Env; env != nil {
			t.Errorf("env = %v, want nil", env)
		}
	})
	t.Run("the plan never points into the installation's env", func(t *testing.T) {
		*agent(t, p, "dynamic-config-agent").Env[7].Value = "changed"
		equal(t, "installation env", in.AgentEnv[0].Value, "http://proxy:3128")
	})
}

func TestCommandRewrite(t *testing.T) {
	facts := func() *decision.Facts {
		return &decision.Facts{Containers: []decision.Container{
			{Name: "sidecar"},
			{Name: "app", HasCommand: true, Command: []string{"/app", "serve"}, HasArgs: true, Args: []string{"--port", "8080"}},
		}}
	}
	envPath := with(consul(), map[string]string{"path": "/config/app.env", "mode": "both", "env-inject": "app"})
	cases := []struct {
		name   string
		values map[string]string
		args   bool
		want   *decision.CommandRewrite
	}{
		{"env-inject wraps the command and drops args", envPath, true, &decision.CommandRewrite{
			ContainerIndex: 1, ContainerName: "app", RemoveArgs: true,
			Command: []string{"/bin/sh", "-c", `set -a; . /config/app.env; set +a; exec "$@"`, "dynamic-config-env", "/app", "serve", "--port", "8080"},
		}},
		{"without args nothing is removed", envPath, false, &decision.CommandRewrite{
			ContainerIndex: 1, ContainerName: "app",
			Command: []string{"/bin/sh", "-c", `set -a; . /config/app.env; set +a; exec "$@"`, "dynamic-config-env", "/app", "serve"},
		}},
		{"env-restart exports the fingerprint and adds the liveness probe (period clamped up to 10)",
			with(envPath, map[string]string{"env-restart": "true", "watch-seconds": "3"}), true, &decision.CommandRewrite{
				ContainerIndex: 1, ContainerName: "app", RemoveArgs: true,
				Command: []string{"/bin/sh", "-c",
					`set -a; . /config/app.env; set +a; export DYNAMIC_CONFIG_ENV_FINGERPRINT="$(cksum < /config/app.env)"; exec "$@"`,
					"dynamic-config-env", "/app", "serve", "--port", "8080"},
				LivenessProbe: &decision.Probe{
					Exec:          &decision.ExecAction{Command: []string{"/bin/sh", "-c", `test "$(cksum < /config/app.env)" = "$DYNAMIC_CONFIG_ENV_FINGERPRINT"`}},
					PeriodSeconds: 10, FailureThreshold: 1,
				},
			}},
		{"the liveness period follows watch-seconds inside 10..120",
			with(envPath, map[string]string{"env-restart": "true", "watch-seconds": "45"}), false, &decision.CommandRewrite{
				ContainerIndex: 1, ContainerName: "app",
				Command: []string{"/bin/sh", "-c",
					`set -a; . /config/app.env; set +a; export DYNAMIC_CONFIG_ENV_FINGERPRINT="$(cksum < /config/app.env)"; exec "$@"`,
					"dynamic-config-env", "/app", "serve"},
				LivenessProbe: &decision.Probe{
					Exec:          &decision.ExecAction{Command: []string{"/bin/sh", "-c", `test "$(cksum < /config/app.env)" = "$DYNAMIC_CONFIG_ENV_FINGERPRINT"`}},
					PeriodSeconds: 45, FailureThreshold: 1,
				},
			}},
		{"no env-inject, no rewrite", consul(), true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(tc.values)
			in.Facts = facts()
			if !tc.args {
				in.Facts.Containers[1].HasArgs, in.Facts.Containers[1].Args = false, nil
			}
			equal(t, "command rewrite", Build(in).CommandRewrite, tc.want)
		})
	}
	for watch, want := range map[uint64]int32{0: 10, 10: 10, 120: 120, 121: 120, ^uint64(0): 120} {
		if got := livenessPeriod(watch); got != want {
			t.Errorf("livenessPeriod(%d) = %d, want %d", watch, got, want)
		}
	}
}
