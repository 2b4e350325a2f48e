package facts

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// corev1Decode is the decode the front door did before issue 25, kept as the
// reference the lean decode (pod.go) is proven against: the whole object
// into the k8s.io/api types, the facts read from them.
func corev1Decode(req *review.Request, kind *Kind, raw []byte) (*deciderv1.PodFacts, error) {
	f := &deciderv1.PodFacts{
		Operation:    operation(req.Operation),
		DryRun:       req.IsDryRun(),
		ResourceKind: kind.Resource,
		RequestUid:   req.UID,
		UserName:     req.UserInfo.Username,
	}
	var meta *metav1.ObjectMeta
	if kind.IsPod() {
		pod := &corev1.Pod{}
		if err := unmarshal(raw, pod); err != nil {
			return nil, err
		}
		meta = &pod.ObjectMeta
		f.Annotations = prefixed(pod.Annotations)
		corev1FromPodSpec(&pod.Spec, f)
	} else {
		var w struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				Template    *corev1.PodTemplateSpec `json:"template"`
				JobTemplate struct {
					Spec struct {
						Template corev1.PodTemplateSpec `json:"template"`
					} `json:"spec"`
				} `json:"jobTemplate"`
			} `json:"spec"`
		}
		if err := unmarshal(raw, &w); err != nil {
			return nil, err
		}
		meta = &w.Metadata
		tmpl := w.Spec.Template
		if kind.Resource == deciderv1.ResourceKind_RESOURCE_KIND_CRON_JOB {
			tmpl = &w.Spec.JobTemplate.Spec.Template
		} else if tmpl == nil {
			tmpl = &corev1.PodTemplateSpec{}
		}
		f.Annotations = prefixed(tmpl.Annotations)
		f.WorkloadAnnotationKeys = prefixedKeys(meta.Annotations)
		corev1FromPodSpec(&tmpl.Spec, f)
	}
	f.Name = meta.Name
	f.GenerateName = meta.GenerateName
	f.Labels = meta.Labels
	if c := metav1.GetControllerOfNoCopy(meta); c != nil {
		f.Controller = &deciderv1.ControllerRef{Kind: c.Kind, Name: c.Name}
	}
	f.Namespace = req.Namespace
	if f.Namespace == "" {
		f.Namespace = meta.Namespace
	}
	return f, nil
}

func corev1FromPodSpec(spec *corev1.PodSpec, f *deciderv1.PodFacts) {
	for i := range spec.Containers {
		c := &spec.Containers[i]
		out := &deciderv1.Container{
			Name: c.Name, HasCommand: len(c.Command) > 0, Command: c.Command, HasArgs: c.Args != nil, Args: c.Args,
			HasLivenessProbe: c.LivenessProbe != nil, Env: corev1Env(c.Env), VolumeMountPaths: corev1Mounts(c.VolumeMounts),
		}
		if c.SecurityContext != nil {
			out.RunAsUser, out.RunAsGroup = c.SecurityContext.RunAsUser, c.SecurityContext.RunAsGroup
		}
		f.Containers = append(f.Containers, out)
	}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		f.InitContainers = append(f.InitContainers, &deciderv1.Container{Name: c.Name, Env: corev1Env(c.Env), VolumeMountPaths: corev1Mounts(c.VolumeMounts)})
	}
	for i := range spec.EphemeralContainers {
		c := &spec.EphemeralContainers[i]
		f.EphemeralContainers = append(f.EphemeralContainers, &deciderv1.Container{Name: c.Name, Env: corev1Env(c.Env)})
	}
	if sc := spec.SecurityContext; sc != nil {
		f.RunAsUser, f.RunAsGroup, f.FsGroup, f.SupplementalGroups = sc.RunAsUser, sc.RunAsGroup, sc.FSGroup, sc.SupplementalGroups
	}
	f.TerminationGracePeriodSeconds = spec.TerminationGracePeriodSeconds
	f.RestartPolicy = string(spec.RestartPolicy)
	f.AutomountServiceAccountToken = spec.AutomountServiceAccountToken
	f.QosGuaranteed = corev1Guaranteed(spec)
	for i := range spec.Volumes {
		f.VolumeNames = append(f.VolumeNames, spec.Volumes[i].Name)
	}
	for i := range spec.ImagePullSecrets {
		f.ImagePullSecretNames = append(f.ImagePullSecretNames, spec.ImagePullSecrets[i].Name)
	}
}

func corev1Env(vars []corev1.EnvVar) []*deciderv1.EnvVar {
	var out []*deciderv1.EnvVar
	for i := range vars {
		v := &vars[i]
		e := &deciderv1.EnvVar{Name: v.Name}
		if v.ValueFrom != nil {
			e.ValueFrom = true
		} else {
			value := v.Value
			e.Value = &value
		}
		out = append(out, e)
	}
	return out
}

func corev1Mounts(mounts []corev1.VolumeMount) []string {
	var out []string
	for i := range mounts {
		out = append(out, mounts[i].MountPath)
	}
	return out
}

func corev1Guaranteed(spec *corev1.PodSpec) bool {
	if len(spec.Containers) == 0 {
		return false
	}
	for _, list := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range list {
			r := &list[i].Resources
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				limit, ok := r.Limits[name]
				if !ok || limit.IsZero() {
					return false
				}
				if request, ok := r.Requests[name]; ok && request.Cmp(limit) != 0 {
					return false
				}
			}
		}
	}
	return true
}
