package manifest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpointer"
)

// The doors take workloads as istioctl kube-inject does (issue 15): the pod
// template of each is decided and patched as the Pod the controller would
// create from it, in the workload's namespace, and the patch lands in the
// template of the whole manifest, which is written back as it came.

// podTemplatePointers says where each kind keeps its pod: the JSON pointer
// of the pod template in the object ("" = the object is the Pod).
var podTemplatePointers = map[[2]string]string{
	{"v1", "Pod"}:                   "",
	{"v1", "ReplicationController"}: "/spec/template",
	{"apps/v1", "Deployment"}:       "/spec/template",
	{"apps/v1", "StatefulSet"}:      "/spec/template",
	{"apps/v1", "DaemonSet"}:        "/spec/template",
	{"apps/v1", "ReplicaSet"}:       "/spec/template",
	{"batch/v1", "Job"}:             "/spec/template",
	{"batch/v1", "CronJob"}:         "/spec/jobTemplate/spec/template",
}

// Kinds names what inject patches, for the messages.
const Kinds = "Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs, CronJobs and Lists of them"

// CheckKind is inject's kind rule for one object: a Pod or a workload
// of its apiVersion is patched, a kind inject does not know passes through
// unchanged (as kubectl apply would take it: a Service, a ConfigMap); an
// object without a kind, or a Pod or workload kind of another apiVersion,
// is refused, never passed through.
func CheckKind(apiVersion, kind string) (patched bool, err error) {
	if _, ok := podTemplatePointers[[2]string{apiVersion, kind}]; ok {
		return true, nil
	}
	if kind == "" {
		return false, errors.New("a document without a kind")
	}
	for k := range podTemplatePointers {
		if k[1] == kind {
			return false, fmt.Errorf("a %s of apiVersion %q (want %s)", kind, apiVersion, k[0])
		}
	}
	if kind == "List" {
		return false, fmt.Errorf("a List of apiVersion %q (want v1)", apiVersion)
	}
	return false, nil
}

// PodTarget is one pod of a document: a Pod, or a workload's template.
type PodTarget struct {
	// Pointer is where the pod is in the document ("" = the document).
	Pointer string
	// Label names the pod's owner in messages ("" for a Pod document).
	Label string
	// Pod is the Pod decided: the document, or apiVersion v1, kind Pod and
	// the template's metadata and spec; nil for an object that passes
	// through unchanged.
	Pod             []byte
	Namespace, Name string
}

// PodTargets lists the pods of doc in document order. The namespace of a
// template is its object's (--namespace, else metadata.namespace, else
// default).
func PodTargets(doc *Document, namespaceFlag string) ([]PodTarget, error) {
	if doc.Head.Kind != "List" {
		t, err := ObjectPodTarget(doc.Raw, "", namespaceFlag, "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc.Where(), err)
		}
		return []PodTarget{t}, nil
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc.Raw, &list); err != nil {
		return nil, fmt.Errorf("%s: a List whose items are not objects: %w", doc.Where(), err)
	}
	targets := make([]PodTarget, 0, len(list.Items))
	for i, item := range list.Items {
		t, err := ObjectPodTarget(item, "/items/"+strconv.Itoa(i), namespaceFlag, "List item "+strconv.Itoa(i+1)+" ")
		if err != nil {
			return nil, fmt.Errorf("%s, List item %d: %w", doc.Where(), i+1, err)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// ObjectPodTarget locates the pod of one object at pointer in its document.
func ObjectPodTarget(raw []byte, pointer, namespaceFlag, labelPrefix string) (PodTarget, error) {
	var head Head
	if err := json.Unmarshal(raw, &head); err != nil {
		return PodTarget{}, fmt.Errorf("not an object: %w", err)
	}
	patched, err := CheckKind(head.APIVersion, head.Kind)
	if err != nil {
		return PodTarget{}, fmt.Errorf("inject takes %s; this is %w", Kinds, err)
	}
	if !patched {
		return PodTarget{Label: labelPrefix + head.Kind + "/" + head.Metadata.Name}, nil
	}
	template := podTemplatePointers[[2]string{head.APIVersion, head.Kind}]
	namespace := namespaceFlag
	if namespace == "" {
		namespace = head.Metadata.Namespace
	}
	if namespace == "" {
		namespace = "default"
	}
	t := PodTarget{Pointer: pointer + template, Namespace: namespace, Name: head.Metadata.Name}
	if template == "" {
		t.Pod = raw
		if labelPrefix != "" {
			t.Label = labelPrefix + "Pod/" + head.Metadata.Name
		}
		return t, nil
	}
	t.Label = labelPrefix + head.Kind + "/" + head.Metadata.Name
	raw, err = valueAt(raw, template)
	if err != nil {
		return PodTarget{}, fmt.Errorf("%s has no pod template (%s): %w", t.Label, strings.ReplaceAll(template[1:], "/", "."), err)
	}
	var tmpl struct {
		Metadata json.RawMessage `json:"metadata"`
		Spec     json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return PodTarget{}, fmt.Errorf("%s: the pod template is not an object: %w", t.Label, err)
	}
	if len(tmpl.Metadata) == 0 {
		tmpl.Metadata = json.RawMessage("{}")
	}
	if len(tmpl.Spec) == 0 {
		return PodTarget{}, fmt.Errorf("%s: the pod template has no spec", t.Label)
	}
	var templateName struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &templateName)
	t.Name = templateName.Metadata.Name // the controller names the pod; the template rarely does
	t.Pod, err = json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": tmpl.Metadata, "spec": tmpl.Spec})
	return t, err
}

// valueAt is the JSON value at pointer in doc.
func valueAt(doc []byte, pointer string) ([]byte, error) {
	tokens, err := jsonpointer.Parse(pointer)
	if err != nil {
		return nil, err
	}
	cur := json.RawMessage(doc)
	for _, tok := range tokens {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(cur, &obj); err != nil {
			return nil, fmt.Errorf("%s is not an object", tok)
		}
		next, ok := obj[tok]
		if !ok || string(next) == "null" {
			return nil, fmt.Errorf("no %s", tok)
		}
		cur = next
	}
	return cur, nil
}

// RebasePatch moves a pod's patch to pointer in its document: every op's
// path gets pointer in front (add, remove and replace have no from).
func RebasePatch(patch []byte, pointer string) ([]jsonpatch.Op, error) {
	var ops []jsonpatch.Op
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, fmt.Errorf("decode the front door's patch: %w", err)
	}
	for i := range ops {
		if !strings.HasPrefix(ops[i].Path, "/") {
			return nil, fmt.Errorf("the front door's patch has a path %q outside the pod", ops[i].Path)
		}
		ops[i].Path = pointer + ops[i].Path
	}
	return ops, nil
}
