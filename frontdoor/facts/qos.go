package facts

import (
	corev1 "k8s.io/api/core/v1"

	leanv1 "github.com/dynamic-config-admission/dynamic-config/frontdoor/internal/leanapi/core/v1"
)

// qosResources are the resources the QoS class is computed from.
var qosResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// guaranteed reports whether the pod's QoS class is Guaranteed, as the
// kubelet computes it: every container and init container sets a cpu and a
// memory limit, and its request for each (defaulted to the limit when
// absent) equals the limit.
func guaranteed(spec *leanv1.PodSpec) bool {
	if len(spec.Containers) == 0 {
		return false
	}
	for _, list := range [][]leanv1.Container{spec.Containers, spec.InitContainers} {
		for i := range list {
			if !requestsEqualLimits(&list[i].Resources) {
				return false
			}
		}
	}
	return true
}

func requestsEqualLimits(r *corev1.ResourceRequirements) bool {
	for _, name := range qosResources {
		limit, ok := r.Limits[name]
		if !ok || limit.IsZero() {
			return false
		}
		if request, ok := r.Requests[name]; ok && request.Cmp(limit) != 0 {
			return false
		}
	}
	return true
}
