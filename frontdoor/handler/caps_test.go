package handler

import (
	"strconv"
	"strings"
	"testing"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// bigPod is an asking pod of n containers (the 1.49 MB pod of issue 38 is
// 50 000 of them).
func bigPod(n int) string {
	var b strings.Builder
	b.WriteString(`{"metadata":{"name":"big","annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"containers":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"c` + strconv.Itoa(i) + `","image":"i"}`)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// Issue 38: one pod cannot take the front door down — a pod above the caps
// is refused before it is decoded, as malformed under either failure flag,
// and the decider is never asked.
func TestAPodAboveTheCapsIsAMalformedRefusalUnderEitherFlag(t *testing.T) {
	body := requestReview(t, podRequest("u", bigPod(50000)))
	for _, flag := range []string{OnErrorDeny, OnErrorAllow} {
		for _, path := range []string{PathMutate, PathValidate} {
			t.Run("with --on-decider-error="+flag+" on "+path, func(t *testing.T) {
				fake := answering(injectDecision())
				client, _ := serveDecider(t, fake)
				h := New(Config{Decider: client, OnDeciderError: flag, OnDeciderErrorValidate: flag})
				got, answerBody := answer(t, h, path, body)
				if got.Allowed || got.Status == nil || got.Status.Code != 400 || got.Status.Reason != "DynamicConfigMalformed" ||
					!strings.Contains(got.Status.Message, "spec.containers holds 50000 entries, above the cap of 41391") {
					t.Fatalf("answer %.600s", answerBody)
				}
				if fake.calls() != 0 {
					t.Error("the decider was asked about a pod above the caps")
				}
			})
		}
	}
}

// A plan that would take more JSON Patch operations than the API server
// accepts in one patch refuses the pod as malformed: the pod is too large
// to patch, the decider is fine.
func TestAPlanTooLargeToPatchIsAMalformedRefusalUnderEitherFlag(t *testing.T) {
	const containers = 6000 // two ops each: above 10 000
	d := injectDecision()
	for i := range containers {
		d.Plan.AppMounts = append(d.Plan.AppMounts, &deciderv1.AppMount{ContainerIndex: int32(i), ContainerName: "c" + strconv.Itoa(i),
			Mount: &deciderv1.VolumeMount{Name: "dynamic-config", MountPath: "/config"}})
	}
	d.Plan.AppMounts = d.Plan.AppMounts[1:] // the example's own mount is for container "app"
	for _, flag := range []string{OnErrorDeny, OnErrorAllow} {
		t.Run("with --on-decider-error="+flag, func(t *testing.T) {
			client, _ := serveDecider(t, answering(d))
			h := New(Config{Decider: client, OnDeciderError: flag})
			got, answerBody := answer(t, h, PathMutate, requestReview(t, podRequest("u", bigPod(containers))))
			if got.Allowed || got.Status == nil || got.Status.Code != 400 || got.Status.Reason != "DynamicConfigMalformed" ||
				!strings.Contains(got.Status.Message, "more than 10000 JSON Patch operations") {
				t.Fatalf("answer %.600s", answerBody)
			}
		})
	}
}
