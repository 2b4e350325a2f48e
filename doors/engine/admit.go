package engine

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Door posts one review body to a front door path and returns its
// answer and, when the door can tell, the decision behind it (nil without
// an RPC or when unknown).
type Door func(path string, body []byte) (*review.Response, *deciderv1.Decision, error)

// PodReview is the AdmissionReview the offline doors send for a Pod (uid
// "offline"), operation CREATE, the given namespace.
func PodReview(uid string, pod []byte, namespace, name string) ([]byte, error) {
	return json.Marshal(review.Review{APIVersion: review.APIVersion, Kind: review.Kind, Request: &review.Request{
		UID:       uid,
		Kind:      review.GroupVersionKind{Group: "", Version: "v1", Kind: "Pod"},
		Resource:  review.GroupVersionResource{Group: "", Version: "v1", Resource: "pods"},
		Name:      name,
		Namespace: namespace,
		Operation: "CREATE",
		Object:    pod,
	}})
}

// Admitted is the outcome of one Pod through the offline door.
type Admitted struct {
	// Answer is the AdmissionResponse: /mutate's, with the /validate
	// findings folded in when a pods-targeting envPolicy exists.
	Answer *review.Response
	// Mutated is the pod after the patch (the input when nothing was
	// patched); nil when refused.
	Mutated []byte
	// Patch is the decoded JSON Patch ("[]" when none).
	Patch []byte
	// Mutate and Validate are the decisions behind the answers (nil when
	// the path was not asked, answered without an RPC, or unknown).
	Mutate, Validate *deciderv1.Decision
}

// Refused reports whether the pod was denied.
func (a *Admitted) Refused() bool { return !a.Answer.Allowed }

// AdmitPod runs one Pod (JSON) through the engine's front door with uid
// "offline" (see AdmitThrough).
func (e *Engine) AdmitPod(pod []byte, namespace, name string) (*Admitted, error) {
	var policy *envpolicy.Policy
	if e.inst != nil {
		policy = e.inst.EnvPolicy
	}
	return AdmitThrough(e.roundTrip, policy, UID, pod, namespace, name)
}

// AdmitThrough runs one Pod (JSON) through door's /mutate, applies the
// patch, and when policy targets pods puts the mutated pod through
// /validate too, folding the findings into one answer (07 §1.4). The
// two-door test passes the HTTPS front door here.
func AdmitThrough(door Door, policy *envpolicy.Policy, uid string, pod []byte, namespace, name string) (*Admitted, error) {
	body, err := PodReview(uid, pod, namespace, name)
	if err != nil {
		return nil, err
	}
	resp, d, err := door(handler.PathMutate, body)
	if err != nil {
		return nil, err
	}
	out := &Admitted{Answer: resp, Mutate: d, Patch: []byte("[]")}
	if !resp.Allowed {
		return out, nil
	}
	out.Mutated = pod
	if resp.Patch != "" {
		out.Patch, out.Mutated, err = ApplyAnswerPatch(pod, resp.Patch)
		if err != nil {
			return nil, err
		}
	}
	if !targetsPods(policy) {
		return out, nil
	}
	body, err = PodReview(uid, out.Mutated, namespace, name)
	if err != nil {
		return nil, err
	}
	v, vd, err := door(handler.PathValidate, body)
	if err != nil {
		return nil, err
	}
	out.Validate = vd
	out.Answer = foldValidation(resp, v)
	if !out.Answer.Allowed {
		out.Mutated = nil
	}
	return out, nil
}

// ApplyAnswerPatch decodes a base64 patch and applies it to pod.
func ApplyAnswerPatch(pod []byte, patch64 string) (patch, mutated []byte, err error) {
	patch, err = base64.StdEncoding.DecodeString(patch64)
	if err != nil {
		return nil, nil, fmt.Errorf("the front door's patch is not base64: %w", err)
	}
	mutated, err = jsonpatch.Apply(pod, patch)
	if err != nil {
		return nil, nil, fmt.Errorf("apply the front door's patch: %w", err)
	}
	return patch, mutated, nil
}

// targetsPods reports whether an envPolicy exists and targets pods.
func targetsPods(p *envpolicy.Policy) bool {
	return p != nil && slices.Contains(p.Targets, envpolicy.TargetPods)
}

// foldValidation folds the /validate answer for the mutated pod into the
// /mutate answer (07 §1.4): a policy refusal denies with the policy's status
// and drops the patch; the policy's warnings follow the mutating ones; audit
// annotations are merged.
func foldValidation(mutate, validate *review.Response) *review.Response {
	out := *mutate
	if !validate.Allowed {
		out.Allowed = false
		out.Status = validate.Status
		out.Patch, out.PatchType = "", ""
	}
	if len(validate.Warnings) > 0 {
		out.Warnings = append(slices.Clone(mutate.Warnings), validate.Warnings...)
	}
	if len(validate.AuditAnnotations) > 0 {
		merged := make(map[string]string, len(mutate.AuditAnnotations)+len(validate.AuditAnnotations))
		maps.Copy(merged, mutate.AuditAnnotations)
		maps.Copy(merged, validate.AuditAnnotations)
		out.AuditAnnotations = merged
	}
	return &out
}
