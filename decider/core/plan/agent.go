package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
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
			if native && startupProbed(v) {
				c.StartupProbe = &decision.Probe{HTTPGet: readyz(v, port),
					PeriodSeconds: startupPeriodSeconds, FailureThreshold: startupFailureThreshold}
			}
		}
		if native {
			c.RestartPolicy = restartPolicyAlways
		}
	}
	return c
}

// metricsPortAndProbe is a watching agent's port and readiness probe
// (spec 03 §3.7): named "metrics" on the default render, unnamed on a named
// render.
func metricsPortAndProbe(v *view, port int32) ([]decision.ContainerPort, *decision.Probe) {
	p := decision.ContainerPort{ContainerPort: port}
	if v.isDefault() {
		p.Name = readinessPortName
	}
	ports := []decision.ContainerPort{p}
	if !v.podIs(registry.Readiness) {
		return ports, nil
	}
	return ports, &decision.Probe{
		HTTPGet:          readyz(v, port),
		PeriodSeconds:    readinessPeriodSeconds,
		FailureThreshold: readinessFailureThreshold,
	}
}

// readyz is the agent's /readyz on its metrics port (spec 03 §3.7): by the
// port's name on the default render, by number on a named render.
func readyz(v *view, port int32) *decision.HTTPGetAction {
	if v.isDefault() {
		return &decision.HTTPGetAction{Path: readinessPath, PortName: readinessPortName}
	}
	return &decision.HTTPGetAction{Path: readinessPath, PortNumber: port}
}

// startupProbed reports whether a native sidecar with a metrics port gets
// the startup probe (issue 40): readiness "false" turns off both probes on
// /readyz, and with require-ack "true" /readyz waits for the app's
// acknowledgement, which an app that has not started cannot give.
func startupProbed(v *view) bool {
	return v.podIs(registry.Readiness) && !(v.isDefault() && v.podIs(registry.RequireAck))
}

// defaultMounts is the default render's agent mount order (spec 03 §3.3);
// knob is the value that makes the volume exist.
var defaultMounts = []struct {
	aux  auxiliary
	knob registry.ID
}{
	{auxCA, registry.CAConfigMap},
	{auxSSH, registry.SSHSecret},
	{auxCanary, registry.CanaryConfigMap},
	{auxExtra, registry.ExtraSecret},
	{auxClientTLS, registry.TLSSecret},
	{auxTemplate, registry.TemplateConfigMap},
	{auxSchema, registry.SchemaConfigMap},
}

// namedMounts is a named render's agent mount order (spec 03 §3.3).
var namedMounts = []struct {
	aux  auxiliary
	knob registry.ID
}{
	{auxCA, registry.CAConfigMap},
	{auxSSH, registry.SSHSecret},
	{auxClientTLS, registry.TLSSecret},
	{auxTemplate, registry.TemplateConfigMap},
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
		if !v.render.Values.Has(r.knob) {
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
// and memory, ephemeral-storage on the default render only; on a Guaranteed
// pod under the installation's matchGuaranteed, cpu and memory requests
// equal to the limits (issue 20).
func resources(v *view) (requests, limits map[string]string) {
	requests, limits = configuredResources(v)
	if v.in.pod().QoSGuaranteed && installationOf(v.in).MatchGuaranteed {
		matchGuaranteed(requests, limits)
	}
	return requests, limits
}

// configuredResources are the agent's requests and limits as the knobs resolved them.
func configuredResources(v *view) (requests, limits map[string]string) {
	requests = make(map[string]string, 3)
	limits = make(map[string]string, 3)
	requests["cpu"], _ = v.pod(registry.AgentCPURequest)
	requests["memory"], _ = v.pod(registry.AgentMemoryRequest)
	limits["memory"], _ = v.pod(registry.AgentMemoryLimit)
	if s, ok := v.pod(registry.AgentCPULimit); ok {
		limits["cpu"] = s
	}
	if v.isDefault() {
		if s, ok := v.pod(registry.AgentEphemeralRequest); ok {
			requests["ephemeral-storage"] = s
		}
		if s, ok := v.pod(registry.AgentEphemeralLimit); ok {
			limits["ephemeral-storage"] = s
		}
	}
	return requests, limits
}

// securityContext is the restricted context of every agent (spec 03 §3.5).
func securityContext(v *view) decision.SecurityContext {
	// the grammar holds both to 1–2147483647
	uid, _ := v.podNumber(registry.AgentRunAsUser)
	gid, _ := v.podNumber(registry.AgentRunAsGroup)
	return decision.SecurityContext{
		RunAsNonRoot:             true,
		RunAsUser:                int64(uid),
		RunAsGroup:               int64(gid),
		AllowPrivilegeEscalation: false,
		CapabilitiesDrop:         []string{"ALL"},
		ReadOnlyRootFilesystem:   true,
		SeccompProfileType:       "RuntimeDefault",
	}
}
