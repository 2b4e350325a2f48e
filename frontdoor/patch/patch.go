// Package patch turns the decider's mutation plan into RFC 6902 JSON Patch
// operations against the pod JSON the front door actually received (spec 03
// §4). The ops are written explicitly from the plan, in the order of 03
// §4.2: no templating, no diffing, no JSON Patch library.
package patch

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpointer"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/podcaps"
)

// Pod is what the patch needs to know about the pod as received: which of
// the arrays and objects it appends to are present (a member that is missing
// or null is absent) and the app containers' names.
type Pod struct {
	// SpecPresent reports spec; a pod without one cannot be patched.
	SpecPresent bool
	// AnnotationsPresent reports metadata.annotations.
	AnnotationsPresent bool
	// VolumesPresent reports spec.volumes.
	VolumesPresent bool
	// ImagePullSecretsPresent reports spec.imagePullSecrets.
	ImagePullSecretsPresent bool
	// ContainersPresent reports spec.containers.
	ContainersPresent bool
	// InitContainersPresent reports spec.initContainers.
	InitContainersPresent bool
	// Containers are spec.containers, in order.
	Containers []Container
}

// Container is one app container of spec.containers.
type Container struct {
	Name string
	// VolumeMountsPresent reports the volumeMounts member.
	VolumeMountsPresent bool
	// CommandPresent reports the command member.
	CommandPresent bool
	// ArgsPresent reports the args member, whatever its value (null included).
	ArgsPresent bool
}

// UnfitError says that the plan does not fit the pod (a container index or
// name mismatch, an element without content): an unusable answer (spec 04 §5).
type UnfitError struct{ msg string }

func (e *UnfitError) Error() string { return e.msg }

func unfit(format string, args ...any) error {
	return &UnfitError{fmt.Sprintf(format, args...)}
}

// TooManyOpsError says that the plan would take more operations than one
// JSON Patch may hold (podcaps.MaxPatchOps, the API server's own bound on a
// client's patch): the pod is too large to patch (issue 38), which refuses
// it as malformed — the decider is fine.
type TooManyOpsError struct{}

func (*TooManyOpsError) Error() string {
	return fmt.Sprintf("the pod is too large to patch: its plan takes more than %d JSON Patch operations, the most the API server accepts in one patch", podcaps.MaxPatchOps)
}

// Op is one operation. Its members are declared in ascending byte order of
// their JSON names (op, path, value); Value is the value's compact JSON, nil
// for remove.
type Op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Patch is the result: the compact JSON array and its ops.
type Patch struct {
	Ops  []Op
	JSON []byte
}

// Base64 is the standard base64 encoding (with padding) of the compact JSON,
// the AdmissionResponse's patch.
func (p *Patch) Base64() string { return base64.StdEncoding.EncodeToString(p.JSON) }

// Paths of the pod members the ops touch.
const (
	pathAnnotations      = "/metadata/annotations"
	pathVolumes          = "/spec/volumes"
	pathContainers       = "/spec/containers"
	pathInitContainers   = "/spec/initContainers"
	pathImagePullSecrets = "/spec/imagePullSecrets"
)

// Build writes the ops for plan against pod. Every error is an *UnfitError.
func Build(plan *deciderv1.MutationPlan, pod *Pod) (*Patch, error) {
	if plan == nil {
		return nil, unfit("the inject decision carries no plan")
	}
	if !pod.SpecPresent {
		return nil, unfit("the pod has no spec to patch")
	}
	b := builder{pod: pod, ops: make([]Op, 0, 16)}
	// The operations in the order of spec 03 §4: the status annotation (and
	// the revision stamp, spec 10 §8),
	// volumes, app mounts (ascending container index, the plan's order), the
	// image pull secret, env-inject's command rewrite, the agents.
	for _, part := range []func(*deciderv1.MutationPlan) error{
		b.statusAnnotation, b.volumes, b.appMounts, b.pullSecret, b.commandRewrite, b.agents,
	} {
		if err := part(plan); err != nil {
			return nil, err
		}
		if b.tooMany {
			return nil, &TooManyOpsError{}
		}
	}
	raw, err := encodeOps(b.ops) // compact, sorted members, no HTML escaping (03 §4.4)
	if err != nil {
		return nil, unfit("encode the patch: %v", err)
	}
	return &Patch{Ops: b.ops, JSON: raw}, nil
}

// statusAnnotation adds the status mark (creating the annotations map when
// the pod has none) and the revision stamp.
func (b *builder) statusAnnotation(plan *deciderv1.MutationPlan) error {
	sa := plan.GetStatusAnnotation()
	if sa.GetKey() == "" {
		return unfit("the plan carries no status annotation")
	}
	if !b.pod.AnnotationsPresent {
		b.add(pathAnnotations, emptyObject)
	}
	b.add(pathAnnotations+"/"+jsonpointer.EscapeToken(sa.GetKey()), stringValue(sa.GetValue())) // RFC 6901
	// The revision stamp beside it (spec 10 §8); an older decider's plan has none.
	if rs := plan.GetRevisionAnnotation(); rs.GetKey() != "" {
		b.add(pathAnnotations+"/"+jsonpointer.EscapeToken(rs.GetKey()), stringValue(rs.GetValue()))
	}
	return nil
}

// volumes appends the plan's volumes.
func (b *builder) volumes(plan *deciderv1.MutationPlan) error {
	for i, v := range plan.GetVolumes() {
		if b.tooMany {
			return nil
		}
		value, err := volume(v)
		if err != nil {
			return unfit("volume %d of the plan: %v", i, err)
		}
		b.appendTo(pathVolumes, b.pod.VolumesPresent, value)
	}
	return nil
}

// appMounts appends the shared volume's mount to the app containers.
func (b *builder) appMounts(plan *deciderv1.MutationPlan) error {
	for _, m := range plan.GetAppMounts() {
		if b.tooMany {
			return nil
		}
		c, err := b.container(m.GetContainerIndex(), m.GetContainerName(), "app mount")
		if err != nil {
			return err
		}
		if m.GetMount() == nil {
			return unfit("the app mount for container %q carries no mount", m.GetContainerName())
		}
		b.appendTo(containerPath(m.GetContainerIndex())+"/volumeMounts", c.VolumeMountsPresent, mount(m.GetMount()))
	}
	return nil
}

// pullSecret appends the agent image's pull secret.
func (b *builder) pullSecret(plan *deciderv1.MutationPlan) error {
	if s := plan.GetImagePullSecret(); s != "" {
		b.appendTo(pathImagePullSecrets, b.pod.ImagePullSecretsPresent, nameOnly(s))
	}
	return nil
}

// commandRewrite replaces env-inject's target command (dropping its args)
// and adds the restart probe.
func (b *builder) commandRewrite(plan *deciderv1.MutationPlan) error {
	rw := plan.GetCommandRewrite()
	if rw == nil {
		return nil
	}
	c, err := b.container(rw.GetContainerIndex(), rw.GetContainerName(), "command rewrite")
	if err != nil {
		return err
	}
	if !c.CommandPresent {
		return unfit("the command rewrite targets container %q, which has no command to replace", c.Name)
	}
	if len(rw.GetCommand()) == 0 {
		return unfit("the command rewrite for container %q carries no command", c.Name)
	}
	base := containerPath(rw.GetContainerIndex())
	b.op("replace", base+"/command", stringList(rw.GetCommand()))
	if c.ArgsPresent {
		b.op("remove", base+"/args", nil)
	}
	if p := rw.GetLivenessProbe(); p != nil {
		value, err := probe(p)
		if err != nil {
			return unfit("the liveness probe for container %q: %v", c.Name, err)
		}
		b.add(base+"/livenessProbe", value)
	}
	return nil
}

// agents adds the agent containers in plan order, each to its list and position.
func (b *builder) agents(plan *deciderv1.MutationPlan) error {
	for i, a := range plan.GetAgents() {
		if b.tooMany {
			return nil
		}
		value, err := agent(a.GetContainer())
		if err != nil {
			return unfit("agent %d of the plan: %v", i, err)
		}
		var list string
		var present bool
		switch a.GetList() {
		case deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS:
			list, present = pathContainers, b.pod.ContainersPresent
		case deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS:
			list, present = pathInitContainers, b.pod.InitContainersPresent
		default:
			return unfit("agent %d of the plan names no container list", i)
		}
		switch a.GetPosition() {
		case deciderv1.Position_POSITION_APPEND:
			b.appendTo(list, present, value)
		case deciderv1.Position_POSITION_FIRST:
			b.ensureArray(list, present)
			b.add(list+"/0", value)
		default:
			return unfit("agent %d of the plan names no position", i)
		}
	}
	return nil
}

// encodeOps writes the ops as encoding/json writes []Op: op, path, then the
// value unless nil.
func encodeOps(ops []Op) ([]byte, error) {
	size := 2
	for i := range ops {
		size += 32 + len(ops[i].Path) + len(ops[i].Value)
	}
	out := make([]byte, 0, size)
	out = append(out, '[')
	for i := range ops {
		op := &ops[i]
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"op":`...)
		out = jsonout.AppendString(out, op.Op)
		out = append(out, `,"path":`...)
		out = jsonout.AppendString(out, op.Path)
		if op.Value != nil {
			out = append(out, `,"value":`...)
			out = append(out, op.Value...)
		}
		out = append(out, '}')
	}
	return append(out, ']'), nil
}

type builder struct {
	pod     *Pod
	ops     []Op
	created map[string]bool // absent arrays this patch already created
	tooMany bool            // an op above podcaps.MaxPatchOps was asked for
}

// op appends one operation; past podcaps.MaxPatchOps it appends nothing and
// marks the patch too large (Build refuses it after the part).
func (b *builder) op(op, path string, value json.RawMessage) {
	if len(b.ops) >= podcaps.MaxPatchOps {
		b.tooMany = true
		return
	}
	b.ops = append(b.ops, Op{Op: op, Path: path, Value: value})
}

func (b *builder) add(path string, value json.RawMessage) { b.op("add", path, value) }

// ensureArray emits "add <path> []" once per patch for an absent array.
func (b *builder) ensureArray(path string, present bool) {
	if present || b.created[path] {
		return
	}
	if b.created == nil {
		b.created = map[string]bool{}
	}
	b.created[path] = true
	b.add(path, emptyArray)
}

func (b *builder) appendTo(path string, present bool, value json.RawMessage) {
	b.ensureArray(path, present)
	b.add(path+"/-", value)
}

// container verifies that index i of spec.containers exists and is named name.
func (b *builder) container(i int32, name, what string) (*Container, error) {
	if i < 0 || int(i) >= len(b.pod.Containers) {
		return nil, unfit("the %s targets container %d (%q), but the pod has %d containers", what, i, name, len(b.pod.Containers))
	}
	c := &b.pod.Containers[i]
	if c.Name != name {
		return nil, unfit("the %s targets container %d as %q, but the pod's container %d is %q", what, i, name, i, c.Name)
	}
	return c, nil
}

func containerPath(i int32) string {
	return pathContainers + "/" + strconv.Itoa(int(i))
}
