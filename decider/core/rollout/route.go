package rollout

import (
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
)

// Route is which installation answers one admission under a rollout.
type Route int

// Routes.
const (
	// RouteShadow: the active answers; the candidate was only compared.
	RouteShadow Route = iota
	// RouteCanary: the workload is in the slice; the candidate answers.
	RouteCanary
	// RouteFallback: the workload is in the slice and the candidate newly
	// refuses it under guard.newRefusals: fallback — the active answers and
	// the rollout halts (spec 10 §4).
	RouteFallback
)

// String names the route as the decision log line and the audit annotation
// write it.
func (r Route) String() string {
	switch r {
	case RouteCanary:
		return "canary"
	case RouteFallback:
		return "fallback"
	}
	return "shadow"
}

// InSlice reports whether the workload of key gets the candidate's answer
// in canary (spec 10 §2, §4, §6): its cluster canaries — listed in
// canary.clusters, or any cluster, a leader's or a follower's, when the
// list is absent — and the workload is in a named namespace or its key's
// bucket is below the percentage. Every pod of one workload has one key,
// so one answer.
func (s *Slice) InSlice(key workload.Key) bool {
	if s.Clusters != nil {
		if _, listed := slices.BinarySearch(s.Clusters, key.Cluster); !listed {
			return false
		}
	}
	if _, named := slices.BinarySearch(s.Namespaces, key.Namespace); named {
		return true
	}
	return s.Buckets > 0 && key.Bucket() < s.Buckets
}

// Route says who answers the admission of the workload of key, given the
// comparison's result and whether this replica has halted the rollout:
// shadow unless the stage is canary, the rollout is not halted and the
// workload is in the slice; then canary, unless the candidate newly refuses
// under guard fallback.
func (r *Rollout) Route(key workload.Key, halted bool, result Result) Route {
	if r.Stage != StageCanary || halted || !r.Slice.InSlice(key) {
		return RouteShadow
	}
	if result == NewlyRefused && r.Guard == GuardFallback {
		return RouteFallback
	}
	return RouteCanary
}
