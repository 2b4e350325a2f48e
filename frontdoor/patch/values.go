package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// The op values are written as compact JSON directly, member names in
// ascending byte order (spec 03 §4.4) — the order of the calls below. Unset
// members are left out: no null, no empty array or object. Integers are
// JSON numbers; quantities and the port name are strings. FuzzBuild holds
// the bytes to encoding/json's for the same values (reference_test.go).

// object writes one JSON object member by member; the caller adds members
// in ascending byte order of their names.
type object struct {
	b []byte
	n int
}

func newObject(sizeHint int) *object { return &object{b: append(make([]byte, 0, sizeHint), '{')} }

func (o *object) name(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = jsonout.AppendString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *object) str(k, v string) {
	o.name(k)
	o.b = jsonout.AppendString(o.b, v)
}

// strIf writes a string member only when it is not empty.
func (o *object) strIf(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *object) int(k string, v int64) {
	o.name(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *object) bool(k string, v bool) {
	o.name(k)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *object) raw(k string, v []byte) {
	o.name(k)
	o.b = append(o.b, v...)
}

func (o *object) strings(k string, v []string) {
	o.name(k)
	o.b = jsonout.AppendStrings(o.b, v)
}

func (o *object) done() json.RawMessage { return append(o.b, '}') }

// emptyObject and emptyArray are the values that create an absent member.
var (
	emptyObject = json.RawMessage(`{}`)
	emptyArray  = json.RawMessage(`[]`)
)

func stringValue(s string) json.RawMessage { return jsonout.AppendString(nil, s) }

// stringList is a string array value: a JSON array, never null.
func stringList(ss []string) json.RawMessage { return jsonout.AppendStrings(nil, ss) }

func nameOnly(name string) json.RawMessage {
	o := newObject(16 + len(name))
	o.str("name", name)
	return o.done()
}

func volume(v *deciderv1.Volume) (json.RawMessage, error) {
	if v.GetName() == "" {
		return nil, errors.New("no name")
	}
	o := newObject(96)
	switch {
	case v.GetEmptyDir() != nil:
		ed := newObject(48)
		ed.strIf("medium", v.GetEmptyDir().GetMedium())
		ed.strIf("sizeLimit", v.GetEmptyDir().GetSizeLimit())
		o.raw("emptyDir", ed.done())
		o.str("name", v.GetName())
	case v.GetConfigMap() != nil:
		if v.GetConfigMap().GetName() == "" {
			return nil, fmt.Errorf("volume %q: configMap without a name", v.GetName())
		}
		o.raw("configMap", nameOnly(v.GetConfigMap().GetName()))
		o.str("name", v.GetName())
	case v.GetSecret() != nil:
		if v.GetSecret().GetSecretName() == "" {
			return nil, fmt.Errorf("volume %q: secret without a secretName", v.GetName())
		}
		s := newObject(64)
		if m := v.GetSecret().GetDefaultMode(); m != 0 {
			s.int("defaultMode", int64(m))
		}
		s.str("secretName", v.GetSecret().GetSecretName())
		o.str("name", v.GetName())
		o.raw("secret", s.done())
	default:
		return nil, fmt.Errorf("volume %q has no source", v.GetName())
	}
	return o.done(), nil
}

func mount(m *deciderv1.VolumeMount) json.RawMessage {
	o := newObject(80)
	o.str("mountPath", m.GetMountPath())
	o.str("name", m.GetName())
	if m.GetReadOnly() {
		o.bool("readOnly", true)
	}
	return o.done()
}

func agent(c *deciderv1.AgentContainer) (json.RawMessage, error) {
	if c == nil {
		return nil, errors.New("no container")
	}
	if c.GetName() == "" || c.GetImage() == "" {
		return nil, errors.New("a container needs a name and an image")
	}
	o := newObject(1024)
	if len(c.GetArgs()) > 0 {
		o.strings("args", c.GetArgs())
	}
	if len(c.GetEnv()) > 0 {
		env := []byte{'['}
		for i, e := range c.GetEnv() {
			v, err := envVar(e)
			if err != nil {
				return nil, fmt.Errorf("container %q: %w", c.GetName(), err)
			}
			if i > 0 {
				env = append(env, ',')
			}
			env = append(env, v...)
		}
		o.raw("env", append(env, ']'))
	}
	o.str("image", c.GetImage())
	o.str("name", c.GetName())
	if len(c.GetPorts()) > 0 {
		ports := []byte{'['}
		for i, p := range c.GetPorts() {
			if i > 0 {
				ports = append(ports, ',')
			}
			port := newObject(48)
			port.int("containerPort", int64(p.GetContainerPort()))
			port.strIf("name", p.GetName())
			ports = append(ports, port.done()...)
		}
		o.raw("ports", append(ports, ']'))
	}
	if p := c.GetReadinessProbe(); p != nil {
		v, err := probe(p)
		if err != nil {
			return nil, fmt.Errorf("container %q: readiness probe: %w", c.GetName(), err)
		}
		o.raw("readinessProbe", v)
	}
	if r := c.GetResources(); r != nil && (len(r.GetLimits()) > 0 || len(r.GetRequests()) > 0) {
		res := newObject(96)
		if len(r.GetLimits()) > 0 {
			res.name("limits")
			res.b = jsonout.AppendStringMap(res.b, r.GetLimits())
		}
		if len(r.GetRequests()) > 0 {
			res.name("requests")
			res.b = jsonout.AppendStringMap(res.b, r.GetRequests())
		}
		o.raw("resources", res.done())
	}
	o.strIf("restartPolicy", c.GetRestartPolicy())
	if sc := c.GetSecurityContext(); sc != nil {
		o.raw("securityContext", securityContext(sc))
	}
	if p := c.GetStartupProbe(); p != nil {
		v, err := probe(p)
		if err != nil {
			return nil, fmt.Errorf("container %q: startup probe: %w", c.GetName(), err)
		}
		o.raw("startupProbe", v)
	}
	if len(c.GetVolumeMounts()) > 0 {
		mounts := []byte{'['}
		for i, m := range c.GetVolumeMounts() {
			if i > 0 {
				mounts = append(mounts, ',')
			}
			mounts = append(mounts, mount(m)...)
		}
		o.raw("volumeMounts", append(mounts, ']'))
	}
	return o.done(), nil
}

func envVar(e *deciderv1.AgentEnvVar) (json.RawMessage, error) {
	if e.GetName() == "" {
		return nil, errors.New("an env entry without a name")
	}
	o := newObject(96)
	o.str("name", e.GetName())
	switch s := e.GetSource().(type) {
	case *deciderv1.AgentEnvVar_Value:
		o.str("value", s.Value)
	case *deciderv1.AgentEnvVar_SecretKeyRef:
		ref := newObject(64)
		ref.str("key", s.SecretKeyRef.GetKey())
		ref.str("name", s.SecretKeyRef.GetName())
		from := newObject(80)
		from.raw("secretKeyRef", ref.done())
		o.raw("valueFrom", from.done())
	case *deciderv1.AgentEnvVar_FieldRef:
		ref := newObject(48)
		ref.str("fieldPath", s.FieldRef.GetFieldPath())
		from := newObject(64)
		from.raw("fieldRef", ref.done())
		o.raw("valueFrom", from.done())
	}
	return o.done(), nil
}

// securityContext writes all seven members, false values included (06 §4).
func securityContext(sc *deciderv1.SecurityContext) json.RawMessage {
	o := newObject(256)
	o.bool("allowPrivilegeEscalation", sc.GetAllowPrivilegeEscalation())
	caps := newObject(32)
	caps.strings("drop", nonNil(sc.GetCapabilitiesDrop()))
	o.raw("capabilities", caps.done())
	o.bool("readOnlyRootFilesystem", sc.GetReadOnlyRootFilesystem())
	o.int("runAsGroup", sc.GetRunAsGroup())
	o.bool("runAsNonRoot", sc.GetRunAsNonRoot())
	o.int("runAsUser", sc.GetRunAsUser())
	seccomp := newObject(32)
	seccomp.str("type", sc.GetSeccompProfileType())
	o.raw("seccompProfile", seccomp.done())
	return o.done()
}

func probe(p *deciderv1.Probe) (json.RawMessage, error) {
	o := newObject(128)
	var exec, httpGet json.RawMessage
	switch h := p.GetHandler().(type) {
	case *deciderv1.Probe_HttpGet:
		get := newObject(64)
		get.strIf("path", h.HttpGet.GetPath())
		switch port := h.HttpGet.GetPort().(type) {
		case *deciderv1.HttpGetAction_PortName:
			get.str("port", port.PortName)
		case *deciderv1.HttpGetAction_PortNumber:
			get.int("port", int64(port.PortNumber))
		default:
			return nil, errors.New("an httpGet probe without a port")
		}
		httpGet = get.done()
	case *deciderv1.Probe_Exec:
		if len(h.Exec.GetCommand()) == 0 {
			return nil, errors.New("an exec probe without a command")
		}
		cmd := newObject(64)
		cmd.strings("command", h.Exec.GetCommand())
		exec = cmd.done()
	default:
		return nil, errors.New("a probe without a handler")
	}
	if exec != nil {
		o.raw("exec", exec)
	}
	if v := p.GetFailureThreshold(); v != 0 {
		o.int("failureThreshold", int64(v))
	}
	if httpGet != nil {
		o.raw("httpGet", httpGet)
	}
	if v := p.GetPeriodSeconds(); v != 0 {
		o.int("periodSeconds", int64(v))
	}
	return o.done(), nil
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
