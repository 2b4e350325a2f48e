// Package podcaps is the one set of caps on how many entries the lists of
// one pod may hold (issue 38), derived from the API server's own limits and
// used by every reader of a pod: the front door's decode of the admitted
// object (frontdoor/facts, before anything is decoded), the gRPC codec of
// the hop (internal/wirecodec, before a DecisionRequest is unmarshalled)
// and the front door's patch (MaxPatchOps).
//
// Kubernetes validation sets no limit on how many containers, env entries,
// mounts, volumes, pull secrets, labels or command arguments a pod holds
// (pkg/apis/core/validation, v1.35): the only bound is the object's size.
// etcd refuses a write above its --max-request-bytes, by default 1.5 MiB
// (StoredPodBytes), so no API server stores a pod whose stored form (the
// API server's default storage encoding, protobuf) is larger. Each entry of
// a list takes at least its field's Floor bytes in that form — measured
// with k8s.io/api's own Marshal for the smallest entry validation and
// defaulting let through (podcaps_test.go) — so a pod whose counted
// entries take more than StoredPodBytes between them can never be stored:
// it is refused, whichever reader counts it, and nothing an API server could
// store is. A mutating webhook is called before validation and storage,
// which is why a review can carry such a pod at all (a 1.49 MB pod of 50 000
// containers took a front door of 64 MiB down).
package podcaps

import (
	"fmt"
)

// StoredPodBytes is the largest object etcd stores by default (its
// --max-request-bytes, 1.5 MiB): no pod larger than this is ever stored.
const StoredPodBytes = 1536 << 10

// MaxPatchOps is the most operations of one JSON Patch: the API server's
// own bound on a client's JSON Patch (k8s.io/apiserver's
// maxJSONPatchOperations, 10 000). The front door never answers a longer
// one.
const MaxPatchOps = 10000

// Field is one list of a pod the caps count.
type Field uint8

// The counted lists. The nested lists (env, mounts, command, args,
// resources) are counted over every container of the pod: a cap per
// container would let the product of two caps through.
const (
	Containers Field = iota
	InitContainers
	EphemeralContainers
	Env
	VolumeMounts
	Command
	Args
	Resources
	Volumes
	ImagePullSecrets
	Labels
	Annotations
	SupplementalGroups
	fieldCount
)

// Fields lists every counted field, in order.
func Fields() []Field {
	out := make([]Field, fieldCount)
	for i := range out {
		out[i] = Field(i)
	}
	return out
}

// fields are each field's name (the API's, as a message quotes it) and its
// floor: the fewest bytes one entry takes in a pod as the API server stores
// it (protobuf, after defaulting), with the entry's length prefix.
var fields = [fieldCount]struct {
	name  string
	floor int
}{
	// name "a", image "b", and the defaulted terminationMessagePath ("x",
	// the shortest one may set), terminationMessagePolicy ("File") and
	// imagePullPolicy ("Never"), beside every string and bool the encoding
	// always writes.
	Containers: {"spec.containers", 38},
	// the same, one byte more: the field's number takes two bytes.
	InitContainers: {"spec.initContainers", 39},
	// the same, and the always written targetContainerName.
	EphemeralContainers: {"spec.ephemeralContainers", 43},
	// name "a" (value always written).
	Env: {"env", 7},
	// name "a", mountPath "/".
	VolumeMounts: {"volumeMounts", 14},
	// an empty string.
	Command: {"command", 2},
	Args:    {"args", 2},
	// a resources.claims entry named "a" (a limits or requests entry, "cpu:
	// 0", takes 12).
	Resources: {"resources", 7},
	// name "a" and an emptyDir, the smallest source.
	Volumes: {"spec.volumes", 11},
	// an empty name.
	ImagePullSecrets: {"spec.imagePullSecrets", 4},
	// key "a", empty value.
	Labels:      {"metadata.labels", 7},
	Annotations: {"metadata.annotations", 7},
	// a group 0: the field's tag and a one-byte varint.
	SupplementalGroups: {"spec.securityContext.supplementalGroups", 2},
}

// Name is the field as the API spells it.
func (f Field) Name() string { return fields[f].name }

// Floor is the fewest bytes one entry of f takes in a stored pod.
func (f Field) Floor() int { return fields[f].floor }

// Cap is the most entries of f a storable pod holds, with nothing else in
// its lists: StoredPodBytes / Floor.
func (f Field) Cap() int { return StoredPodBytes / fields[f].floor }

// Counts are one pod's entries, per field.
type Counts [fieldCount]int

// StoredBytes is the least the counted entries take in the pod as the API
// server would store it.
func (c *Counts) StoredBytes() int {
	total := 0
	for f, n := range c {
		total += n * fields[f].floor
	}
	return total
}

// Check is nil when a pod with these counts could be stored, else an
// *Error naming the field that takes the most of it, its count and its cap.
func (c *Counts) Check() error {
	total := c.StoredBytes()
	if total <= StoredPodBytes {
		return nil
	}
	worst := Field(0)
	for f := range fieldCount {
		if c[f]*fields[f].floor > c[worst]*fields[worst].floor {
			worst = f
		}
	}
	return &Error{Field: worst, Count: c[worst], StoredBytes: total}
}

// Error is a pod above the caps: no API server can store it.
type Error struct {
	// Field is the field that takes the most of the pod's stored bytes,
	// Count its entries.
	Field Field
	Count int
	// StoredBytes is the least the pod's counted entries take stored.
	StoredBytes int
}

func (e *Error) Error() string {
	if e.Count > e.Field.Cap() {
		return fmt.Sprintf("%s holds %d entries, above the cap of %d: a pod the API server can store holds at most %d (%d bytes at least %d each, etcd's default object limit)",
			e.Field.Name(), e.Count, e.Field.Cap(), e.Field.Cap(), StoredPodBytes, e.Field.Floor())
	}
	return fmt.Sprintf("the pod's lists take at least %d bytes as the API server stores a pod, above the %d it can store (etcd's default object limit); %s holds %d entries (cap %d alone), the most of it",
		e.StoredBytes, StoredPodBytes, e.Field.Name(), e.Count, e.Field.Cap())
}
