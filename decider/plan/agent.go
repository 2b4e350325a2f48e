package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
)

// agentContainer builds the full container of one agent (spec 03 §3).
func agentContainer(v *view, kind agentKinds, image string, native bool) decision.AgentContainer {
	watching := kind == watchingAgent
	c := decision.AgentContainer{
		Name:            AgentName(v.name, watching),
		Image:           image,
		Args:            agentArgs(v, kind),
		Env:             agentEnv(v),
		VolumeMounts:    agentMounts(v),
		SecurityContext: securityContext(v),
		Render:          v.name,
	}
	c.Requests, c.Limits = resources(v)
	if watching {
		if port := metricsPort(v); port != 0 {
			c.Ports, c.ReadinessProbe = metricsPortAndProbe(v, port)
		}
		if native {
			c.RestartPolicy = restartPolicyAlways
		}
	}
	return c
}

// metricsPortAndProbe is a watching agent's port and readiness probe
// (spec 03 §3.7): named "metrics" and probed by name on the default render,
// unnamed and probed by number on a named render.
func metricsPortAndProbe(v *view, port int32) ([]decision.ContainerPort, *decision.Probe) {
	p := decision.ContainerPort{ContainerPort: port}
	get := &decision.HTTPGetAction{Path: readinessPath}
	if v.isDefault() {
		p.Name = readinessPortName
		get.PortName = readinessPortName
	} else {
		get.PortNumber = port
	}
	ports := []decision.ContainerPort{p}
	if !v.podIs("readiness") {
		return ports, nil
	}
	return ports, &decision.Probe{
		HTTPGet:          get,
		PeriodSeconds:    readinessPeriodSeconds,
		FailureThreshold: readinessFailureThreshold,
	}
}

// defaultMounts is the default render's agent mount order (spec 03 §3.3);
// knob is the value that makes the volume exist.
var defaultMounts = []struct {
	aux  auxiliary
	knob string
}{
	{auxCA, "ca-configmap"},
	{auxSSH, "ssh-secret"},
	{auxCanary, "canary-configmap"},
	{auxExtra, "extra-secret"},
	{auxClientTLS, "tls-secret"},
	{auxTemplate, "template-configmap"},
	{auxSchema, "schema-configmap"},
}

// namedMounts is a named render's agent mount order (spec 03 §3.3).
var namedMounts = []struct {
	aux  auxiliary
	knob string
}{
	{auxCA, "ca-configmap"},
	{auxSSH, "ssh-secret"},
	{auxClientTLS, "tls-secret"},
	{auxTemplate, "template-configmap"},
}

// agentMounts are the shared volume at <dir>, then the render's auxiliary
// volumes read-only, each when it exists.
func agentMounts(v *view) []decision.VolumeMount {
	rows := namedMounts
	if v.isDefault() {
		rows = defaultMounts
	}
	mounts := make([]decision.VolumeMount, 1, 1+len(rows))
	mounts[0] = decision.VolumeMount{Name: SharedVolumeName, MountPath: v.dir}
	for _, r := range rows {
		if _, ok := v.render.Values[r.knob]; !ok {
			continue
		}
		mounts = append(mounts, decision.VolumeMount{
			Name:      r.aux.volumeName(v.name),
			MountPath: r.aux.mountDir(v.name),
			ReadOnly:  true,
		})
	}
	return mounts
}

// resources are the agent's requests and limits (spec 03 §3.4): pod-wide CPU
// and memory, ephemeral-storage on the default render only.
func resources(v *view) (requests, limits map[string]string) {
	requests = make(map[string]string, 3)
	limits = make(map[string]string, 3)
	requests["cpu"], _ = v.pod("agent-cpu-request")
	requests["memory"], _ = v.pod("agent-memory-request")
	limits["memory"], _ = v.pod("agent-memory-limit")
	if s, ok := v.pod("agent-cpu-limit"); ok {
		limits["cpu"] = s
	}
	if v.isDefault() {
		if s, ok := v.pod("agent-ephemeral-request"); ok {
			requests["ephemeral-storage"] = s
		}
		if s, ok := v.pod("agent-ephemeral-limit"); ok {
			limits["ephemeral-storage"] = s
		}
	}
	return requests, limits
}

// securityContext is the restricted context of every agent (spec 03 §3.5).
func securityContext(v *view) decision.SecurityContext {
	uid, _ := v.pod("agent-run-as-user")
	gid, _ := v.pod("agent-run-as-group")
	return decision.SecurityContext{
		RunAsNonRoot:             true,
		RunAsUser:                int64Value(uid),
		RunAsGroup:               int64Value(gid),
		AllowPrivilegeEscalation: false,
		CapabilitiesDrop:         []string{"ALL"},
		ReadOnlyRootFilesystem:   true,
		SeccompProfileType:       "RuntimeDefault",
	}
}
