package facts

import (
	"fmt"
	"sort"

	leanv1 "github.com/dynamic-config-admission/dynamic-config/frontdoor/internal/leanapi/core/v1"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// ObjectError says the object could not be decoded as its declared kind; the
// front door answers DynamicConfigMalformed (spec 04 §6).
type ObjectError struct {
	Kind string
	Err  error
}

func (e *ObjectError) Error() string {
	return fmt.Sprintf("the object could not be read as a %s: %v", e.Kind, e.Err)
}

func (e *ObjectError) Unwrap() error { return e.Err }

// Object is one decoded admitted object and its facts.
type Object struct {
	Kind  *Kind
	Facts *deciderv1.PodFacts
	// Pod is the decoded Pod (kind Pod only), so that the inject leg
	// decodes it once: the patch builds its own target from it and the raw
	// object (patch.TargetFor).
	Pod *leanv1.Pod
}

// templateHolder is a workload decoded down to its pod template: the only
// part of it the decider reads, besides the workload's own metadata.
type templateHolder interface {
	meta() *leanv1.ObjectMeta
	template() *leanv1.PodTemplateSpec
}

// appsWorkload covers Deployment, StatefulSet, DaemonSet, ReplicaSet and Job:
// spec.template.
type appsWorkload struct {
	Metadata leanv1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Template leanv1.PodTemplateSpec `json:"template"`
	} `json:"spec"`
}

func newAppsWorkload() templateHolder                     { return &appsWorkload{} }
func (w *appsWorkload) meta() *leanv1.ObjectMeta          { return &w.Metadata }
func (w *appsWorkload) template() *leanv1.PodTemplateSpec { return &w.Spec.Template }

// replicationController: spec.template is optional.
type replicationController struct {
	Metadata leanv1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Template *leanv1.PodTemplateSpec `json:"template"`
	} `json:"spec"`
}

func newReplicationController() templateHolder            { return &replicationController{} }
func (w *replicationController) meta() *leanv1.ObjectMeta { return &w.Metadata }
func (w *replicationController) template() *leanv1.PodTemplateSpec {
	if w.Spec.Template == nil {
		return &leanv1.PodTemplateSpec{}
	}
	return w.Spec.Template
}

// cronJob: spec.jobTemplate.spec.template.
type cronJob struct {
	Metadata leanv1.ObjectMeta `json:"metadata"`
	Spec     struct {
		JobTemplate struct {
			Spec struct {
				Template leanv1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		} `json:"jobTemplate"`
	} `json:"spec"`
}

func newCronJob() templateHolder                     { return &cronJob{} }
func (w *cronJob) meta() *leanv1.ObjectMeta          { return &w.Metadata }
func (w *cronJob) template() *leanv1.PodTemplateSpec { return &w.Spec.JobTemplate.Spec.Template }

// Decode decodes raw (request.object, or request.oldObject) as kind and
// extracts its facts. An object above the pod caps (internal/podcaps) is
// refused before anything of it is decoded (count.go).
// Every failure is an *ObjectError.
func Decode(req *review.Request, kind *Kind, raw []byte) (*Object, error) {
	f := &deciderv1.PodFacts{
		Operation:    operation(req.Operation),
		DryRun:       req.IsDryRun(),
		ResourceKind: kind.Resource,
		RequestUid:   req.UID,
		UserName:     req.UserInfo.Username,
	}
	obj := &Object{Kind: kind, Facts: f}
	if err := checkCaps(kind, raw); err != nil {
		return nil, &ObjectError{Kind: kind.Name, Err: err}
	}
	var meta *leanv1.ObjectMeta
	if kind.IsPod() {
		pod := &leanv1.Pod{}
		if err := unmarshal(raw, pod); err != nil {
			return nil, &ObjectError{Kind: kind.Name, Err: err}
		}
		obj.Pod = pod
		meta = &pod.ObjectMeta
		f.Annotations = prefixed(pod.Annotations)
		fromPodSpec(&pod.Spec, f)
	} else {
		w := kind.template()
		if err := unmarshal(raw, w); err != nil {
			return nil, &ObjectError{Kind: kind.Name, Err: err}
		}
		meta = w.meta()
		tmpl := w.template()
		f.Annotations = prefixed(tmpl.Annotations)
		f.WorkloadAnnotationKeys = prefixedKeys(meta.Annotations)
		fromPodSpec(&tmpl.Spec, f)
	}
	f.Name = meta.Name
	f.GenerateName = meta.GenerateName
	f.Labels = meta.Labels
	f.Controller = controller(meta.OwnerReferences)
	f.Namespace = req.Namespace
	if f.Namespace == "" {
		f.Namespace = meta.Namespace
	}
	return obj, nil
}

func operation(op string) deciderv1.Operation {
	switch op {
	case "CREATE":
		return deciderv1.Operation_OPERATION_CREATE
	case "UPDATE":
		return deciderv1.Operation_OPERATION_UPDATE
	case "DELETE":
		return deciderv1.Operation_OPERATION_DELETE
	case "CONNECT":
		return deciderv1.Operation_OPERATION_CONNECT
	}
	return deciderv1.Operation_OPERATION_UNSPECIFIED
}

// controller is the owner reference marked controller: true (nil when there
// is none; the API server allows at most one).
func controller(refs []leanv1.OwnerReference) *deciderv1.ControllerRef {
	for i := range refs {
		if r := &refs[i]; r.Controller != nil && *r.Controller {
			return &deciderv1.ControllerRef{Kind: r.Kind, Name: r.Name}
		}
	}
	return nil
}

// prefixed keeps only the dynamic-config.rs/ keys (nil when there are none).
func prefixed(annotations map[string]string) map[string]string {
	var out map[string]string
	for k, v := range annotations {
		if annotation.Prefixed(k) {
			if out == nil {
				out = make(map[string]string)
			}
			out[k] = v
		}
	}
	return out
}

// prefixedKeys lists the dynamic-config.rs/ keys, sorted (names only).
func prefixedKeys(annotations map[string]string) []string {
	var keys []string
	for k := range annotations {
		if annotation.Prefixed(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func fromPodSpec(spec *leanv1.PodSpec, f *deciderv1.PodFacts) {
	if n := len(spec.Containers); n > 0 {
		f.Containers = make([]*deciderv1.Container, n)
		for i := range spec.Containers {
			f.Containers[i] = appContainer(&spec.Containers[i])
		}
	}
	if n := len(spec.InitContainers); n > 0 {
		f.InitContainers = make([]*deciderv1.Container, n)
		for i := range spec.InitContainers {
			c := &spec.InitContainers[i]
			f.InitContainers[i] = &deciderv1.Container{Name: c.Name, Env: env(c.Env), VolumeMountPaths: mountPaths(c.VolumeMounts)}
		}
	}
	if n := len(spec.EphemeralContainers); n > 0 {
		f.EphemeralContainers = make([]*deciderv1.Container, n)
		for i := range spec.EphemeralContainers {
			c := &spec.EphemeralContainers[i]
			f.EphemeralContainers[i] = &deciderv1.Container{Name: c.Name, Env: env(c.Env)}
		}
	}
	if sc := spec.SecurityContext; sc != nil {
		f.RunAsUser, f.RunAsGroup, f.FsGroup = sc.RunAsUser, sc.RunAsGroup, sc.FSGroup
		f.SupplementalGroups = sc.SupplementalGroups
	}
	f.TerminationGracePeriodSeconds = spec.TerminationGracePeriodSeconds
	f.RestartPolicy = string(spec.RestartPolicy)
	f.AutomountServiceAccountToken = spec.AutomountServiceAccountToken
	f.QosGuaranteed = guaranteed(spec)
	for i := range spec.Volumes {
		f.VolumeNames = append(f.VolumeNames, spec.Volumes[i].Name)
	}
	for i := range spec.ImagePullSecrets {
		f.ImagePullSecretNames = append(f.ImagePullSecretNames, spec.ImagePullSecrets[i].Name)
	}
}

func appContainer(c *leanv1.Container) *deciderv1.Container {
	out := &deciderv1.Container{
		Name:             c.Name,
		HasCommand:       len(c.Command) > 0,
		Command:          c.Command,
		HasArgs:          c.Args != nil, // the member is present and not null
		Args:             c.Args,
		HasLivenessProbe: bool(c.LivenessProbe),
		Env:              env(c.Env),
		VolumeMountPaths: mountPaths(c.VolumeMounts),
	}
	if c.SecurityContext != nil {
		out.RunAsUser, out.RunAsGroup = c.SecurityContext.RunAsUser, c.SecurityContext.RunAsGroup
	}
	return out
}

func env(vars []leanv1.EnvVar) []*deciderv1.EnvVar {
	if len(vars) == 0 {
		return nil
	}
	out := make([]*deciderv1.EnvVar, len(vars))
	for i := range vars {
		v := &vars[i]
		e := &deciderv1.EnvVar{Name: v.Name}
		if v.ValueFrom {
			e.ValueFrom = true
		} else {
			value := v.Value
			e.Value = &value
		}
		out[i] = e
	}
	return out
}

func mountPaths(mounts []leanv1.VolumeMount) []string {
	if len(mounts) == 0 {
		return nil
	}
	out := make([]string, len(mounts))
	for i := range mounts {
		out[i] = mounts[i].MountPath
	}
	return out
}
