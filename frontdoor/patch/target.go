package patch

import (
	"bytes"
	"fmt"
	"slices"

	kjson "sigs.k8s.io/json"

	leanv1 "github.com/dynamic-config-admission/dynamic-config/frontdoor/internal/leanapi/core/v1"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// TargetFor is Target for one plan, given the pod as the front door already
// decoded it (frontdoor/facts): the typed decode answers every member but
// two — whether spec is there at all and whether a container's args member
// is there when it is null — so raw is read again only when the plan needs
// them: a command rewrite looks at the args members, and a pod without
// containers may have no spec. Otherwise the containers' ArgsPresent is left
// false (unused). The result builds the same patch as Target's.
func TargetFor(plan *deciderv1.MutationPlan, pod *leanv1.Pod, raw []byte) (*Pod, error) {
	if pod == nil || plan.GetCommandRewrite() != nil || len(pod.Spec.Containers) == 0 {
		return Target(raw)
	}
	t := &Pod{
		SpecPresent:             true,
		AnnotationsPresent:      pod.Annotations != nil,
		VolumesPresent:          pod.Spec.Volumes != nil,
		ImagePullSecretsPresent: pod.Spec.ImagePullSecrets != nil,
		ContainersPresent:       true,
		InitContainersPresent:   pod.Spec.InitContainers != nil,
		Containers:              make([]Container, len(pod.Spec.Containers)),
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		t.Containers[i] = Container{Name: c.Name, VolumeMountsPresent: c.VolumeMounts != nil, CommandPresent: c.Command != nil}
	}
	return t, nil
}

// Equal reports whether p and q have the same shape: Build writes the same
// operations for a plan against either (the decision cache's handler
// reuses the patch it built for a remembered decision when the next pod of
// the template has its shape).
func (p *Pod) Equal(q *Pod) bool {
	return p.SpecPresent == q.SpecPresent && p.AnnotationsPresent == q.AnnotationsPresent &&
		p.VolumesPresent == q.VolumesPresent && p.ImagePullSecretsPresent == q.ImagePullSecretsPresent &&
		p.ContainersPresent == q.ContainersPresent && p.InitContainersPresent == q.InitContainersPresent &&
		slices.Equal(p.Containers, q.Containers)
}

// Target reads the pod as received (request.object) for the patch: which
// members the ops append to are present and the app containers. It is one
// read of the raw JSON that keeps no values, only presence and names; the
// facts are read elsewhere (frontdoor/facts). Member names match
// case-sensitively, as in the API server's decoding, so every op path built
// from the target exists in the raw JSON.
func Target(raw []byte) (*Pod, error) {
	var doc podShape
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &doc); err != nil {
		return nil, fmt.Errorf("read the pod's shape: %w", err)
	}
	t := &Pod{AnnotationsPresent: bool(doc.Metadata.Annotations)}
	s := doc.Spec
	if s == nil {
		return t, nil
	}
	t.SpecPresent = true
	t.VolumesPresent = bool(s.Volumes)
	t.ImagePullSecretsPresent = bool(s.ImagePullSecrets)
	t.InitContainersPresent = bool(s.InitContainers)
	t.ContainersPresent = s.Containers != nil
	t.Containers = make([]Container, len(s.Containers))
	for i := range s.Containers {
		c := &s.Containers[i]
		t.Containers[i] = Container{
			Name:                c.Name,
			VolumeMountsPresent: bool(c.VolumeMounts),
			CommandPresent:      bool(c.Command),
			ArgsPresent:         bool(c.Args),
		}
	}
	return t, nil
}

// podShape is the part of a pod the patch looks at. Its members decode the
// way the typed k8s.io/api decode does (a later duplicate member wins, a
// null spec is no spec), without keeping any value.
type podShape struct {
	Metadata struct {
		Annotations present `json:"annotations"`
	} `json:"metadata"`
	Spec *struct {
		Volumes          present          `json:"volumes"`
		ImagePullSecrets present          `json:"imagePullSecrets"`
		InitContainers   present          `json:"initContainers"`
		Containers       []containerShape `json:"containers"`
	} `json:"spec"`
}

type containerShape struct {
	Name         string  `json:"name"`
	VolumeMounts present `json:"volumeMounts"`
	Command      present `json:"command"`
	Args         member  `json:"args"`
}

// present records whether the member holds a value: missing and null are
// both absent (a typed decode leaves the slice or map nil for either).
type present bool

// UnmarshalJSON implements json.Unmarshaler.
func (p *present) UnmarshalJSON(b []byte) error {
	*p = present(!bytes.Equal(b, null))
	return nil
}

// member records whether the member is there at all, null included: the
// command rewrite replaces an args member and adds a missing one.
type member bool

// UnmarshalJSON implements json.Unmarshaler.
func (m *member) UnmarshalJSON([]byte) error {
	*m = true
	return nil
}

var null = []byte("null")
