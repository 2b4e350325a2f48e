package facts

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

func podReq(object string) *review.Request {
	return &review.Request{
		UID: "u", Kind: review.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "team-a",
		Operation: "CREATE", Object: json.RawMessage(object),
	}
}

const richPod = `{"metadata":{"name":"","generateName":"web-","namespace":"ignored","labels":{"app":"web"},
 "ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"u0"},
  {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d9c7b8f6","uid":"u1","controller":true,"blockOwnerDeletion":true}],
 "annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/status":"injected","kubectl.kubernetes.io/x":"y"}},
 "spec":{"securityContext":{"runAsUser":1000,"runAsGroup":3000,"fsGroup":2000,"supplementalGroups":[4000,4001]},"terminationGracePeriodSeconds":45,
  "volumes":[{"name":"data","emptyDir":{}}],"imagePullSecrets":[{"name":"regcred"}],
  "containers":[
   {"name":"app","command":["run"],"args":[],"livenessProbe":{"exec":{"command":["true"]}},"securityContext":{"runAsUser":7,"runAsGroup":8},
    "env":[{"name":"A","value":"x"},{"name":"B"},{"name":"C","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
    "volumeMounts":[{"name":"data","mountPath":"/data"}]},
   {"name":"side","command":[],"args":null}],
  "initContainers":[{"name":"init","env":[{"name":"I","value":"1"}],"volumeMounts":[{"name":"data","mountPath":"/i"}]}],
  "ephemeralContainers":[{"name":"debug","env":[{"name":"E","value":"2"}]}]}}`

func TestPodFacts(t *testing.T) {
	obj, err := Decode(podReq(richPod), MutateKind(podReq(richPod)), []byte(richPod))
	if err != nil {
		t.Fatal(err)
	}
	f := obj.Facts
	checks := []struct {
		name string
		ok   bool
	}{
		{"only prefixed annotations are forwarded", len(f.GetAnnotations()) == 2 && f.GetAnnotations()["dynamic-config.rs/status"] == "injected"},
		{"the namespace is the request's", f.GetNamespace() == "team-a"},
		{"name and generateName are read", f.GetName() == "" && f.GetGenerateName() == "web-"},
		{"labels are carried", f.GetLabels()["app"] == "web"},
		{"the controller owner reference is read, no other owner", f.GetController().GetKind() == "ReplicaSet" && f.GetController().GetName() == "web-5d9c7b8f6"},
		{"the pod's runAsUser is read", f.RunAsUser != nil && f.GetRunAsUser() == 1000},
		{"the grace period is read", f.GetTerminationGracePeriodSeconds() == 45},
		{"volume and pull secret names are read", strings.Join(f.GetVolumeNames(), ",") == "data" && strings.Join(f.GetImagePullSecretNames(), ",") == "regcred"},
		{"a present empty args member counts as args", f.GetContainers()[0].GetHasArgs()},
		{"a null args member does not count as args", !f.GetContainers()[1].GetHasArgs()},
		{"an empty command is no command", f.GetContainers()[0].GetHasCommand() && !f.GetContainers()[1].GetHasCommand()},
		{"the liveness probe is seen", f.GetContainers()[0].GetHasLivenessProbe() && !f.GetContainers()[1].GetHasLivenessProbe()},
		{"the container's runAsUser is read", f.GetContainers()[0].GetRunAsUser() == 7 && f.GetContainers()[1].RunAsUser == nil},
		{"the pod's groups are read (issue 40)", f.GetRunAsGroup() == 3000 && f.GetFsGroup() == 2000 && len(f.GetSupplementalGroups()) == 2 && f.GetSupplementalGroups()[1] == 4001},
		{"the container's runAsGroup is read", f.GetContainers()[0].GetRunAsGroup() == 8 && f.GetContainers()[1].RunAsGroup == nil},
		{"an env entry without a value has the empty value", f.GetContainers()[0].GetEnv()[1].Value != nil && f.GetContainers()[0].GetEnv()[1].GetValue() == ""},
		{"a valueFrom entry has no value", f.GetContainers()[0].GetEnv()[2].GetValueFrom() && f.GetContainers()[0].GetEnv()[2].Value == nil},
		{"mount paths are read", strings.Join(f.GetContainers()[0].GetVolumeMountPaths(), ",") == "/data"},
		{"init containers carry name, env and mount paths", f.GetInitContainers()[0].GetName() == "init" && f.GetInitContainers()[0].GetEnv()[0].GetName() == "I" && f.GetInitContainers()[0].GetVolumeMountPaths()[0] == "/i"},
		{"ephemeral containers carry name and env", f.GetEphemeralContainers()[0].GetName() == "debug" && f.GetEphemeralContainers()[0].GetEnv()[0].GetValue() == "2"},
		{"the operation is mapped", f.GetOperation() == deciderv1.Operation_OPERATION_CREATE},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: facts %v", c.name, f)
		}
	}
}

func TestHasPrefixedAnnotation(t *testing.T) {
	tests := []struct {
		name   string
		object string
		want   bool
	}{
		{"a pod without annotations has none", `{"metadata":{}}`, false},
		{"other prefixes do not count", `{"metadata":{"annotations":{"dynamic-config.rs.example/x":"1","x":"dynamic-config.rs/"}}}`, false},
		{"a prefixed key counts", `{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}}}`, true},
		{"a prefixed key with a non-string value counts", `{"metadata":{"annotations":{"dynamic-config.rs/inject":true}}}`, true},
		{"an escaped prefixed key counts", `{"metadata":{"annotations":{"dynamic-config.rs\/inject":"true"}}}`, true},
		{"a prefix elsewhere in the object does not count", `{"metadata":{"labels":{"dynamic-config.rs/x":"1"}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HasPrefixedAnnotation([]byte(tt.object)); got != tt.want {
				t.Fatalf("HasPrefixedAnnotation() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestUndecodableObjects(t *testing.T) {
	req := podReq(`{"spec":{"containers":"x"}}`)
	_, err := Decode(req, kindPod, req.Object)
	var oe *ObjectError
	if !errors.As(err, &oe) || !strings.HasPrefix(err.Error(), "the object could not be read as a Pod: ") {
		t.Fatalf("Decode() error = %v", err)
	}
}

func TestEnvUnchanged(t *testing.T) {
	pod := func(env string) *Object {
		raw := `{"spec":{"containers":[{"name":"a","env":` + env + `}],"ephemeralContainers":[{"name":"d"}]}}`
		o, err := Decode(podReq(raw), kindPod, []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	tests := []struct {
		name     string
		old, new string
		want     bool
	}{
		{"identical env is unchanged", `[{"name":"A","value":"1"}]`, `[{"name":"A","value":"1"}]`, true},
		{"a changed value is a change", `[{"name":"A","value":"1"}]`, `[{"name":"A","value":"2"}]`, false},
		{"a value turned valueFrom is a change", `[{"name":"A","value":""}]`, `[{"name":"A","valueFrom":{"fieldRef":{"fieldPath":"x"}}}]`, false},
		{"an added entry is a change", `[]`, `[{"name":"A"}]`, false},
		{"an absent value equals an empty one", `[{"name":"A"}]`, `[{"name":"A","value":""}]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EnvUnchanged(pod(tt.new), pod(tt.old)); got != tt.want {
				t.Fatalf("EnvUnchanged() = %v, want %v", got, tt.want)
			}
		})
	}
}

func FuzzReviewAndFacts(f *testing.F) {
	seed := func(kind, group, object string) []byte {
		b, _ := json.Marshal(review.Review{APIVersion: review.APIVersion, Kind: review.Kind, Request: &review.Request{
			UID: "u", Kind: review.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Operation: "UPDATE",
			Object: json.RawMessage(object), OldObject: json.RawMessage(object)}})
		return b
	}
	f.Add(seed("Pod", "", richPod))
	f.Add(seed("Deployment", "apps", `{"metadata":{"annotations":{"dynamic-config.rs/x":"1"}},"spec":{"template":{"spec":{"containers":[{"name":"a","args":null}]}}}}`))
	f.Add(seed("CronJob", "batch", `{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}}}`))
	f.Add(seed("ReplicationController", "", `{"spec":{"template":null}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"object":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := review.Decode(body)
		if err != nil {
			var de *review.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Decode() error %v is not a DecodeError", err)
			}
			return
		}
		if !req.HasObject() {
			return
		}
		kind := ValidateKind(req)
		if kind == nil {
			return
		}
		obj, err := Decode(req, kind, req.Object)
		if err != nil {
			var oe *ObjectError
			if !errors.As(err, &oe) {
				t.Fatalf("Decode() error %v is not an ObjectError", err)
			}
			return
		}
		if kind.IsPod() {
			if len(obj.Facts.GetAnnotations()) > 0 && !HasPrefixedAnnotation(req.Object) {
				t.Fatalf("the lenient read missed a prefixed key the decode found: %s", req.Object)
			}
		}
		if req.HasOldObject() {
			if old, err := Decode(req, kind, req.OldObject); err == nil && !EnvUnchanged(obj, old) && string(req.Object) == string(req.OldObject) {
				t.Fatal("identical objects have changed env")
			}
		}
	})
}

// Member names match case-sensitively, as in the API server's decoding: a
// miscased member is not the pod's, so neither the facts nor the patch
// target may report it (an op against it would not apply; the patch side
// is held in frontdoor/patch's TestTarget).
func TestMiscasedMembersAreNotThePods(t *testing.T) {
	t.Run("a miscased metadata carries no prefixed annotation", func(t *testing.T) {
		if HasPrefixedAnnotation([]byte(`{"Metadata":{"annotations":{"dynamic-config.rs/inject":"true"}}}`)) {
			t.Fatal("the lenient read took Metadata for metadata")
		}
	})
	pod := `{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}},` +
		`"spec":{"Volumes":[{"name":"v"}],"containers":[{"name":"app","command":["run"],"Args":["x"],"VolumeMounts":[]}]}}`
	obj, err := Decode(podReq(pod), kindPod, []byte(pod))
	if err != nil {
		t.Fatal(err)
	}
	c := obj.Facts.GetContainers()[0]
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"a miscased args member is no args", !c.GetHasArgs() && len(c.GetArgs()) == 0},
		{"a miscased volumes member is absent", len(obj.Facts.GetVolumeNames()) == 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Fatalf("facts %v", obj.Facts)
			}
		})
	}
}
