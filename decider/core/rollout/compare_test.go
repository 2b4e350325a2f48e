package rollout

import (
	"slices"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// secret is a value no path may ever carry.
const secret = "s3cr3t-value"

func ptr[T any](v T) *T { return &v }

// injected is an inject decision of one agent beside the app container
// app, as the plan of canonical example 1 has it; edit changes it.
func injected(edit func(*decision.Decision)) decision.Decision {
	d := decision.New("sha256:active")
	d.Outcome = decision.OutcomeInject
	d.Plan = &decision.Plan{
		StatusAnnotation: decision.Annotation{Key: "dynamic-config.rs/status", Value: "injected"},
		Volumes:          []decision.Volume{{Name: "dynamic-config", EmptyDir: &decision.EmptyDirVolume{Medium: "Memory", SizeLimit: "16Mi"}}},
		AppMounts:        []decision.AppMount{{ContainerName: "app", Mount: decision.VolumeMount{Name: "dynamic-config", MountPath: "/config"}}},
		Agents: []decision.AgentPlacement{{
			List: decision.ListContainers, Position: decision.PositionAppend,
			Container: decision.AgentContainer{
				Name:         "dynamic-config-agent",
				Image:        "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0",
				Args:         []string{"--source", "consul", "--endpoint", "http://consul:8500", "--watch", "15"},
				Env:          []decision.AgentEnvVar{{Name: "TOKEN", Value: ptr("abc")}},
				VolumeMounts: []decision.VolumeMount{{Name: "dynamic-config", MountPath: "/config"}},
				Requests:     map[string]string{"cpu": "10m", "memory": "32Mi"},
				Limits:       map[string]string{"memory": "64Mi"},
			},
		}},
	}
	if edit != nil {
		edit(&d)
	}
	return d
}

func agent(d *decision.Decision) *decision.AgentContainer { return &d.Plan.Agents[0].Container }

func refusedBy(check string, reason decision.Reason, edit func(*decision.Refusal)) decision.Decision {
	d := decision.New("sha256:active")
	d.Outcome = decision.OutcomeRefuse
	r := decision.Refusal{Reason: reason, Slug: "DynamicConfigPolicy", HTTPCode: 403, Check: check, Key: "dynamic-config.rs/source",
		Message: "dynamic-config.rs/source is " + secret + ": not allowed"}
	if edit != nil {
		edit(&r)
	}
	d.Refusals = []decision.Refusal{r}
	return d
}

func skipped(why decision.SkipReason) decision.Decision {
	d := decision.New("sha256:active")
	d.Outcome, d.SkipReason = decision.OutcomeSkip, why
	return d
}

func TestTheComparisonNamesTheResultAndThePathsThatDiffer(t *testing.T) {
	tests := []struct {
		name              string
		active, candidate decision.Decision
		want              Result
		paths             []string
	}{
		{"two equal injections are the same", injected(nil), injected(nil), Same, nil},
		{"another revision alone is the same",
			injected(nil), injected(func(d *decision.Decision) {
				d.InstallationRevision = "sha256:candidate"
				d.AuditAnnotations = map[string]string{"revision": "sha256:candidate"}
			}), Same, nil},
		{"another revision stamp alone is the same: every candidate writes its own",
			injected(func(d *decision.Decision) {
				d.Plan.RevisionAnnotation = decision.Annotation{Key: "dynamic-config.rs/revision", Value: "0123456789ab"}
			}), injected(func(d *decision.Decision) {
				d.InstallationRevision = "sha256:candidate"
				d.Plan.RevisionAnnotation = decision.Annotation{Key: "dynamic-config.rs/revision", Value: "ba9876543210"}
			}), Same, nil},
		{"another agent image is changed at the image path",
			injected(nil), injected(func(d *decision.Decision) { agent(d).Image = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0" }),
			Changed, []string{"containers[dynamic-config-agent].image"}},
		{"another value of a flag names the flag",
			injected(nil), injected(func(d *decision.Decision) { agent(d).Args[5] = secret }),
			Changed, []string{"containers[dynamic-config-agent].args[--watch]"}},
		{"a flag added names the flag",
			injected(nil), injected(func(d *decision.Decision) { agent(d).Args = append(agent(d).Args, "--history", "3") }),
			Changed, []string{"containers[dynamic-config-agent].args[--history]"}},
		{"a flag written --flag=value is named by its flag",
			injected(func(d *decision.Decision) { agent(d).Args = append(agent(d).Args, "--tag=a") }),
			injected(func(d *decision.Decision) { agent(d).Args = append(agent(d).Args, "--tag="+secret) }),
			Changed, []string{"containers[dynamic-config-agent].args[--tag]"}},
		{"the same flags in another order are the arguments",
			injected(nil), injected(func(d *decision.Decision) {
				agent(d).Args = []string{"--watch", "15", "--source", "consul", "--endpoint", "http://consul:8500"}
			}),
			Changed, []string{"containers[dynamic-config-agent].args"}},
		{"another environment value names the variable",
			injected(nil), injected(func(d *decision.Decision) { agent(d).Env[0].Value = ptr(secret) }),
			Changed, []string{"containers[dynamic-config-agent].env[TOKEN]"}},
		{"a variable from a secret instead of a value names the variable",
			injected(nil), injected(func(d *decision.Decision) {
				agent(d).Env[0] = decision.AgentEnvVar{Name: "TOKEN", SecretKeyRef: &decision.SecretKeyRef{Name: secret, Key: "token"}}
			}),
			Changed, []string{"containers[dynamic-config-agent].env[TOKEN]"}},
		{"a variable added names it",
			injected(nil), injected(func(d *decision.Decision) {
				agent(d).Env = append(agent(d).Env, decision.AgentEnvVar{Name: "EXTRA", Value: ptr(secret)})
			}),
			Changed, []string{"containers[dynamic-config-agent].env[EXTRA]"}},
		{"another resource request names the resource",
			injected(nil), injected(func(d *decision.Decision) { agent(d).Requests = map[string]string{"cpu": "20m", "memory": "32Mi"} }),
			Changed, []string{"containers[dynamic-config-agent].resources.requests.cpu"}},
		{"a limit removed names the resource",
			injected(nil), injected(func(d *decision.Decision) { agent(d).Limits = nil }),
			Changed, []string{"containers[dynamic-config-agent].resources.limits.memory"}},
		{"another agent mount names the volume",
			injected(nil), injected(func(d *decision.Decision) { agent(d).VolumeMounts[0].MountPath = "/etc/config" }),
			Changed, []string{"containers[dynamic-config-agent].volumeMounts[dynamic-config]"}},
		{"another app mount names the app container and the volume",
			injected(nil), injected(func(d *decision.Decision) { d.Plan.AppMounts[0].Mount.MountPath = "/etc/config" }),
			Changed, []string{"containers[app].volumeMounts[dynamic-config]"}},
		{"another volume source names the volume",
			injected(nil), injected(func(d *decision.Decision) { d.Plan.Volumes[0].EmptyDir = &decision.EmptyDirVolume{SizeLimit: "32Mi"} }),
			Changed, []string{"volumes[dynamic-config]"}},
		{"a volume added names it",
			injected(nil), injected(func(d *decision.Decision) {
				d.Plan.Volumes = append(d.Plan.Volumes, decision.Volume{Name: "dynamic-config-ca", ConfigMap: &decision.ConfigMapVolume{Name: secret}})
			}),
			Changed, []string{"volumes[dynamic-config-ca]"}},
		{"a pull secret added is the pull secrets, never the name",
			injected(nil), injected(func(d *decision.Decision) { d.Plan.ImagePullSecret = secret }),
			Changed, []string{"imagePullSecrets"}},
		{"an agent moved to the init containers names both places",
			injected(nil), injected(func(d *decision.Decision) { d.Plan.Agents[0].List = decision.ListInitContainers }),
			Changed, []string{"containers[dynamic-config-agent]", "initContainers[dynamic-config-agent]"}},
		{"an agent placed first instead of last is its position",
			injected(nil), injected(func(d *decision.Decision) { d.Plan.Agents[0].Position = decision.PositionFirst }),
			Changed, []string{"containers[dynamic-config-agent].position"}},
		{"a second agent added names it",
			injected(nil), injected(func(d *decision.Decision) {
				second := d.Plan.Agents[0]
				second.Container.Name = "dynamic-config-agent-db"
				d.Plan.Agents = append(d.Plan.Agents, second)
			}),
			Changed, []string{"containers[dynamic-config-agent-db]"}},
		{"a command rewrite added names the app's command",
			injected(nil), injected(func(d *decision.Decision) {
				d.Plan.CommandRewrite = &decision.CommandRewrite{ContainerName: "app", Command: []string{"sh", "-c", secret}}
			}),
			Changed, []string{"containers[app].command"}},
		{"a new security context is the security context",
			injected(nil), injected(func(d *decision.Decision) { agent(d).SecurityContext.RunAsUser = 1000 }),
			Changed, []string{"containers[dynamic-config-agent].securityContext"}},
		{"a readiness probe added is the probe",
			injected(nil), injected(func(d *decision.Decision) {
				agent(d).ReadinessProbe = &decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/healthz", PortNumber: 9102}}
			}),
			Changed, []string{"containers[dynamic-config-agent].readinessProbe"}},
		{"a warning added names its code, never its message",
			injected(nil), injected(func(d *decision.Decision) {
				d.Warnings = []decision.Warning{{Code: "revoke-grace.ignored", Message: "the value " + secret + " is ignored"}}
			}),
			Changed, []string{"warnings[revoke-grace.ignored]"}},
		{"another message of the same warning names its code",
			injected(func(d *decision.Decision) { d.Warnings = []decision.Warning{{Code: "w", Message: "a"}} }),
			injected(func(d *decision.Decision) { d.Warnings = []decision.Warning{{Code: "w", Message: secret}} }),
			Changed, []string{"warnings[w]"}},
		{"a skip that injects under the candidate is newly injected, with what it writes",
			skipped(decision.SkipNotRequested), injected(nil), NewlyInjected,
			[]string{"metadata.annotations[dynamic-config.rs/status]", "containers[dynamic-config-agent]", "containers[app].volumeMounts[dynamic-config]", "volumes[dynamic-config]"}},
		{"an injection that the candidate skips is no longer injected, with what it wrote",
			injected(nil), skipped(decision.SkipNotRequested), NoLongerInjected,
			[]string{"metadata.annotations[dynamic-config.rs/status]", "containers[dynamic-config-agent]", "containers[app].volumeMounts[dynamic-config]", "volumes[dynamic-config]"}},
		{"an injection that the candidate refuses is newly refused, with the check",
			injected(nil), refusedBy("gate.source-deny", decision.ReasonPolicy, nil), NewlyRefused, []string{"refusals[gate.source-deny]"}},
		{"a skip that the candidate refuses is newly refused",
			skipped(decision.SkipNotRequested), refusedBy("gate.source-deny", decision.ReasonPolicy, nil), NewlyRefused, []string{"refusals[gate.source-deny]"}},
		{"a refusal that the candidate injects is no longer refused",
			refusedBy("gate.source-deny", decision.ReasonPolicy, nil), injected(nil), NoLongerRefused, []string{"refusals[gate.source-deny]"}},
		{"two refusals by other checks are changed, naming both",
			refusedBy("gate.source-deny", decision.ReasonPolicy, nil), refusedBy("pin.watch-seconds", decision.ReasonPinned, nil),
			Changed, []string{"refusals[gate.source-deny]", "refusals[pin.watch-seconds]"}},
		{"one check refusing in another class is its class",
			refusedBy("c", decision.ReasonPolicy, nil), refusedBy("c", decision.ReasonPinned, nil), Changed, []string{"refusals[c].class"}},
		{"one check refusing with another reason is its reason",
			refusedBy("c", decision.ReasonPolicy, nil), refusedBy("c", decision.ReasonPolicy, func(r *decision.Refusal) { r.Slug = "DynamicConfigOther" }),
			Changed, []string{"refusals[c].reason"}},
		{"one check refusing another key is its key",
			refusedBy("c", decision.ReasonPolicy, nil), refusedBy("c", decision.ReasonPolicy, func(r *decision.Refusal) { r.Key = "dynamic-config.rs/endpoint" }),
			Changed, []string{"refusals[c].key"}},
		{"one refusal with another message only is the same (messages quote values)",
			refusedBy("c", decision.ReasonPolicy, nil), refusedBy("c", decision.ReasonPolicy, func(r *decision.Refusal) { r.Message = "other" }),
			Same, nil},
		{"two skips for other reasons are changed at the skip reason",
			skipped(decision.SkipNotRequested), skipped(decision.SkipNoAnnotations), Changed, []string{"skipReason"}},
		{"an allow that the candidate skips is changed at the outcome",
			func() decision.Decision { d := decision.New("a"); d.Outcome = decision.OutcomeAllow; return d }(),
			skipped(decision.SkipNoPolicy), Changed, []string{"outcome"}},
		{"an allow that the candidate refuses is newly refused",
			func() decision.Decision { d := decision.New("a"); d.Outcome = decision.OutcomeAllow; return d }(),
			refusedBy("env-policy.rule-0", decision.ReasonEnvPolicy, nil), NewlyRefused, []string{"refusals[env-policy.rule-0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(&tt.active, &tt.candidate)
			if got.Result != tt.want || !slices.Equal(got.Paths, tt.paths) {
				t.Errorf("Compare = %s %q; want %s %q", got.Result, got.Paths, tt.want, tt.paths)
			}
			for _, p := range got.Paths {
				if strings.Contains(p, secret) {
					t.Errorf("path %q carries a value", p)
				}
			}
		})
	}
}

func TestComparingTwoEqualDecisionsAllocatesNothing(t *testing.T) {
	a, c := injected(nil), injected(func(d *decision.Decision) { d.InstallationRevision = "sha256:candidate" })
	if n := testing.AllocsPerRun(100, func() { Compare(&a, &c) }); n != 0 {
		t.Errorf("Compare of two equal decisions allocates %v times", n)
	}
}

func TestEveryResultHasItsSpecName(t *testing.T) {
	want := []string{"same", "changed", "newly-refused", "no-longer-refused", "newly-injected", "no-longer-injected"}
	for i, r := range Results {
		if r.String() != want[i] {
			t.Errorf("Results[%d] = %q, want %q", i, r, want[i])
		}
	}
}
