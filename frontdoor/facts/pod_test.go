package facts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
)

// sameAsCorev1 decodes object as kind both ways and fails when the lean
// decode disagrees with the corev1 one: equal facts when both read it, and
// an error only where the corev1 decode errs too (the lean decode reads
// fewer members, so it may read what corev1 refuses; never the reverse).
func sameAsCorev1(t *testing.T, kind *Kind, object []byte) {
	t.Helper()
	req := &review.Request{UID: "u", Operation: "CREATE", Namespace: "", Object: object}
	want, werr := corev1Decode(req, kind, object)
	got, gerr := Decode(req, kind, object)
	switch {
	case gerr != nil && werr == nil:
		t.Fatalf("the lean decode refuses what corev1 reads: %v\nobject: %s", gerr, object)
	case werr == nil && !proto.Equal(got.Facts, want):
		t.Fatalf("the facts differ\nlean:   %v\ncorev1: %v\nobject: %s", got.Facts, want, object)
	}
}

// kindOf routes an object by its own apiVersion and kind, as a review would.
func kindOf(t *testing.T, object []byte) *Kind {
	t.Helper()
	var tm struct{ APIVersion, Kind string }
	if err := json.Unmarshal(object, &tm); err != nil {
		t.Fatal(err)
	}
	group, _, _ := strings.Cut(tm.APIVersion, "/")
	if !strings.Contains(tm.APIVersion, "/") {
		group = ""
	}
	return ValidateKind(&review.Request{Kind: review.GroupVersionKind{Group: group, Kind: tm.Kind}})
}

func TestTheLeanDecodeGivesTheCorev1FactsForEveryGoldenCase(t *testing.T) {
	files, err := filepath.Glob("../../test/cases/*/pod.yaml")
	if err != nil || len(files) < 50 {
		t.Fatalf("the golden corpus is not where it was: %d files, %v", len(files), err)
	}
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			object, err := yaml.YAMLToJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			kind := kindOf(t, object)
			if kind == nil {
				t.Skipf("not a routed kind")
			}
			sameAsCorev1(t, kind, object)
		})
	}
}

func TestTheLeanDecodeReadsMissingNullAndEmptyMembersAsCorev1Does(t *testing.T) {
	cases := []struct {
		name, object string
	}{
		{"a rich pod", richPod},
		{"null and empty lists and maps", `{"metadata":{"labels":null,"annotations":{}},"spec":{"volumes":null,"imagePullSecrets":[],"initContainers":[],` +
			`"containers":[{"name":"a","command":null,"args":[],"env":[],"volumeMounts":null},{"name":"b","args":null,"env":null}],"ephemeralContainers":null}}`},
		{"a null and an empty probe and valueFrom", `{"spec":{"containers":[{"name":"a","livenessProbe":null,"env":[{"name":"X","valueFrom":null},{"name":"Y","valueFrom":{}}]},` +
			`{"name":"b","livenessProbe":{}}]}}`},
		{"a later duplicate member wins", `{"spec":{"containers":[{"name":"a","args":["x"],"args":null,"livenessProbe":{},"livenessProbe":null,` +
			`"env":[{"name":"E","valueFrom":{},"valueFrom":null,"value":"v"}]}],"restartPolicy":"Always","restartPolicy":"Never"}}`},
		{"null spec, security contexts and pointers", `{"spec":{"securityContext":null,"terminationGracePeriodSeconds":null,"automountServiceAccountToken":false,` +
			`"containers":[{"name":"a","securityContext":{"runAsUser":0}}]}}`},
		{"no spec at all", `{"metadata":{"name":"p"}}`},
		{"owners of which none is the controller", `{"metadata":{"ownerReferences":[{"kind":"A","name":"a"},{"kind":"B","name":"b","controller":false},{"kind":"C","name":"c","controller":null}]}}`},
		{"the first owner marked controller", `{"metadata":{"ownerReferences":[{"kind":"A","name":"a","controller":false},{"kind":"StatefulSet","name":"pg","controller":true},{"kind":"D","name":"d","controller":true}]}}`},
		{"null owner references", `{"metadata":{"ownerReferences":null}}`},
		{"guaranteed resources", `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1000m","memory":"1Gi"}}}],` +
			`"initContainers":[{"name":"i","resources":{"limits":{"cpu":"100m","memory":"64Mi"}}}]}}`},
		{"burstable resources", `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}}}]}}`},
		{"a wrong-typed member only corev1 reads", `{"spec":{"hostNetwork":"yes","containers":[{"name":"a","ports":"x"}]}}`},
		{"miscased members are not the pod's", `{"Metadata":{"Annotations":{"dynamic-config.rs/x":"1"}},"spec":{"Containers":[{"name":"a"}],"containers":[{"Name":"b","name":"c"}]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sameAsCorev1(t, kindPod, []byte(tc.object))
		})
	}
	for _, tc := range []struct{ name, group, kind, object string }{
		{"a Deployment", "apps", "Deployment", `{"metadata":{"annotations":{"dynamic-config.rs/x":"1"}},"spec":{"template":{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"containers":[{"name":"a","args":null}]}}}}`},
		{"a CronJob", "batch", "CronJob", `{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"}]}]}}}}}}`},
		{"a ReplicationController without a template", "", "ReplicationController", `{"metadata":{"name":"rc"},"spec":{"template":null}}`},
		{"a Deployment's ReplicaSet", "apps", "ReplicaSet", `{"metadata":{"name":"web-5d9c7b8f6","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","controller":true}]},"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameAsCorev1(t, ValidateKind(&review.Request{Kind: review.GroupVersionKind{Group: tc.group, Kind: tc.kind}}), []byte(tc.object))
		})
	}
}

// FuzzLeanDecodeMatchesCorev1: for any object of any routed kind, the lean
// decode reads the facts the corev1 decode reads.
func FuzzLeanDecodeMatchesCorev1(f *testing.F) {
	f.Add("Pod", []byte(richPod))
	f.Add("Pod", []byte(`{"spec":{"containers":[{"name":"a","args":null,"livenessProbe":{},"env":[{"name":"E","valueFrom":{}}]}]}}`))
	f.Add("Deployment", []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}}}}`))
	f.Add("CronJob", []byte(`{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"initContainers":[{"name":"i"}]}}}}}}`))
	f.Add("ReplicationController", []byte(`{"spec":{"template":null}}`))
	kinds := map[string]*Kind{}
	for k, v := range validateKinds {
		kinds[k[1]] = v
	}
	f.Fuzz(func(t *testing.T, kindName string, object []byte) {
		kind, ok := kinds[kindName]
		if !ok || !json.Valid(object) {
			return
		}
		sameAsCorev1(t, kind, object)
	})
}

func TestAWrongTypedMemberBothReadIsRefusedWithTheCorev1Message(t *testing.T) {
	cases := []struct{ name, object string }{
		{"a string grace period", `{"spec":{"terminationGracePeriodSeconds":"30","containers":[{"name":"a"}]}}`},
		{"a container list that is a string", `{"spec":{"containers":"x"}}`},
		{"a quantity that is no quantity", `{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"lots"}}}]}}`},
		{"args that are a number", `{"spec":{"containers":[{"name":"a","args":1}]}}`},
		{"a runAsUser that is a string", `{"spec":{"containers":[{"name":"a","securityContext":{"runAsUser":"root"}}]}}`},
		{"an annotation value that is a number", `{"metadata":{"annotations":{"dynamic-config.rs/inject":1}}}`},
		{"a restart policy that is a list", `{"spec":{"restartPolicy":[]}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := podReq(tc.object)
			_, werr := corev1Decode(req, kindPod, req.Object)
			_, gerr := Decode(req, kindPod, req.Object)
			if werr == nil || gerr == nil {
				t.Fatalf("corev1 %v, lean %v: want both to refuse", werr, gerr)
			}
			if want := "the object could not be read as a Pod: " + werr.Error(); gerr.Error() != want {
				t.Fatalf("lean: %s\nwant: %s", gerr, want)
			}
		})
	}
}
