package patch_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpointer"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/patch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// planFor is a plan that touches every array the patch may have to create:
// a volume, the shared mount on every app container, a pull secret, the
// command rewrite of the first container that has a command, and agents
// appended to containers and placed first in initContainers.
func planFor(f *deciderv1.PodFacts) *deciderv1.MutationPlan {
	shared := &deciderv1.VolumeMount{Name: "dynamic-config", MountPath: "/config"}
	agent := func(name string) *deciderv1.AgentContainer {
		return &deciderv1.AgentContainer{Name: name, Image: "agent:1", Args: []string{"--source", "consul"},
			VolumeMounts: []*deciderv1.VolumeMount{shared}}
	}
	plan := &deciderv1.MutationPlan{
		StatusAnnotation: &deciderv1.Annotation{Key: "dynamic-config.rs/status", Value: "injected"},
		Volumes: []*deciderv1.Volume{{Name: "dynamic-config",
			Source: &deciderv1.Volume_EmptyDir{EmptyDir: &deciderv1.EmptyDirVolume{Medium: "Memory", SizeLimit: "16Mi"}}}},
		ImagePullSecret: "agent-pull",
		Agents: []*deciderv1.AgentPlacement{
			{List: deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS, Position: deciderv1.Position_POSITION_FIRST, Container: agent("dynamic-config-init")},
			{List: deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS, Position: deciderv1.Position_POSITION_APPEND, Container: agent("dynamic-config-agent")},
		},
	}
	for i, c := range f.GetContainers() {
		plan.AppMounts = append(plan.AppMounts, &deciderv1.AppMount{ContainerIndex: int32(i), ContainerName: c.GetName(), Mount: shared})
		if plan.CommandRewrite == nil && c.GetHasCommand() {
			plan.CommandRewrite = &deciderv1.CommandRewrite{ContainerIndex: int32(i), ContainerName: c.GetName(),
				Command: []string{"/bin/sh", "-c", "exec \"$@\"", "dynamic-config-env"}}
		}
	}
	return plan
}

// FuzzPatchAppliesToThePodAsReceived: for any pod the front door would
// patch (it passed step A3 and decodes),
// the ops built from a plan against what Target saw in the raw JSON
// (absent vs null vs present members, args of any value) have valid JSON
// Pointer paths and apply to that raw JSON.
func FuzzPatchAppliesToThePodAsReceived(f *testing.F) {
	f.Add([]byte(`{"metadata":{"generateName":"web-","annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"volumes":[{"name":"data","emptyDir":{}}],` +
		`"imagePullSecrets":[{"name":"regcred"}],"containers":[{"name":"app","command":["run"],"args":[],"volumeMounts":[{"name":"data","mountPath":"/data"}]},` +
		`{"name":"side","command":[],"args":null}],"initContainers":[{"name":"init"}]}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}},"spec":{"volumes":null,"imagePullSecrets":[],"initContainers":null,` +
		`"containers":[{"name":"a","command":["x"],"args":null,"volumeMounts":null},{"name":"b","args":[]}]}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"dynamic-config.rs/x":""}},"spec":{}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"dynamic-config.rs/x":""}},"spec":{"containers":null,"volumes":[{"name":"v"}]}}`))
	f.Fuzz(func(t *testing.T, object []byte) {
		req := &review.Request{UID: "u", Kind: review.GroupVersionKind{Kind: "Pod", Version: "v1"}, Operation: "CREATE", Object: object}
		// The handler builds ops only for a pod that passed step A3 (a
		// prefixed annotation, read leniently) and decoded.
		if !json.Valid(object) || !facts.HasPrefixedAnnotation(object) {
			return
		}
		obj, err := facts.Decode(req, facts.MutateKind(req), object)
		if err != nil {
			return
		}
		target, err := patch.Target(object)
		if err != nil {
			t.Fatalf("Target() of a decoded pod failed: %v", err)
		}
		plan := planFor(obj.Facts)
		p, err := patch.Build(plan, target)
		// The handler's shortcut over the decoded pod builds the same patch
		// (or the same refusal).
		forPlan, ferr := patch.TargetFor(plan, obj.Pod, object)
		if ferr != nil {
			t.Fatalf("TargetFor() of a decoded pod failed: %v", ferr)
		}
		q, qerr := patch.Build(plan, forPlan)
		if (qerr == nil) != (err == nil) || (err == nil && string(q.JSON) != string(p.JSON)) ||
			(err != nil && qerr.Error() != err.Error()) {
			t.Fatalf("TargetFor gives %v %+v, Target %v %+v", qerr, q, err, p)
		}
		if err != nil {
			var unfit *patch.UnfitError
			if !errors.As(err, &unfit) {
				t.Fatalf("Build() error %v is not an UnfitError", err)
			}
			return
		}
		for _, op := range p.Ops {
			if _, err := jsonpointer.Parse(op.Path); err != nil || op.Path == "" {
				t.Fatalf("op path %q is not a valid JSON Pointer: %v", op.Path, err)
			}
		}
		if _, err := jsonpatch.Apply(object, p.JSON); err != nil {
			t.Fatalf("the patch does not apply to the pod as received: %v\npod: %s\npatch: %s", err, object, p.JSON)
		}
	})
}
