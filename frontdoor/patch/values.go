package patch

import (
	"errors"
	"fmt"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// The op values are built as map[string]any, which encoding/json writes with
// member names in ascending byte order (spec 03 §4.4). Unset members are left
// out: no null, no empty array or object. Integers stay Go integers so they
// are written as JSON numbers; quantities and the port name stay strings.

func volume(v *deciderv1.Volume) (map[string]any, error) {
	if v.GetName() == "" {
		return nil, errors.New("no name")
	}
	out := map[string]any{"name": v.GetName()}
	switch {
	case v.GetEmptyDir() != nil:
		ed := map[string]any{}
		putString(ed, "medium", v.GetEmptyDir().GetMedium())
		putString(ed, "sizeLimit", v.GetEmptyDir().GetSizeLimit())
		out["emptyDir"] = ed
	case v.GetConfigMap() != nil:
		if v.GetConfigMap().GetName() == "" {
			return nil, fmt.Errorf("volume %q: configMap without a name", v.GetName())
		}
		out["configMap"] = map[string]any{"name": v.GetConfigMap().GetName()}
	case v.GetSecret() != nil:
		if v.GetSecret().GetSecretName() == "" {
			return nil, fmt.Errorf("volume %q: secret without a secretName", v.GetName())
		}
		s := map[string]any{"secretName": v.GetSecret().GetSecretName()}
		if m := v.GetSecret().GetDefaultMode(); m != 0 {
			s["defaultMode"] = m
		}
		out["secret"] = s
	default:
		return nil, fmt.Errorf("volume %q has no source", v.GetName())
	}
	return out, nil
}

func mount(m *deciderv1.VolumeMount) map[string]any {
	out := map[string]any{"mountPath": m.GetMountPath(), "name": m.GetName()}
	if m.GetReadOnly() {
		out["readOnly"] = true
	}
	return out
}

func agent(c *deciderv1.AgentContainer) (map[string]any, error) {
	if c == nil {
		return nil, errors.New("no container")
	}
	if c.GetName() == "" || c.GetImage() == "" {
		return nil, errors.New("a container needs a name and an image")
	}
	out := map[string]any{"name": c.GetName(), "image": c.GetImage()}
	if len(c.GetArgs()) > 0 {
		out["args"] = stringList(c.GetArgs())
	}
	if len(c.GetEnv()) > 0 {
		env := make([]any, 0, len(c.GetEnv()))
		for _, e := range c.GetEnv() {
			v, err := envVar(e)
			if err != nil {
				return nil, fmt.Errorf("container %q: %w", c.GetName(), err)
			}
			env = append(env, v)
		}
		out["env"] = env
	}
	if len(c.GetPorts()) > 0 {
		ports := make([]any, 0, len(c.GetPorts()))
		for _, p := range c.GetPorts() {
			port := map[string]any{"containerPort": p.GetContainerPort()}
			putString(port, "name", p.GetName())
			ports = append(ports, port)
		}
		out["ports"] = ports
	}
	if p := c.GetReadinessProbe(); p != nil {
		v, err := probe(p)
		if err != nil {
			return nil, fmt.Errorf("container %q: readiness probe: %w", c.GetName(), err)
		}
		out["readinessProbe"] = v
	}
	if r := c.GetResources(); r != nil {
		res := map[string]any{}
		if len(r.GetLimits()) > 0 {
			res["limits"] = stringMap(r.GetLimits())
		}
		if len(r.GetRequests()) > 0 {
			res["requests"] = stringMap(r.GetRequests())
		}
		if len(res) > 0 {
			out["resources"] = res
		}
	}
	putString(out, "restartPolicy", c.GetRestartPolicy())
	if sc := c.GetSecurityContext(); sc != nil {
		out["securityContext"] = securityContext(sc)
	}
	if len(c.GetVolumeMounts()) > 0 {
		mounts := make([]any, 0, len(c.GetVolumeMounts()))
		for _, m := range c.GetVolumeMounts() {
			mounts = append(mounts, mount(m))
		}
		out["volumeMounts"] = mounts
	}
	return out, nil
}

func envVar(e *deciderv1.AgentEnvVar) (map[string]any, error) {
	if e.GetName() == "" {
		return nil, errors.New("an env entry without a name")
	}
	out := map[string]any{"name": e.GetName()}
	switch s := e.GetSource().(type) {
	case *deciderv1.AgentEnvVar_Value:
		out["value"] = s.Value
	case *deciderv1.AgentEnvVar_SecretKeyRef:
		out["valueFrom"] = map[string]any{"secretKeyRef": map[string]any{
			"key": s.SecretKeyRef.GetKey(), "name": s.SecretKeyRef.GetName()}}
	case *deciderv1.AgentEnvVar_FieldRef:
		out["valueFrom"] = map[string]any{"fieldRef": map[string]any{
			"fieldPath": s.FieldRef.GetFieldPath()}}
	}
	return out, nil
}

// securityContext renders all seven members, false values included (06 §4).
func securityContext(sc *deciderv1.SecurityContext) map[string]any {
	drop := stringList(sc.GetCapabilitiesDrop())
	return map[string]any{
		"allowPrivilegeEscalation": sc.GetAllowPrivilegeEscalation(),
		"capabilities":             map[string]any{"drop": drop},
		"readOnlyRootFilesystem":   sc.GetReadOnlyRootFilesystem(),
		"runAsGroup":               sc.GetRunAsGroup(),
		"runAsNonRoot":             sc.GetRunAsNonRoot(),
		"runAsUser":                sc.GetRunAsUser(),
		"seccompProfile":           map[string]any{"type": sc.GetSeccompProfileType()},
	}
}

func probe(p *deciderv1.Probe) (map[string]any, error) {
	out := map[string]any{}
	switch h := p.GetHandler().(type) {
	case *deciderv1.Probe_HttpGet:
		get := map[string]any{}
		putString(get, "path", h.HttpGet.GetPath())
		switch port := h.HttpGet.GetPort().(type) {
		case *deciderv1.HttpGetAction_PortName:
			get["port"] = port.PortName
		case *deciderv1.HttpGetAction_PortNumber:
			get["port"] = port.PortNumber
		default:
			return nil, errors.New("an httpGet probe without a port")
		}
		out["httpGet"] = get
	case *deciderv1.Probe_Exec:
		if len(h.Exec.GetCommand()) == 0 {
			return nil, errors.New("an exec probe without a command")
		}
		out["exec"] = map[string]any{"command": stringList(h.Exec.GetCommand())}
	default:
		return nil, errors.New("a probe without a handler")
	}
	if v := p.GetPeriodSeconds(); v != 0 {
		out["periodSeconds"] = v
	}
	if v := p.GetFailureThreshold(); v != 0 {
		out["failureThreshold"] = v
	}
	return out, nil
}

func putString(m map[string]any, key, value string) {
	if value != "" {
		m[key] = value
	}
}

// stringMap is a string-to-string object value, written with its members
// in ascending order, as it is.
func stringMap(in map[string]string) map[string]string { return in }
