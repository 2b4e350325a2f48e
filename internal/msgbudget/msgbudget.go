// Package msgbudget is the one message-size budget of the gRPC hop between
// the front door and the decider (issue 17). Both ends derive it from
// --max-request-bytes, the AdmissionReview body limit, so that a pod the
// front door accepts is never lost to a size mismatch between the hop's
// limits: the front door's send and receive limits and the decider's
// receive and send limits are the same number.
package msgbudget

import "fmt"

// DefaultMaxRequestBytes is the default --max-request-bytes (7 MiB) of the
// front door and the decider. The API server caps an object it stores at
// about 1.5 MiB (etcd's request limit) and sends it in an AdmissionReview up
// to twice (object and oldObject on UPDATE), plus the envelope and JSON
// escaping growth; 7 MiB leaves headroom for all of that while bounding what
// one request can make a process buffer.
const DefaultMaxRequestBytes = 7 << 20

// answerFactor is how many times the budget holds the body limit. A
// request's PodFacts are a subset of the review; the answer repeats a pod's
// values (the resolved value with its provenance, and again in the agent's
// arguments), so it is about twice the values it carries.
const answerFactor = 2

// MaxMaxRequestBytes is the largest --max-request-bytes: the budget must fit
// gRPC's int32 message sizes.
const MaxMaxRequestBytes = (1<<31 - 1) / answerFactor

// Bytes is the gRPC message budget for a body limit of maxRequestBytes
// (DefaultMaxRequestBytes when not positive): twice it.
func Bytes(maxRequestBytes int64) int {
	if maxRequestBytes <= 0 {
		maxRequestBytes = DefaultMaxRequestBytes
	}
	return int(min(maxRequestBytes, MaxMaxRequestBytes) * answerFactor)
}

// Check validates a --max-request-bytes value.
func Check(maxRequestBytes int64) error {
	if maxRequestBytes <= 0 || maxRequestBytes > MaxMaxRequestBytes {
		return fmt.Errorf("--max-request-bytes is %d: between 1 and %d", maxRequestBytes, int64(MaxMaxRequestBytes))
	}
	return nil
}
