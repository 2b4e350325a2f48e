package patch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

// restricted is the agent security context of spec 03 §3.5 with 65532/65532.
func restricted() *deciderv1.SecurityContext {
	return &deciderv1.SecurityContext{
		RunAsNonRoot: true, RunAsUser: 65532, RunAsGroup: 65532,
		CapabilitiesDrop: []string{"ALL"}, ReadOnlyRootFilesystem: true, SeccompProfileType: "RuntimeDefault",
	}
}

func sharedVolume() *deciderv1.Volume {
	return &deciderv1.Volume{Name: "dynamic-config", Source: &deciderv1.Volume_EmptyDir{
		EmptyDir: &deciderv1.EmptyDirVolume{Medium: "Memory", SizeLimit: "16Mi"}}}
}

func appMount(i int32, name, dir string) *deciderv1.AppMount {
	return &deciderv1.AppMount{ContainerIndex: i, ContainerName: name,
		Mount: &deciderv1.VolumeMount{Name: "dynamic-config", MountPath: dir}}
}

func status() *deciderv1.Annotation {
	return &deciderv1.Annotation{Key: "dynamic-config.rs/status", Value: "injected"}
}

// example1 is the plan of spec 03 §7.1.
func example1() *deciderv1.MutationPlan {
	return &deciderv1.MutationPlan{
		StatusAnnotation: status(),
		Volumes:          []*deciderv1.Volume{sharedVolume()},
		AppMounts:        []*deciderv1.AppMount{appMount(0, "app", "/config")},
		Agents: []*deciderv1.AgentPlacement{{
			List: deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS, Position: deciderv1.Position_POSITION_APPEND,
			Container: &deciderv1.AgentContainer{
				Name:  "dynamic-config-agent",
				Image: "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0",
				Args: []string{"--source", "consul", "--endpoint", "http://consul:8500", "--key", "myapp/config.json",
					"--out", "/config/rendered.toml", "--watch", "15"},
				VolumeMounts:    []*deciderv1.VolumeMount{{Name: "dynamic-config", MountPath: "/config"}},
				Resources:       &deciderv1.Resources{Requests: map[string]string{"cpu": "10m", "memory": "32Mi"}, Limits: map[string]string{"memory": "64Mi"}},
				SecurityContext: restricted(),
				Render:          "",
			},
		}},
	}
}

// example2 is the plan of spec 03 §7.2.
func example2() *deciderv1.MutationPlan {
	return &deciderv1.MutationPlan{
		StatusAnnotation: status(),
		Volumes: []*deciderv1.Volume{sharedVolume(), {Name: "dynamic-config-ca", Source: &deciderv1.Volume_ConfigMap{
			ConfigMap: &deciderv1.ConfigMapVolume{Name: "vault-ca"}}}},
		AppMounts: []*deciderv1.AppMount{appMount(0, "app", "/config")},
		Agents: []*deciderv1.AgentPlacement{{
			List: deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS, Position: deciderv1.Position_POSITION_APPEND,
			Container: &deciderv1.AgentContainer{
				Name:  "dynamic-config-agent",
				Image: "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0",
				Args: []string{"--source", "vault", "--endpoint", "https://vault.vault:8200", "--key", "secret/myapp",
					"--out", "/config/rendered.yaml", "--auth", "kubernetes", "--auth-role", "myapp",
					"--ca", "/etc/dynamic-config/ca/ca.crt", "--watch", "15"},
				VolumeMounts: []*deciderv1.VolumeMount{{Name: "dynamic-config", MountPath: "/config"},
					{Name: "dynamic-config-ca", MountPath: "/etc/dynamic-config/ca", ReadOnly: true}},
				Resources:       &deciderv1.Resources{Requests: map[string]string{"cpu": "10m", "memory": "32Mi"}, Limits: map[string]string{"memory": "64Mi"}},
				SecurityContext: restricted(),
			},
		}},
	}
}

// onePod is a pod with annotations, one container "app" without
// volumeMounts and no spec.volumes (both canonical examples).
func onePod() *Pod {
	return &Pod{SpecPresent: true, AnnotationsPresent: true, ContainersPresent: true,
		Containers: []Container{{Name: "app"}}}
}

const example1Patch = `[{"op":"add","path":"/metadata/annotations/dynamic-config.rs~1status","value":"injected"},{"op":"add","path":"/spec/volumes","value":[]},{"op":"add","path":"/spec/volumes/-","value":{"emptyDir":{"medium":"Memory","sizeLimit":"16Mi"},"name":"dynamic-config"}},{"op":"add","path":"/spec/containers/0/volumeMounts","value":[]},{"op":"add","path":"/spec/containers/0/volumeMounts/-","value":{"mountPath":"/config","name":"dynamic-config"}},{"op":"add","path":"/spec/containers/-","value":{"args":["--source","consul","--endpoint","http://consul:8500","--key","myapp/config.json","--out","/config/rendered.toml","--watch","15"],"image":"ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0","name":"dynamic-config-agent","resources":{"limits":{"memory":"64Mi"},"requests":{"cpu":"10m","memory":"32Mi"}},"securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"readOnlyRootFilesystem":true,"runAsGroup":65532,"runAsNonRoot":true,"runAsUser":65532,"seccompProfile":{"type":"RuntimeDefault"}},"volumeMounts":[{"mountPath":"/config","name":"dynamic-config"}]}}]`

func TestCanonicalExamples(t *testing.T) {
	tests := []struct {
		name   string
		plan   *deciderv1.MutationPlan
		bytes  int
		sha256 string
		exact  string
		ops    int
	}{
		{"example 1 (consul, sidecar) is reproduced byte for byte", example1(), 1081,
			"78db0d92db38ff57d33727832731d813f547c6a370940b4842b216a25fbac01b", example1Patch, 6},
		{"example 2 (vault, kubernetes auth, private CA) is reproduced byte for byte", example2(), 1353,
			"e99ae340e56f087e9ee91424300988c61072072e2cc0a9191daa40073c545f1e", "", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Build(tt.plan, onePod())
			if err != nil {
				t.Fatal(err)
			}
			if tt.exact != "" && string(p.JSON) != tt.exact {
				t.Fatalf("patch =\n%s\nwant\n%s", p.JSON, tt.exact)
			}
			sum := sha256.Sum256(p.JSON)
			if len(p.JSON) != tt.bytes || hex.EncodeToString(sum[:]) != tt.sha256 {
				t.Fatalf("patch is %d bytes, sha256 %x; want %d bytes, %s\n%s", len(p.JSON), sum, tt.bytes, tt.sha256, p.JSON)
			}
			if len(p.Ops) != tt.ops {
				t.Fatalf("%d ops, want %d", len(p.Ops), tt.ops)
			}
		})
	}
}

func TestOpOrderAndArrays(t *testing.T) {
	plan := example1()
	plan.Volumes = append(plan.Volumes, &deciderv1.Volume{Name: "dynamic-config-ssh",
		Source: &deciderv1.Volume_Secret{Secret: &deciderv1.SecretVolume{SecretName: "ssh", DefaultMode: 256}}})
	plan.AppMounts = append(plan.AppMounts, appMount(1, "side", "/config"))
	plan.ImagePullSecret = "regcred"
	plan.CommandRewrite = &deciderv1.CommandRewrite{
		ContainerIndex: 1, ContainerName: "side", RemoveArgs: true,
		Command: []string{"/bin/sh", "-c", `set -a; . /config/app.env; set +a; exec "$@"`, "dynamic-config-env", "run", "<&>"},
		LivenessProbe: &deciderv1.Probe{Handler: &deciderv1.Probe_Exec{Exec: &deciderv1.ExecAction{
			Command: []string{"/bin/sh", "-c", `test "$(cksum < /config/app.env)" = "$DYNAMIC_CONFIG_ENV_FINGERPRINT"`}}},
			PeriodSeconds: 15, FailureThreshold: 1},
	}
	initAgent := func(name string, pos deciderv1.Position) *deciderv1.AgentPlacement {
		return &deciderv1.AgentPlacement{List: deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS, Position: pos,
			Container: &deciderv1.AgentContainer{Name: name, Image: "img", SecurityContext: restricted(),
				Env: []*deciderv1.AgentEnvVar{
					{Name: "DYNAMIC_CONFIG_AGENT_TOKEN", Source: &deciderv1.AgentEnvVar_SecretKeyRef{SecretKeyRef: &deciderv1.SecretKeyRef{Name: "tok", Key: "token"}}},
					{Name: "DYNAMIC_CONFIG_POD_NAME", Source: &deciderv1.AgentEnvVar_FieldRef{FieldRef: &deciderv1.FieldRef{FieldPath: "metadata.name"}}},
					{Name: "EMPTY", Source: &deciderv1.AgentEnvVar_Value{Value: ""}},
				}}}
	}
	watcher := plan.Agents[0]
	watcher.List = deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS
	watcher.Container.RestartPolicy = "Always"
	watcher.Container.Ports = []*deciderv1.ContainerPort{{ContainerPort: 9100, Name: "metrics"}}
	watcher.Container.ReadinessProbe = &deciderv1.Probe{Handler: &deciderv1.Probe_HttpGet{HttpGet: &deciderv1.HttpGetAction{
		Path: "/readyz", Port: &deciderv1.HttpGetAction_PortName{PortName: "metrics"}}}, PeriodSeconds: 5, FailureThreshold: 60}
	plan.Agents = []*deciderv1.AgentPlacement{
		initAgent("dynamic-config-init", deciderv1.Position_POSITION_FIRST),
		initAgent("dynamic-config-init-cache", deciderv1.Position_POSITION_APPEND),
		watcher,
	}
	pod := &Pod{SpecPresent: true, ContainersPresent: true, Containers: []Container{
		{Name: "app", VolumeMountsPresent: true},
		{Name: "side", CommandPresent: true, ArgsPresent: true},
	}}
	p, err := Build(plan, pod)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range p.Ops {
		got = append(got, op.Op+" "+op.Path)
	}
	want := []string{
		"add /metadata/annotations",
		"add /metadata/annotations/dynamic-config.rs~1status",
		"add /spec/volumes",
		"add /spec/volumes/-",
		"add /spec/volumes/-",
		"add /spec/containers/0/volumeMounts/-",
		"add /spec/containers/1/volumeMounts",
		"add /spec/containers/1/volumeMounts/-",
		"add /spec/imagePullSecrets",
		"add /spec/imagePullSecrets/-",
		"replace /spec/containers/1/command",
		"remove /spec/containers/1/args",
		"add /spec/containers/1/livenessProbe",
		"add /spec/initContainers",
		"add /spec/initContainers/0",
		"add /spec/initContainers/-",
		"add /spec/initContainers/-",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, frag := range []string{
		`{"op":"add","path":"/metadata/annotations","value":{}}`,
		`"path":"/spec/containers/1/command","value":["/bin/sh","-c","set -a; . /config/app.env; set +a; exec \"$@\"","dynamic-config-env","run","<&>"]`,
		`{"exec":{"command":["/bin/sh","-c","test \"$(cksum < /config/app.env)\" = \"$DYNAMIC_CONFIG_ENV_FINGERPRINT\""]},"failureThreshold":1,"periodSeconds":15}`,
		`{"op":"remove","path":"/spec/containers/1/args"}`,
		`"env":[{"name":"DYNAMIC_CONFIG_AGENT_TOKEN","valueFrom":{"secretKeyRef":{"key":"token","name":"tok"}}},{"name":"DYNAMIC_CONFIG_POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},{"name":"EMPTY","value":""}]`,
		`"ports":[{"containerPort":9100,"name":"metrics"}],"readinessProbe":{"failureThreshold":60,"httpGet":{"path":"/readyz","port":"metrics"},"periodSeconds":5}`,
		`"restartPolicy":"Always"`,
		`{"name":"dynamic-config-ssh","secret":{"defaultMode":256,"secretName":"ssh"}}`,
		`{"op":"add","path":"/spec/imagePullSecrets/-","value":{"name":"regcred"}}`,
	} {
		if !strings.Contains(string(p.JSON), frag) {
			t.Errorf("patch lacks %s\n%s", frag, p.JSON)
		}
	}
}

func TestArgsAbsentIsNotRemoved(t *testing.T) {
	plan := example1()
	plan.CommandRewrite = &deciderv1.CommandRewrite{ContainerIndex: 0, ContainerName: "app", Command: []string{"x"}, RemoveArgs: true}
	pod := onePod()
	pod.Containers[0].CommandPresent = true
	p, err := Build(plan, pod)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(p.JSON), `"remove"`) {
		t.Fatalf("args was removed though the pod has none: %s", p.JSON)
	}
}

func TestUnfitPlans(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*deciderv1.MutationPlan, *Pod)
		want   string
	}{
		{"an app mount naming another container is unfit", func(p *deciderv1.MutationPlan, _ *Pod) {
			p.AppMounts[0].ContainerName = "web"
		}, `targets container 0 as "web", but the pod's container 0 is "app"`},
		{"an app mount past the last container is unfit", func(p *deciderv1.MutationPlan, _ *Pod) {
			p.AppMounts[0].ContainerIndex = 3
		}, "but the pod has 1 containers"},
		{"a command rewrite of a container without a command is unfit", func(p *deciderv1.MutationPlan, _ *Pod) {
			p.CommandRewrite = &deciderv1.CommandRewrite{ContainerIndex: 0, ContainerName: "app", Command: []string{"x"}}
		}, "has no command to replace"},
		{"a plan without a status annotation is unfit", func(p *deciderv1.MutationPlan, _ *Pod) {
			p.StatusAnnotation = nil
		}, "no status annotation"},
		{"a volume without a source is unfit", func(p *deciderv1.MutationPlan, _ *Pod) {
			p.Volumes[0].Source = nil
		}, "has no source"},
		{"an agent without a list is unfit", func(p *deciderv1.MutationPlan, _ *Pod) {
			p.Agents[0].List = deciderv1.ContainerList_CONTAINER_LIST_UNSPECIFIED
		}, "names no container list"},
		{"a pod without a spec is unfit", func(_ *deciderv1.MutationPlan, pod *Pod) {
			pod.SpecPresent = false
		}, "no spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, pod := example1(), onePod()
			tt.mutate(plan, pod)
			_, err := Build(plan, pod)
			var unfitErr *UnfitError
			if !errors.As(err, &unfitErr) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Build() error = %v, want an UnfitError containing %q", err, tt.want)
			}
		})
	}
}

func TestAPlanAboveTheAPIServersPatchBoundIsRefusedAsTooLargeToPatch(t *testing.T) {
	// planFor mounts the shared volume into n app containers, none of which
	// has a volumeMounts member: two ops each, beside the annotations map,
	// the status mark, the volume and the agent.
	planFor := func(n int) (*deciderv1.MutationPlan, *Pod) {
		plan := example1()
		pod := &Pod{SpecPresent: true, VolumesPresent: true, ContainersPresent: true}
		plan.AppMounts = nil
		for i := range n {
			name := "app-" + strconv.Itoa(i)
			pod.Containers = append(pod.Containers, Container{Name: name})
			plan.AppMounts = append(plan.AppMounts, appMount(int32(i), name, "/config"))
		}
		return plan, pod
	}
	atTheBound := (podcaps.MaxPatchOps - 4) / 2
	if 4+2*atTheBound != podcaps.MaxPatchOps {
		t.Fatal("the bound is not reached exactly")
	}
	t.Run("a plan of exactly the bound is patched", func(t *testing.T) {
		plan, pod := planFor(atTheBound)
		p, err := Build(plan, pod)
		if err != nil || len(p.Ops) != podcaps.MaxPatchOps {
			t.Fatalf("Build: %v", err)
		}
	})
	t.Run("one op more is refused, naming the bound, with no patch", func(t *testing.T) {
		plan, pod := planFor(atTheBound + 1)
		p, err := Build(plan, pod)
		var tooMany *TooManyOpsError
		if !errors.As(err, &tooMany) || p != nil || !strings.Contains(err.Error(), "more than 10000 JSON Patch operations") {
			t.Fatalf("Build: %v, %v", p, err)
		}
	})
	t.Run("a plan for 40 000 containers stops at the bound", func(t *testing.T) {
		plan, pod := planFor(40000)
		var tooMany *TooManyOpsError
		if _, err := Build(plan, pod); !errors.As(err, &tooMany) {
			t.Fatalf("Build: %v", err)
		}
	})
}

func TestTheRevisionStampIsWrittenBesideTheStatusMark(t *testing.T) {
	tests := []struct {
		name    string
		pod     *Pod
		n       int
		wantOps []string
	}{
		{"a pod with annotations gets the stamp right after the status mark", onePod(), 7, []string{
			`{"op":"add","path":"/metadata/annotations/dynamic-config.rs~1status","value":"injected"}`,
			`{"op":"add","path":"/metadata/annotations/dynamic-config.rs~1revision","value":"44136fa355b3"}`,
			`{"op":"add","path":"/spec/volumes","value":[]}`,
		}},
		{"a pod without annotations gets the map once, then the mark and the stamp",
			&Pod{SpecPresent: true, ContainersPresent: true, Containers: []Container{{Name: "app"}}}, 8, []string{
				`{"op":"add","path":"/metadata/annotations","value":{}}`,
				`{"op":"add","path":"/metadata/annotations/dynamic-config.rs~1status","value":"injected"}`,
				`{"op":"add","path":"/metadata/annotations/dynamic-config.rs~1revision","value":"44136fa355b3"}`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := example1()
			plan.RevisionAnnotation = &deciderv1.Annotation{Key: "dynamic-config.rs/revision", Value: "44136fa355b3"}
			p, err := Build(plan, tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			var ops []json.RawMessage
			if err := json.Unmarshal(p.JSON, &ops); err != nil {
				t.Fatal(err)
			}
			for i, want := range tt.wantOps {
				if string(ops[i]) != want {
					t.Errorf("op %d = %s, want %s", i+1, ops[i], want)
				}
			}
			if len(p.Ops) != tt.n {
				t.Errorf("%d ops: %s", len(p.Ops), p.JSON)
			}
		})
	}
}
