package outdated

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/plan"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// The agent part of a pod (spec 10 §8): the agent containers, the volumes
// and the mounts the injection added, read back from a pod into the plan's
// own types, so that the comparison of spec 10 §3 (rollout.Compare) names
// what differs as it does between two decisions. A running pod and a
// template the engine just injected are read by the same reader; what the
// reader skips — the fields the API server defaults (imagePullPolicy, the
// probes' timeouts, a fieldRef's apiVersion, a configMap volume's mode) —
// is skipped on both sides, and quantities are compared in their canonical
// form (the API server stores 1000m as 1).

// AgentPart reads the agent part of pod: every agent container (by its
// name, spec 03 §1) in its list, the volumes named dynamic-config and
// dynamic-config-*, and the shared volume's mounts into the app
// containers. A pod without any is an empty plan.
func AgentPart(pod *corev1.Pod) *decision.Plan {
	p := &decision.Plan{}
	for _, l := range []struct {
		list       decision.ContainerList
		containers []corev1.Container
	}{{decision.ListInitContainers, pod.Spec.InitContainers}, {decision.ListContainers, pod.Spec.Containers}} {
		for i := range l.containers {
			if c := &l.containers[i]; IsAgent(c.Name) {
				p.Agents = append(p.Agents, decision.AgentPlacement{List: l.list, Position: decision.PositionAppend, Container: agentContainer(c)})
			}
		}
	}
	for i := range pod.Spec.Volumes {
		if v := &pod.Spec.Volumes[i]; isAgentVolume(v.Name) {
			p.Volumes = append(p.Volumes, volume(v))
		}
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if IsAgent(c.Name) {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == plan.SharedVolumeName {
				p.AppMounts = append(p.AppMounts, decision.AppMount{ContainerIndex: int32(i), ContainerName: c.Name, Mount: mount(m)}) //nolint:gosec // a pod's container count fits
			}
		}
	}
	return p
}

// Diff compares the agent part of a running pod with the agent part the
// active installation would write now (spec 10 §3 on the agent's part):
// the paths that differ, none when they are the same.
func Diff(running, now *decision.Plan) []string {
	inject := func(p *decision.Plan) *decision.Decision {
		return &decision.Decision{Outcome: decision.OutcomeInject, Plan: p}
	}
	return rollout.Compare(inject(running), inject(now)).Paths
}

// IsAgent reports whether a container name is an agent's (spec 03 §1):
// dynamic-config-agent, dynamic-config-init, or either with -<render>.
func IsAgent(name string) bool {
	for _, base := range []string{plan.WatchingAgentName, plan.InitAgentName} {
		if name == base || strings.HasPrefix(name, base+"-") {
			return true
		}
	}
	return false
}

// isAgentVolume reports whether a volume name is one the injection adds.
func isAgentVolume(name string) bool {
	return name == plan.SharedVolumeName || strings.HasPrefix(name, plan.SharedVolumeName+"-")
}

// Uninjected is pod without what the injection added — the status mark and
// the revision stamp, the agent containers, their volumes and the app
// containers' mounts of them — for a pod with no template to read (a bare
// pod, or a controller the audit does not know): the pod as it was asked
// for, near enough to decide its agent part again. The env-inject command
// rewrite and an added pull secret are left as they are: neither is the
// agent part.
func Uninjected(pod *corev1.Pod) *corev1.Pod {
	out := pod.DeepCopy()
	delete(out.Annotations, annotation.Prefix+"status")
	delete(out.Annotations, annotation.RevisionStampKey)
	notAgent := func(c corev1.Container) bool { return IsAgent(c.Name) }
	out.Spec.InitContainers = slices.DeleteFunc(out.Spec.InitContainers, notAgent)
	out.Spec.Containers = slices.DeleteFunc(out.Spec.Containers, notAgent)
	out.Spec.Volumes = slices.DeleteFunc(out.Spec.Volumes, func(v corev1.Volume) bool { return isAgentVolume(v.Name) })
	for i := range out.Spec.Containers {
		out.Spec.Containers[i].VolumeMounts = slices.DeleteFunc(out.Spec.Containers[i].VolumeMounts,
			func(m corev1.VolumeMount) bool { return isAgentVolume(m.Name) })
	}
	return out
}

func agentContainer(c *corev1.Container) decision.AgentContainer {
	a := decision.AgentContainer{
		Name: c.Name, Image: c.Image, Args: c.Args, Render: render(c.Name),
		Requests: quantities(c.Resources.Requests), Limits: quantities(c.Resources.Limits),
		ReadinessProbe: probe(c.ReadinessProbe),
	}
	if c.RestartPolicy != nil {
		a.RestartPolicy = string(*c.RestartPolicy)
	}
	for _, e := range c.Env {
		a.Env = append(a.Env, envVar(e))
	}
	for _, m := range c.VolumeMounts {
		a.VolumeMounts = append(a.VolumeMounts, mount(m))
	}
	for _, p := range c.Ports {
		a.Ports = append(a.Ports, decision.ContainerPort{ContainerPort: p.ContainerPort, Name: p.Name})
	}
	if sc := c.SecurityContext; sc != nil {
		a.SecurityContext = decision.SecurityContext{
			RunAsNonRoot: deref(sc.RunAsNonRoot), RunAsUser: deref(sc.RunAsUser), RunAsGroup: deref(sc.RunAsGroup),
			AllowPrivilegeEscalation: deref(sc.AllowPrivilegeEscalation), ReadOnlyRootFilesystem: deref(sc.ReadOnlyRootFilesystem),
		}
		if sc.Capabilities != nil {
			for _, d := range sc.Capabilities.Drop {
				a.SecurityContext.CapabilitiesDrop = append(a.SecurityContext.CapabilitiesDrop, string(d))
			}
		}
		if sc.SeccompProfile != nil {
			a.SecurityContext.SeccompProfileType = string(sc.SeccompProfile.Type)
		}
	}
	return a
}

// render is the render an agent name stands for ("" = the default render).
func render(name string) string {
	for _, base := range []string{plan.WatchingAgentName, plan.InitAgentName} {
		if r, ok := strings.CutPrefix(name, base+"-"); ok {
			return r
		}
	}
	return ""
}

func envVar(e corev1.EnvVar) decision.AgentEnvVar {
	v := decision.AgentEnvVar{Name: e.Name}
	switch {
	case e.ValueFrom == nil:
		v.Value = &e.Value
	case e.ValueFrom.SecretKeyRef != nil:
		v.SecretKeyRef = &decision.SecretKeyRef{Name: e.ValueFrom.SecretKeyRef.Name, Key: e.ValueFrom.SecretKeyRef.Key}
	case e.ValueFrom.FieldRef != nil:
		v.FieldRef = &decision.FieldRef{FieldPath: e.ValueFrom.FieldRef.FieldPath}
	}
	return v
}

func mount(m corev1.VolumeMount) decision.VolumeMount {
	return decision.VolumeMount{Name: m.Name, MountPath: m.MountPath, ReadOnly: m.ReadOnly}
}

func volume(v *corev1.Volume) decision.Volume {
	out := decision.Volume{Name: v.Name}
	switch {
	case v.EmptyDir != nil:
		out.EmptyDir = &decision.EmptyDirVolume{Medium: string(v.EmptyDir.Medium)}
		if v.EmptyDir.SizeLimit != nil {
			out.EmptyDir.SizeLimit = v.EmptyDir.SizeLimit.String()
		}
	case v.ConfigMap != nil:
		out.ConfigMap = &decision.ConfigMapVolume{Name: v.ConfigMap.Name}
	case v.Secret != nil:
		out.Secret = &decision.SecretVolume{SecretName: v.Secret.SecretName, DefaultMode: deref(v.Secret.DefaultMode)}
	}
	return out
}

func probe(p *corev1.Probe) *decision.Probe {
	if p == nil {
		return nil
	}
	out := &decision.Probe{PeriodSeconds: p.PeriodSeconds, FailureThreshold: p.FailureThreshold}
	switch {
	case p.HTTPGet != nil:
		out.HTTPGet = &decision.HTTPGetAction{Path: p.HTTPGet.Path, PortName: p.HTTPGet.Port.StrVal}
		if p.HTTPGet.Port.StrVal == "" {
			out.HTTPGet.PortNumber = p.HTTPGet.Port.IntVal
		}
	case p.Exec != nil:
		out.Exec = &decision.ExecAction{Command: p.Exec.Command}
	}
	return out
}

// quantities writes each quantity in its canonical form.
func quantities(l corev1.ResourceList) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]string, len(l))
	for name, q := range l {
		out[string(name)] = q.String()
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
