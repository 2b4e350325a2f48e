// Package facts reads the admitted object and extracts the PodFacts the
// decider decides on (spec 06 §2, 07 §3.2 steps 2–6). The object is decoded
// once, into the members of the core/v1 types the facts and the patch read
// (frontdoor/internal/leanapi/core/v1); only the dynamic-config.rs/
// annotations are forwarded.
package facts

import (
	"bytes"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// Kind is one kind the front door routes.
type Kind struct {
	// Resource is the decider's resource kind.
	Resource deciderv1.ResourceKind
	// Name is the kind as Kubernetes spells it (Pod, Deployment, …): the
	// {Kind} of the messages.
	Name string
	// template says where the pod template sits; nil for a Pod.
	template func() templateHolder
}

// IsPod reports whether the kind is Pod.
func (k *Kind) IsPod() bool { return k.Resource == deciderv1.ResourceKind_RESOURCE_KIND_POD }

var (
	kindPod = &Kind{Resource: deciderv1.ResourceKind_RESOURCE_KIND_POD, Name: "Pod"}
	// validateKinds are the kinds /validate routes (spec 01 §8.2 V2), by group/kind.
	validateKinds = map[[2]string]*Kind{
		{"", "Pod"}:                   kindPod,
		{"", "ReplicationController"}: {Resource: deciderv1.ResourceKind_RESOURCE_KIND_REPLICATION_CONTROLLER, Name: "ReplicationController", template: newReplicationController},
		{"apps", "Deployment"}:        {Resource: deciderv1.ResourceKind_RESOURCE_KIND_DEPLOYMENT, Name: "Deployment", template: newAppsWorkload},
		{"apps", "StatefulSet"}:       {Resource: deciderv1.ResourceKind_RESOURCE_KIND_STATEFUL_SET, Name: "StatefulSet", template: newAppsWorkload},
		{"apps", "DaemonSet"}:         {Resource: deciderv1.ResourceKind_RESOURCE_KIND_DAEMON_SET, Name: "DaemonSet", template: newAppsWorkload},
		{"apps", "ReplicaSet"}:        {Resource: deciderv1.ResourceKind_RESOURCE_KIND_REPLICA_SET, Name: "ReplicaSet", template: newAppsWorkload},
		{"batch", "Job"}:              {Resource: deciderv1.ResourceKind_RESOURCE_KIND_JOB, Name: "Job", template: newAppsWorkload},
		{"batch", "CronJob"}:          {Resource: deciderv1.ResourceKind_RESOURCE_KIND_CRON_JOB, Name: "CronJob", template: newCronJob},
	}
)

// MutateKind returns the Pod kind when the request is about a Pod (group
// "", kind Pod), else nil: /mutate allows everything else without an RPC (A2).
func MutateKind(req *review.Request) *Kind {
	if req.Kind.Group == "" && req.Kind.Kind == "Pod" {
		return kindPod
	}
	return nil
}

// ValidateKind returns the routed kind of the request, or nil when /validate
// does not judge it (V2). The pods/ephemeralcontainers subresource arrives
// as kind Pod.
func ValidateKind(req *review.Request) *Kind {
	return validateKinds[[2]string{req.Kind.Group, req.Kind.Kind}]
}

// HasPrefixedAnnotation reads metadata.annotations of raw leniently: nothing
// else of the object is looked at, and annotation values may have any type.
// It reports whether any key starts with the prefix (A3, 04 §6). The keys
// are read in place, never decoded into a map: it answers for an object the
// decode refused, above the caps included (count.go).
func HasPrefixedAnnotation(raw []byte) bool {
	return MayHavePrefixedAnnotation(raw) && hasPrefixedKey(raw)
}

// MayHavePrefixedAnnotation is HasPrefixedAnnotation's first step, a byte
// scan: false when the prefix appears nowhere in raw and no escape could
// spell it — the common case, answered without decoding.
func MayHavePrefixedAnnotation(raw []byte) bool {
	return bytes.Contains(raw, []byte(annotation.Prefix)) || bytes.Contains(raw, []byte(`\`))
}
