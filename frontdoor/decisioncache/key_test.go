package decisioncache

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// podFactsFields is the decision taken for every field of PodFacts: in the
// key, or per-admission (cleared from it) and why. A field PodFacts gains
// fails TestEveryPodFactsFieldIsInTheKeyOrNamedPerAdmission until it is
// decided here — and it is in the key meanwhile, the safe side.
var podFactsFields = map[string]string{
	"namespace":                        "key",
	"name":                             "key: empty at the mutating admission of a generateName pod; a named pod (a StatefulSet's) is its own question",
	"generate_name":                    "key: one ReplicaSet's pods share it",
	"operation":                        "key",
	"dry_run":                          "per-admission: logged only, never changes a decision (spec 06 §2.2)",
	"annotations":                      "key (sorted)",
	"labels":                           "key (sorted): one ReplicaSet's pods share them, pod-template-hash included",
	"containers":                       "key",
	"init_containers":                  "key",
	"ephemeral_containers":             "key",
	"run_as_user":                      "key",
	"termination_grace_period_seconds": "key",
	"volume_names":                     "key",
	"image_pull_secret_names":          "key",
	"resource_kind":                    "key",
	"request_uid":                      "per-admission: the API server's id of this one request, for log correlation",
	"user_name":                        "per-admission: who sent this one request, for logs only (spec 06 §2.2)",
	"workload_annotation_keys":         "key",
	"restart_policy":                   "key",
	"automount_service_account_token":  "key",
	"qos_guaranteed":                   "key",
	"controller":                       "key: names the workload (spec 10 §1); one ReplicaSet's pods share it",
}

func TestEveryPodFactsFieldIsInTheKeyOrNamedPerAdmission(t *testing.T) {
	fields := (&deciderv1.PodFacts{}).ProtoReflect().Descriptor().Fields()
	var perAdmission []string
	for i := range fields.Len() {
		name := string(fields.Get(i).Name())
		decision, ok := podFactsFields[name]
		if !ok {
			t.Errorf("PodFacts.%s is new: decide whether it is in the decision cache's key (it is, until named in PerAdmission) and record it in podFactsFields", name)
			continue
		}
		if len(decision) >= len("per-admission") && decision[:len("per-admission")] == "per-admission" {
			perAdmission = append(perAdmission, name)
		}
	}
	if len(podFactsFields) != fields.Len() {
		t.Errorf("podFactsFields names %d fields, PodFacts has %d", len(podFactsFields), fields.Len())
	}
	slices.Sort(perAdmission)
	want := slices.Sorted(slices.Values(PerAdmission))
	if !slices.Equal(perAdmission, want) {
		t.Errorf("the fields decided per-admission are %v; PerAdmission clears %v", perAdmission, want)
	}
}

// richRequest is a request with every field of the request and the facts set.
func richRequest() *deciderv1.DecisionRequest {
	uid, grace, automount := int64(1000), int64(45), false
	value := "v"
	return &deciderv1.DecisionRequest{
		Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		View:    deciderv1.DecisionView_DECISION_VIEW_PLAN,
		Cluster: "east",
		Pod: &deciderv1.PodFacts{
			Namespace: "shop", GenerateName: "web-7d4f8b9c-", Operation: deciderv1.Operation_OPERATION_CREATE,
			DryRun: true, RequestUid: "0a1b", UserName: "system:serviceaccount:kube-system:replicaset-controller",
			Annotations: map[string]string{"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul", "dynamic-config.rs/key": "web/config"},
			Labels:      map[string]string{"app": "web", "pod-template-hash": "7d4f8b9c", "tier": "front"},
			Containers: []*deciderv1.Container{{Name: "web", HasCommand: true, Command: []string{"/web"}, HasArgs: true, Args: []string{"-v"},
				HasLivenessProbe: true, RunAsUser: &uid, Env: []*deciderv1.EnvVar{{Name: "A", Value: &value}, {Name: "B", ValueFrom: true}},
				VolumeMountPaths: []string{"/data"}}},
			InitContainers:                []*deciderv1.Container{{Name: "init"}},
			EphemeralContainers:           []*deciderv1.Container{{Name: "debug"}},
			RunAsUser:                     &uid,
			TerminationGracePeriodSeconds: &grace,
			VolumeNames:                   []string{"data"},
			ImagePullSecretNames:          []string{"pull"},
			ResourceKind:                  deciderv1.ResourceKind_RESOURCE_KIND_POD,
			WorkloadAnnotationKeys:        []string{"dynamic-config.rs/inject"},
			RestartPolicy:                 "Always",
			AutomountServiceAccountToken:  &automount,
			QosGuaranteed:                 true,
			Controller:                    &deciderv1.ControllerRef{Kind: "ReplicaSet", Name: "web-7d4f8b9c"},
		},
	}
}

func keyOf(req *deciderv1.DecisionRequest) []byte { return appendKey(nil, req) }

// changed returns a copy of m with field fd changed from what it holds:
// a scalar to another value, a message to another message, a list and a map
// with one more element.
func changed(t *testing.T, m proto.Message, fd protoreflect.FieldDescriptor) proto.Message {
	t.Helper()
	c := proto.Clone(m)
	r := c.ProtoReflect()
	switch {
	case fd.IsMap():
		r.Mutable(fd).Map().Set(protoreflect.ValueOfString("zz-added").MapKey(), protoreflect.ValueOfString("added"))
	case fd.IsList():
		l := r.Mutable(fd).List()
		if fd.Kind() == protoreflect.MessageKind {
			l.Append(protoreflect.ValueOfMessage(l.NewElement().Message()))
		} else {
			l.Append(protoreflect.ValueOfString("added"))
		}
	case fd.Kind() == protoreflect.MessageKind:
		sub := r.Mutable(fd).Message()
		f := sub.Descriptor().Fields().Get(0)
		sub.Set(f, otherScalar(t, sub.Get(f), f))
	default:
		r.Set(fd, otherScalar(t, r.Get(fd), fd))
	}
	return c
}

func otherScalar(t *testing.T, v protoreflect.Value, fd protoreflect.FieldDescriptor) protoreflect.Value {
	t.Helper()
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.String() + "x")
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(!v.Bool())
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(v.Int() + 1)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(v.Int()) + 1)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(v.Enum() + 1)
	}
	t.Fatalf("field %s: kind %s has no other value in this test; add one", fd.FullName(), fd.Kind())
	return v
}

func TestChangingAnyFieldChangesTheKeyButThePerAdmissionFieldsDoNot(t *testing.T) {
	base := richRequest()
	baseKey := keyOf(base)
	perAdmission := map[protoreflect.Name]bool{}
	for _, name := range PerAdmission {
		perAdmission[protoreflect.Name(name)] = true
	}
	check := func(name string, m *deciderv1.DecisionRequest, same bool) {
		t.Run(name, func(t *testing.T) {
			if got := bytes.Equal(keyOf(m), baseKey); got != same {
				t.Errorf("the key is the same: %v, want %v", got, same)
			}
		})
	}
	reqFields := base.ProtoReflect().Descriptor().Fields()
	for i := range reqFields.Len() {
		fd := reqFields.Get(i)
		if fd.Name() == "pod" {
			continue
		}
		check("DecisionRequest."+string(fd.Name()), changed(t, base, fd).(*deciderv1.DecisionRequest), false)
	}
	podFields := base.GetPod().ProtoReflect().Descriptor().Fields()
	for i := range podFields.Len() {
		fd := podFields.Get(i)
		req := proto.Clone(base).(*deciderv1.DecisionRequest)
		req.Pod = changed(t, base.GetPod(), fd).(*deciderv1.PodFacts)
		check("PodFacts."+string(fd.Name()), req, perAdmission[fd.Name()])
	}
	for _, nested := range []struct {
		name string
		msg  proto.Message
		set  func(*deciderv1.PodFacts, proto.Message)
	}{
		{"Container", base.GetPod().GetContainers()[0], func(p *deciderv1.PodFacts, m proto.Message) { p.Containers[0] = m.(*deciderv1.Container) }},
		{"EnvVar", base.GetPod().GetContainers()[0].GetEnv()[0], func(p *deciderv1.PodFacts, m proto.Message) {
			p.Containers[0].Env[0] = m.(*deciderv1.EnvVar)
		}},
		{"ControllerRef", base.GetPod().GetController(), func(p *deciderv1.PodFacts, m proto.Message) { p.Controller = m.(*deciderv1.ControllerRef) }},
	} {
		fields := nested.msg.ProtoReflect().Descriptor().Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			req := proto.Clone(base).(*deciderv1.DecisionRequest)
			nested.set(req.Pod, changed(t, nested.msg, fd))
			check(nested.name+"."+string(fd.Name()), req, false)
		}
	}
}

func TestTheOnlyMapsOnTheWireAreTheTwoTheKeySorts(t *testing.T) {
	seen := map[protoreflect.FullName]bool{}
	var maps []string
	var walk func(protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.IsMap() {
				maps = append(maps, string(fd.FullName()))
				continue
			}
			if fd.Message() != nil {
				walk(fd.Message())
			}
		}
	}
	walk((&deciderv1.DecisionRequest{}).ProtoReflect().Descriptor())
	want := []string{"dynamicconfig.decider.v1.PodFacts.annotations", "dynamicconfig.decider.v1.PodFacts.labels"}
	if !slices.Equal(maps, want) {
		t.Errorf("the request's map fields are %v; appendKey sorts only %v: a map it does not sort is written in random order (no hits)", maps, want)
	}
}

func TestTheKeyDoesNotDependOnMapOrder(t *testing.T) {
	a := richRequest()
	b := richRequest()
	b.Pod.Annotations, b.Pod.Labels = map[string]string{}, map[string]string{}
	for _, k := range slices.Backward(slices.Sorted(func(yield func(string) bool) {
		for k := range a.Pod.Annotations {
			if !yield(k) {
				return
			}
		}
	})) {
		b.Pod.Annotations[k] = a.Pod.Annotations[k]
	}
	for k, v := range a.Pod.Labels {
		b.Pod.Labels[k] = v
	}
	want := keyOf(a)
	for i := range 50 {
		if got := keyOf(b); !bytes.Equal(got, want) {
			t.Fatalf("attempt %d: the same request gave another key", i)
		}
	}
}

func TestMapEntriesCannotBeShiftedBetweenKeyValueAndMap(t *testing.T) {
	req := func(annotations, labels map[string]string) *deciderv1.DecisionRequest {
		return &deciderv1.DecisionRequest{Pod: &deciderv1.PodFacts{Annotations: annotations, Labels: labels}}
	}
	keys := map[string]string{}
	for name, r := range map[string]*deciderv1.DecisionRequest{
		"a=bc":             req(map[string]string{"a": "bc"}, nil),
		"ab=c":             req(map[string]string{"ab": "c"}, nil),
		"a=b,c=":           req(map[string]string{"a": "b", "c": ""}, nil),
		"label a=bc":       req(nil, map[string]string{"a": "bc"}),
		"empty":            req(nil, nil),
		"empty annotation": req(map[string]string{"": ""}, nil),
		"both":             req(map[string]string{"a": "bc"}, map[string]string{"a": "bc"}),
	} {
		k := string(keyOf(r))
		if other, ok := keys[k]; ok {
			t.Errorf("%s and %s have the same key", name, other)
		}
		keys[k] = name
	}
}

func TestTheKeyGivesTheRequestBackAsItWas(t *testing.T) {
	req := richRequest()
	want := proto.Clone(req)
	keyOf(req)
	if !proto.Equal(req, want) {
		t.Fatalf("after the key the request is %v, want %v", req, want)
	}
	keyOf(&deciderv1.DecisionRequest{}) // no pod: no panic
}

func TestTheKeyOfManyAnnotationsSortsBeyondTheStackArray(t *testing.T) {
	a := &deciderv1.DecisionRequest{Pod: &deciderv1.PodFacts{Annotations: map[string]string{}}}
	for i := range 3 * maxSortedOnStack {
		a.Pod.Annotations[fmt.Sprintf("dynamic-config.rs/k%03d", i)] = "v"
	}
	want := keyOf(a)
	for range 20 {
		if !bytes.Equal(keyOf(a), want) {
			t.Fatal("a request with many annotations gave another key")
		}
	}
}

func BenchmarkKey(b *testing.B) {
	req := richRequest()
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendKey(buf[:0], req)
	}
	b.SetBytes(int64(len(buf)))
}
