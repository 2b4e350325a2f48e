package whatif

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
)

// compareAdmissions compares one pod's two admissions as the decider's
// shadow compares its two decisions (rollout.Compare): the mutating
// decisions, then — when they are the same and a pods-targeting envPolicy
// asked — the validating ones. A pod answered by the front door alone (no
// decision behind either answer) is compared on its answer.
func compareAdmissions(active, candidate *engine.Admitted) rollout.Comparison {
	if active.Mutate != nil && candidate.Mutate != nil {
		cmp := rollout.Compare(service.DecisionFromProto(active.Mutate), service.DecisionFromProto(candidate.Mutate))
		if cmp.Result.Differs() || active.Validate == nil || candidate.Validate == nil {
			return cmp
		}
		return rollout.Compare(service.DecisionFromProto(active.Validate), service.DecisionFromProto(candidate.Validate))
	}
	switch {
	case active.Refused() == candidate.Refused() && bytes.Equal(active.Patch, candidate.Patch):
		return rollout.Comparison{Result: rollout.Same}
	case candidate.Refused():
		return rollout.Comparison{Result: rollout.NewlyRefused, Paths: []string{"outcome"}}
	case active.Refused():
		return rollout.Comparison{Result: rollout.NoLongerRefused, Paths: []string{"outcome"}}
	}
	return rollout.Comparison{Result: rollout.Changed, Paths: []string{"patch"}}
}

// workloadKey is the workload key of spec 10 §1 for a pod of doc: a
// workload's template is its workload's (Deployment web, CronJob nightly);
// a Pod's is read from its metadata, as the decider reads it.
func workloadKey(doc *manifest.Document, t manifest.PodTarget, cluster string) string {
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string            `json:"name"`
			GenerateName    string            `json:"generateName"`
			Labels          map[string]string `json:"labels"`
			OwnerReferences []struct {
				Kind       string `json:"kind"`
				Name       string `json:"name"`
				Controller bool   `json:"controller"`
			} `json:"ownerReferences"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(object(doc, t), &head) // read before: PodTargets decoded it
	if head.Kind != "Pod" {
		// a workload's template: the object itself (its Kind/name closes the label)
		return workload.Of(cluster, workload.Object{Namespace: t.Namespace, Kind: head.Kind, Name: head.Metadata.Name}).String()
	}
	o := workload.Object{Namespace: t.Namespace, Kind: "Pod", Name: head.Metadata.Name,
		GenerateName: head.Metadata.GenerateName, Labels: head.Metadata.Labels}
	for _, ref := range head.Metadata.OwnerReferences {
		if ref.Controller {
			o.ControllerKind, o.ControllerName = ref.Kind, ref.Name
		}
	}
	return workload.Of(cluster, o).String()
}

// object is the object t's pod belongs to: the document, or a List's item.
func object(doc *manifest.Document, t manifest.PodTarget) []byte {
	rest, ok := strings.CutPrefix(t.Pointer, "/items/")
	if !ok {
		return doc.Raw
	}
	index, _, _ := strings.Cut(rest, "/")
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	i, err := strconv.Atoi(index)
	if json.Unmarshal(doc.Raw, &list) != nil || err != nil || i >= len(list.Items) {
		return doc.Raw
	}
	return list.Items[i]
}
