package decisioncache

import (
	"encoding/binary"
	"slices"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// The key is the DecisionRequest exactly as the front door would send it —
// purpose, view, cluster and every field of the facts — less what belongs
// to one admission only (PerAdmission). It is bytes, compared whole: the
// map hashes them with the runtime's per-process seed, and two requests share
// an entry only when their keys are equal byte for byte, so no collision can
// ever answer one pod with another pod's decision.
//
// The request is written by the generated vtprotobuf marshaller (no
// reflection), which writes every field it knows — a field added to the wire
// is in the key without a line here — but a map in Go's random order; so the
// two maps of the facts (annotations, labels) are taken out of the
// marshalled request and appended sorted. A new map field would be written
// in random order: never a wrong answer (differing bytes only miss), but no
// hits, and the key tests fail until it is sorted here too.

// PerAdmission are the PodFacts fields that name one admission, not the
// pod's template: they are cleared from the key. request_uid is the API
// server's id of this one request and user_name who sent it (both for log
// correlation only); dry_run marks a request that is not persisted, logged
// only: none of them changes a decision (spec 06 §2.2). Any other field —
// one added later included — is in the key: a field is left out only by
// being named here (and in the key test's table, which fails when PodFacts
// gains a field that neither names).
var PerAdmission = []string{"request_uid", "user_name", "dry_run"}

// Field numbers of the facts' two maps, written after the marshalled request.
const (
	fieldAnnotations = 6
	fieldLabels      = 7
)

// appendKey appends the key of req to dst. It borrows req: the per-admission
// fields and the maps of req.Pod are cleared while the request is marshalled
// and put back before it returns, so req must not be read by anyone else
// meanwhile (the handler owns the request it builds).
func appendKey(dst []byte, req *deciderv1.DecisionRequest) []byte {
	pod := req.GetPod()
	var annotations, labels map[string]string
	if pod != nil {
		uid, user, dryRun := pod.RequestUid, pod.UserName, pod.DryRun
		annotations, labels = pod.Annotations, pod.Labels
		pod.RequestUid, pod.UserName, pod.DryRun, pod.Annotations, pod.Labels = "", "", false, nil, nil
		defer func() {
			pod.RequestUid, pod.UserName, pod.DryRun, pod.Annotations, pod.Labels = uid, user, dryRun, annotations, labels
		}()
	}
	size := req.SizeVT()
	dst = binary.AppendUvarint(dst, uint64(size))
	start := len(dst)
	dst = slices.Grow(dst, size)[:start+size]
	if _, err := req.MarshalToSizedBufferVT(dst[start:]); err != nil {
		// The generated marshaller fails only on a buffer of the wrong size,
		// which SizeVT rules out.
		panic("decisioncache: marshalling a request into its own size failed: " + err.Error())
	}
	dst = appendSortedMap(dst, fieldAnnotations, annotations)
	return appendSortedMap(dst, fieldLabels, labels)
}

// maxSortedOnStack is how many map keys are sorted without allocating.
const maxSortedOnStack = 32

// appendSortedMap appends the field number, the entry count and every entry
// of m — length-prefixed key, length-prefixed value — in key order.
func appendSortedMap(dst []byte, field byte, m map[string]string) []byte {
	dst = append(dst, field)
	dst = binary.AppendUvarint(dst, uint64(len(m)))
	if len(m) == 0 {
		return dst
	}
	var onStack [maxSortedOnStack]string
	keys := onStack[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := m[k]
		dst = binary.AppendUvarint(dst, uint64(len(k)))
		dst = append(dst, k...)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	return dst
}
