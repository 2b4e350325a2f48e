package plan

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// qosResources are the resources the QoS class is computed from.
var qosResources = []string{"cpu", "memory"}

// guaranteedShape reports whether an agent with these resources keeps a
// Guaranteed pod Guaranteed: a cpu and a memory limit, each equal to its request.
func guaranteedShape(requests, limits map[string]string) bool {
	for _, r := range qosResources {
		limit, ok := limits[r]
		if !ok || !sameQuantity(requests[r], limit) {
			return false
		}
	}
	return true
}

// matchGuaranteed gives the agent requests = limits for cpu and memory (the
// installation's matchGuaranteed on a Guaranteed pod, issue 20): the limit
// where one is set, else the request.
func matchGuaranteed(requests, limits map[string]string) {
	for _, r := range qosResources {
		value, ok := limits[r]
		if !ok {
			value = requests[r]
		}
		requests[r], limits[r] = value, value
	}
}

// sameQuantity compares two Kubernetes quantities by value ("1" = "1000m").
func sameQuantity(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := resource.ParseQuantity(a)
	y, errB := resource.ParseQuantity(b)
	return errA == nil && errB == nil && x.Cmp(y) == 0
}
