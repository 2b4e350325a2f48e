// Package workload names the workload an admitted object belongs to (spec 10
// §1): the key cluster/namespace/kind/name of the pod's controller, so that
// every pod of one workload — across a Deployment's ReplicaSets, a CronJob's
// Jobs — shares one key. The decider's rollouts slice and report by it; the
// audit of the pods a revision left behind groups by it.
//
// The key is read from the object alone (its kind, names, labels and
// controller owner reference), never from the API server, so the decider,
// the offline doors and the pod audit all name a workload the same way.
package workload

import (
	"hash/fnv"
	"strings"
)

// Key is a workload key: cluster/namespace/kind/name.
type Key struct {
	Cluster   string
	Namespace string
	Kind      string
	Name      string
}

// String writes the key as cluster/namespace/kind/name.
func (k Key) String() string {
	return k.Cluster + "/" + k.Namespace + "/" + k.Kind + "/" + k.Name
}

// Buckets is how many slices Bucket cuts the key space into: a percentage
// of workloads is percent × 100 buckets (spec 10 §2).
const Buckets = 10_000

// Bucket is the key's stable place among Buckets: FNV-1a 64 of String(),
// modulo Buckets (spec 10 §2). Every replica of every decider, and every
// pod of one workload, computes the same bucket.
func (k Key) Bucket() int {
	h := fnv.New64a()
	h.Write([]byte(k.String())) //nolint:errcheck // hash.Hash never fails
	return int(h.Sum64() % Buckets)
}

// Object is what a key is read from: the admitted object's own kind and
// names, its labels, and its controller owner reference.
type Object struct {
	Namespace    string
	Kind         string // the object's own kind: Pod, Deployment, Job, …
	Name         string
	GenerateName string
	Labels       map[string]string
	// ControllerKind and ControllerName are the owner reference marked
	// controller: true ("" when the object has none).
	ControllerKind string
	ControllerName string
}

// Controller kinds and labels the rules read.
const (
	kindPod        = "Pod"
	kindReplicaSet = "ReplicaSet"
	kindDeployment = "Deployment"
	kindJob        = "Job"
	kindCronJob    = "CronJob"
	// podTemplateHashLabel is the label the Deployment controller puts on
	// its ReplicaSets and their pods; the ReplicaSet is named
	// <deployment>-<hash>.
	podTemplateHashLabel = "pod-template-hash"
	// cronJobSuffixDigits is the least number of digits of the suffix the
	// CronJob controller gives its Jobs: <cronjob>-<scheduled time in
	// minutes since the epoch>, eight digits since 1989.
	cronJobSuffixDigits = 8
)

// Of names o's workload in cluster:
//   - a controller ReplicaSet named <deployment>-<pod-template-hash> (the
//     object carries that label): the Deployment;
//   - a controller Job named <cronjob>-<digits> (at least eight, the
//     scheduled minute the CronJob controller appends): the CronJob;
//   - any other controller: the controller itself (StatefulSet, DaemonSet,
//     a Job or ReplicaSet of its own, a custom controller);
//   - no controller, a Pod: its generateName, else its name;
//   - no controller, any other kind: the object itself.
func Of(cluster string, o Object) Key {
	key := Key{Cluster: cluster, Namespace: o.Namespace}
	switch {
	case o.ControllerKind == kindReplicaSet:
		key.Kind, key.Name = kindReplicaSet, o.ControllerName
		if deployment, ok := cutHashSuffix(o.ControllerName, o.Labels[podTemplateHashLabel]); ok {
			key.Kind, key.Name = kindDeployment, deployment
		}
	case o.ControllerKind == kindJob:
		key.Kind, key.Name = kindJob, o.ControllerName
		if cronJob, ok := cutMinuteSuffix(o.ControllerName); ok {
			key.Kind, key.Name = kindCronJob, cronJob
		}
	case o.ControllerKind != "":
		key.Kind, key.Name = o.ControllerKind, o.ControllerName
	case o.Kind == kindPod || o.Kind == "":
		key.Kind, key.Name = kindPod, o.GenerateName
		if key.Name == "" {
			key.Name = o.Name
		}
	default:
		key.Kind, key.Name = o.Kind, o.Name
	}
	return key
}

// cutHashSuffix returns name without "-"+hash when name ends with it and
// something is left.
func cutHashSuffix(name, hash string) (string, bool) {
	if hash == "" {
		return "", false
	}
	prefix, ok := strings.CutSuffix(name, "-"+hash)
	return prefix, ok && prefix != ""
}

// cutMinuteSuffix returns name without its "-<digits>" suffix when the
// suffix has at least cronJobSuffixDigits digits and something is left.
func cutMinuteSuffix(name string) (string, bool) {
	dash := strings.LastIndexByte(name, '-')
	if dash <= 0 || len(name)-dash-1 < cronJobSuffixDigits {
		return "", false
	}
	for _, c := range name[dash+1:] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return name[:dash], true
}
