package patch

// The patch builder as it was before its values were written as JSON
// directly (issue 11): map[string]any values through encoding/json. FuzzBuild
// holds Build's bytes to this reference's.

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpointer"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// refOp is the reference's op, encoded by encoding/json.
type refOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Build writes the ops for plan against pod. Every error is an *UnfitError.
func referenceBuild(plan *deciderv1.MutationPlan, pod *Pod) ([]byte, error) {
	if plan == nil {
		return nil, unfit("the inject decision carries no plan")
	}
	if !pod.SpecPresent {
		return nil, unfit("the pod has no spec to patch")
	}
	b := refBuilder{pod: pod}

	// 1. The status annotation.
	sa := plan.GetStatusAnnotation()
	if sa.GetKey() == "" {
		return nil, unfit("the plan carries no status annotation")
	}
	if !pod.AnnotationsPresent {
		b.add(pathAnnotations, map[string]any{})
	}
	b.add(pathAnnotations+"/"+jsonpointer.EscapeToken(sa.GetKey()), sa.GetValue()) // RFC 6901

	// 2. Volumes.
	for i, v := range plan.GetVolumes() {
		value, err := refVolume(v)
		if err != nil {
			return nil, unfit("volume %d of the plan: %v", i, err)
		}
		b.appendTo(pathVolumes, pod.VolumesPresent, value)
	}

	// 3. App mounts, ascending container index (the plan's order).
	for _, m := range plan.GetAppMounts() {
		c, err := b.container(m.GetContainerIndex(), m.GetContainerName(), "app mount")
		if err != nil {
			return nil, err
		}
		if m.GetMount() == nil {
			return nil, unfit("the app mount for container %q carries no mount", m.GetContainerName())
		}
		b.appendTo(refContainerPath(m.GetContainerIndex())+"/volumeMounts", c.VolumeMountsPresent, refMount(m.GetMount()))
	}

	// 4. The image pull secret.
	if s := plan.GetImagePullSecret(); s != "" {
		b.appendTo(pathImagePullSecrets, pod.ImagePullSecretsPresent, map[string]any{"name": s})
	}

	// 5. The command rewrite of env-inject.
	if rw := plan.GetCommandRewrite(); rw != nil {
		c, err := b.container(rw.GetContainerIndex(), rw.GetContainerName(), "command rewrite")
		if err != nil {
			return nil, err
		}
		if !c.CommandPresent {
			return nil, unfit("the command rewrite targets container %q, which has no command to replace", c.Name)
		}
		if len(rw.GetCommand()) == 0 {
			return nil, unfit("the command rewrite for container %q carries no command", c.Name)
		}
		base := refContainerPath(rw.GetContainerIndex())
		b.op("replace", base+"/command", refStringList(rw.GetCommand()))
		if c.ArgsPresent {
			b.op("remove", base+"/args", nil)
		}
		if p := rw.GetLivenessProbe(); p != nil {
			value, err := refProbe(p)
			if err != nil {
				return nil, unfit("the liveness probe for container %q: %v", c.Name, err)
			}
			b.add(base+"/livenessProbe", value)
		}
	}

	// 6. Agents, in plan order.
	for i, a := range plan.GetAgents() {
		value, err := refAgent(a.GetContainer())
		if err != nil {
			return nil, unfit("agent %d of the plan: %v", i, err)
		}
		var list string
		var present bool
		switch a.GetList() {
		case deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS:
			list, present = pathContainers, pod.ContainersPresent
		case deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS:
			list, present = pathInitContainers, pod.InitContainersPresent
		default:
			return nil, unfit("agent %d of the plan names no container list", i)
		}
		switch a.GetPosition() {
		case deciderv1.Position_POSITION_APPEND:
			b.appendTo(list, present, value)
		case deciderv1.Position_POSITION_FIRST:
			b.ensureArray(list, present)
			b.add(list+"/0", value)
		default:
			return nil, unfit("agent %d of the plan names no position", i)
		}
	}

	raw, err := jsonout.Marshal(b.ops) // compact, sorted members, no HTML escaping (03 §4.4)
	if err != nil {
		return nil, unfit("encode the patch: %v", err)
	}
	return raw, nil
}

type refBuilder struct {
	pod     *Pod
	ops     []refOp
	created map[string]bool // absent arrays this patch already created
}

func (b *refBuilder) op(op, path string, value any) {
	b.ops = append(b.ops, refOp{Op: op, Path: path, Value: value})
}

func (b *refBuilder) add(path string, value any) { b.op("add", path, value) }

// ensureArray emits "add <path> []" once per patch for an absent array.
func (b *refBuilder) ensureArray(path string, present bool) {
	if present || b.created[path] {
		return
	}
	if b.created == nil {
		b.created = map[string]bool{}
	}
	b.created[path] = true
	b.add(path, []any{})
}

func (b *refBuilder) appendTo(path string, present bool, value any) {
	b.ensureArray(path, present)
	b.add(path+"/-", value)
}

// container verifies that index i of spec.containers exists and is named name.
func (b *refBuilder) container(i int32, name, what string) (*Container, error) {
	if i < 0 || int(i) >= len(b.pod.Containers) {
		return nil, unfit("the %s targets container %d (%q), but the pod has %d containers", what, i, name, len(b.pod.Containers))
	}
	c := &b.pod.Containers[i]
	if c.Name != name {
		return nil, unfit("the %s targets container %d as %q, but the pod's container %d is %q", what, i, name, i, c.Name)
	}
	return c, nil
}

func refContainerPath(i int32) string {
	return pathContainers + "/" + strconv.Itoa(int(i))
}

func refStringList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func refVolume(v *deciderv1.Volume) (map[string]any, error) {
	if v.GetName() == "" {
		return nil, errors.New("no name")
	}
	out := map[string]any{"name": v.GetName()}
	switch {
	case v.GetEmptyDir() != nil:
		ed := map[string]any{}
		refPutString(ed, "medium", v.GetEmptyDir().GetMedium())
		refPutString(ed, "sizeLimit", v.GetEmptyDir().GetSizeLimit())
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

func refMount(m *deciderv1.VolumeMount) map[string]any {
	out := map[string]any{"mountPath": m.GetMountPath(), "name": m.GetName()}
	if m.GetReadOnly() {
		out["readOnly"] = true
	}
	return out
}

func refAgent(c *deciderv1.AgentContainer) (map[string]any, error) {
	if c == nil {
		return nil, errors.New("no container")
	}
	if c.GetName() == "" || c.GetImage() == "" {
		return nil, errors.New("a container needs a name and an image")
	}
	out := map[string]any{"name": c.GetName(), "image": c.GetImage()}
	if len(c.GetArgs()) > 0 {
		out["args"] = refStringList(c.GetArgs())
	}
	if len(c.GetEnv()) > 0 {
		env := make([]any, 0, len(c.GetEnv()))
		for _, e := range c.GetEnv() {
			v, err := refEnvVar(e)
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
			refPutString(port, "name", p.GetName())
			ports = append(ports, port)
		}
		out["ports"] = ports
	}
	if p := c.GetReadinessProbe(); p != nil {
		v, err := refProbe(p)
		if err != nil {
			return nil, fmt.Errorf("container %q: readiness probe: %w", c.GetName(), err)
		}
		out["readinessProbe"] = v
	}
	if p := c.GetStartupProbe(); p != nil {
		v, err := refProbe(p)
		if err != nil {
			return nil, fmt.Errorf("container %q: startup probe: %w", c.GetName(), err)
		}
		out["startupProbe"] = v
	}
	if r := c.GetResources(); r != nil {
		res := map[string]any{}
		if len(r.GetLimits()) > 0 {
			res["limits"] = refStringMap(r.GetLimits())
		}
		if len(r.GetRequests()) > 0 {
			res["requests"] = refStringMap(r.GetRequests())
		}
		if len(res) > 0 {
			out["resources"] = res
		}
	}
	refPutString(out, "restartPolicy", c.GetRestartPolicy())
	if sc := c.GetSecurityContext(); sc != nil {
		out["securityContext"] = refSecurityContext(sc)
	}
	if len(c.GetVolumeMounts()) > 0 {
		mounts := make([]any, 0, len(c.GetVolumeMounts()))
		for _, m := range c.GetVolumeMounts() {
			mounts = append(mounts, refMount(m))
		}
		out["volumeMounts"] = mounts
	}
	return out, nil
}

func refEnvVar(e *deciderv1.AgentEnvVar) (map[string]any, error) {
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
func refSecurityContext(sc *deciderv1.SecurityContext) map[string]any {
	drop := refStringList(sc.GetCapabilitiesDrop())
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

func refProbe(p *deciderv1.Probe) (map[string]any, error) {
	out := map[string]any{}
	switch h := p.GetHandler().(type) {
	case *deciderv1.Probe_HttpGet:
		get := map[string]any{}
		refPutString(get, "path", h.HttpGet.GetPath())
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
		out["exec"] = map[string]any{"command": refStringList(h.Exec.GetCommand())}
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

func refPutString(m map[string]any, key, value string) {
	if value != "" {
		m[key] = value
	}
}

func refStringMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
