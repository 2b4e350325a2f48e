package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// The fixed names of spec 03 §1.
const (
	statusKey     = "dynamic-config.rs/status"
	agentName     = "dynamic-config-agent"
	initAgentName = "dynamic-config-init"
	builtInImage  = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0"
)

// The stored pod is compared through short canonical lines, so that the API
// server's defaulting (imagePullPolicy, terminationMessagePath, a ConfigMap
// volume's defaultMode 420, …) neither hides nor fakes a difference, and a
// failure prints readably.

// volumeLine: `<name> emptyDir medium=Memory sizeLimit=16Mi`,
// `<name> configMap <cm>`, `<name> secret <secret> mode=0400`.
func volumeLine(v corev1.Volume) string {
	switch {
	case v.EmptyDir != nil:
		s := v.Name + " emptyDir"
		if v.EmptyDir.Medium != "" {
			s += " medium=" + string(v.EmptyDir.Medium)
		}
		if v.EmptyDir.SizeLimit != nil {
			s += " sizeLimit=" + v.EmptyDir.SizeLimit.String()
		}
		return s
	case v.ConfigMap != nil:
		return v.Name + " configMap " + v.ConfigMap.Name
	case v.Secret != nil:
		s := v.Name + " secret " + v.Secret.SecretName
		if v.Secret.DefaultMode != nil {
			s += fmt.Sprintf(" mode=%04o", *v.Secret.DefaultMode)
		}
		return s
	default:
		return v.Name + " (other source)"
	}
}

// mountLine: `<name>@<path>`, `:ro` appended when read-only.
func mountLine(m corev1.VolumeMount) string {
	s := m.Name + "@" + m.MountPath
	if m.ReadOnly {
		s += ":ro"
	}
	return s
}

// envLine: `NAME=value`, `NAME<-secret <name>/<key>`, `NAME<-field <path>`.
func envLine(e corev1.EnvVar) string {
	switch {
	case e.ValueFrom == nil:
		return e.Name + "=" + e.Value
	case e.ValueFrom.SecretKeyRef != nil:
		return e.Name + "<-secret " + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
	case e.ValueFrom.FieldRef != nil:
		return e.Name + "<-field " + e.ValueFrom.FieldRef.FieldPath
	default:
		return e.Name + "<-(other source)"
	}
}

// resourcesLine: `requests cpu=10m memory=32Mi; limits memory=64Mi`.
func resourcesLine(r corev1.ResourceRequirements) string {
	list := func(l corev1.ResourceList) string {
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, string(k))
		}
		slices.Sort(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			q := l[corev1.ResourceName(k)]
			parts = append(parts, k+"="+q.String())
		}
		return strings.Join(parts, " ")
	}
	return "requests " + list(r.Requests) + "; limits " + list(r.Limits)
}

// securityLine renders the restricted security context of 03 §3.5.
func securityLine(sc *corev1.SecurityContext) string {
	if sc == nil {
		return "(none)"
	}
	val := func(p *int64) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	flag := func(p *bool) string {
		if p == nil {
			return "unset"
		}
		return fmt.Sprint(*p)
	}
	var drop []string
	if sc.Capabilities != nil {
		for _, c := range sc.Capabilities.Drop {
			drop = append(drop, string(c))
		}
	}
	seccomp := "unset"
	if sc.SeccompProfile != nil {
		seccomp = string(sc.SeccompProfile.Type)
	}
	return fmt.Sprintf("runAsUser=%s runAsGroup=%s runAsNonRoot=%s allowPrivilegeEscalation=%s readOnlyRootFilesystem=%s drop=%s seccomp=%s",
		val(sc.RunAsUser), val(sc.RunAsGroup), flag(sc.RunAsNonRoot), flag(sc.AllowPrivilegeEscalation),
		flag(sc.ReadOnlyRootFilesystem), strings.Join(drop, ","), seccomp)
}

// restrictedAs is securityLine's text for an agent running as uid:gid.
func restrictedAs(uid, gid int64) string {
	return fmt.Sprintf("runAsUser=%d runAsGroup=%d runAsNonRoot=true allowPrivilegeEscalation=false readOnlyRootFilesystem=true drop=ALL seccomp=RuntimeDefault", uid, gid)
}

func lines[T any](items []T, line func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, line(it))
	}
	return out
}

func containerNames(cs []corev1.Container) []string {
	return lines(cs, func(c corev1.Container) string { return c.Name })
}

// sharedVolume is the default `dynamic-config` volume (memory medium).
const sharedVolume = "dynamic-config emptyDir medium=Memory sizeLimit=16Mi"

// wantAgent is the watching agent a pod should carry.
type wantAgent struct {
	args      []string
	env       []string // envLine form; nil = no env
	mounts    []string // mountLine form
	resources string   // resourcesLine form
	security  string   // securityLine form
}

// wantInjection is what an injected one-app-container pod must carry.
type wantInjection struct {
	volumes   []string // volumeLine form, in order
	appMounts []string // mountLine form of container "app"
	agent     wantAgent
}

// checkInjected asserts the whole injection on pod: the status mark, the
// volumes, the app mount, exactly one watching agent appended to
// spec.containers with its image, args, env, mounts, resources and security
// context, and no init containers.
func checkInjected(t *testing.T, pod *corev1.Pod, want wantInjection) {
	t.Helper()
	if got := pod.Annotations[statusKey]; got != "injected" {
		t.Errorf("status mark %s = %q; want \"injected\"", statusKey, got)
	}
	equalLines(t, "volumes", lines(pod.Spec.Volumes, volumeLine), want.volumes)
	if got := containerNames(pod.Spec.Containers); !slices.Equal(got, []string{"app", agentName}) {
		t.Fatalf("containers = %q; want [app %s]", got, agentName)
	}
	if got := containerNames(pod.Spec.InitContainers); len(got) != 0 {
		t.Errorf("initContainers = %q; want none", got)
	}
	equalLines(t, "app volumeMounts", lines(pod.Spec.Containers[0].VolumeMounts, mountLine), want.appMounts)

	agent := pod.Spec.Containers[1]
	if agent.Image != builtInImage {
		t.Errorf("agent image = %q; want %q", agent.Image, builtInImage)
	}
	equalLines(t, "agent args", agent.Args, want.agent.args)
	if len(agent.Command) != 0 {
		t.Errorf("agent command = %q; want none", agent.Command)
	}
	equalLines(t, "agent env", lines(agent.Env, envLine), want.agent.env)
	equalLines(t, "agent volumeMounts", lines(agent.VolumeMounts, mountLine), want.agent.mounts)
	if got := resourcesLine(agent.Resources); got != want.agent.resources {
		t.Errorf("agent resources = %q; want %q", got, want.agent.resources)
	}
	if got := securityLine(agent.SecurityContext); got != want.agent.security {
		t.Errorf("agent securityContext = %q; want %q", got, want.agent.security)
	}
	if len(agent.Ports) != 0 || agent.ReadinessProbe != nil {
		t.Errorf("agent has ports %v / readinessProbe %v; want neither (no metrics port resolved)", agent.Ports, agent.ReadinessProbe)
	}
}

// equalLines compares two ordered lists and prints both on a difference.
func equalLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s differ\n got: %q\nwant: %q", what, got, want)
	}
}

// countAgents counts the containers the injection names (03 §1), in
// containers and initContainers.
func countAgents(pod *corev1.Pod) int {
	n := 0
	for _, c := range append(slices.Clone(pod.Spec.Containers), pod.Spec.InitContainers...) {
		if c.Name == agentName || c.Name == initAgentName ||
			strings.HasPrefix(c.Name, agentName+"-") || strings.HasPrefix(c.Name, initAgentName+"-") {
			n++
		}
	}
	return n
}

// watchArg is the value of the agent's --watch argument ("" when absent).
func watchArg(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if c.Name != agentName {
			continue
		}
		for i, a := range c.Args {
			if a == "--watch" && i+1 < len(c.Args) {
				return c.Args[i+1]
			}
		}
	}
	return ""
}
