package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
)

// inject takes workloads as istioctl kube-inject does (issue 15): the pod
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

// injectKinds names what inject patches, for the messages.
const injectKinds = "Pods, Deployments, StatefulSets, DaemonSets, ReplicaSets, ReplicationControllers, Jobs, CronJobs and Lists of them"

// checkInjectKind is inject's kind rule for one object: a Pod or a workload
// of its apiVersion is patched, a kind inject does not know passes through
// unchanged (as kubectl apply would take it: a Service, a ConfigMap); an
// object without a kind, or a Pod or workload kind of another apiVersion,
// is refused, never passed through.
func checkInjectKind(apiVersion, kind string) (patched bool, err error) {
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

// injectTakesWorkloads is inject's rule for a document (see checkInjectKind;
// a v1 List's items are checked as they are expanded).
func injectTakesWorkloads(doc *manifestDocument) error {
	if err := doc.decodeHead(); err != nil {
		return fmt.Errorf("inject takes %s; %s is not an object: %w", injectKinds, doc.where(), err)
	}
	if doc.head.APIVersion == "v1" && doc.head.Kind == "List" {
		return nil
	}
	if _, err := checkInjectKind(doc.head.APIVersion, doc.head.Kind); err != nil {
		return fmt.Errorf("inject takes %s; %s is %w", injectKinds, doc.where(), err)
	}
	return nil
}

// podTarget is one pod of a document: a Pod, or a workload's template.
type podTarget struct {
	// pointer is where the pod is in the document ("" = the document).
	pointer string
	// label names the pod's owner in messages ("" for a Pod document).
	label string
	// pod is the Pod decided: the document, or apiVersion v1, kind Pod and
	// the template's metadata and spec; nil for an object that passes
	// through unchanged.
	pod             []byte
	namespace, name string
}

// objectHead is what locating a pod needs of an object.
type objectHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// podTargets lists the pods of doc in document order. The namespace of a
// template is its object's (--namespace, else metadata.namespace, else
// default).
func podTargets(doc *manifestDocument, namespaceFlag string) ([]podTarget, error) {
	if doc.head.Kind != "List" {
		t, err := objectPodTarget(doc.raw, "", namespaceFlag, "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc.where(), err)
		}
		return []podTarget{t}, nil
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc.raw, &list); err != nil {
		return nil, fmt.Errorf("%s: a List whose items are not objects: %w", doc.where(), err)
	}
	targets := make([]podTarget, 0, len(list.Items))
	for i, item := range list.Items {
		t, err := objectPodTarget(item, "/items/"+strconv.Itoa(i), namespaceFlag, "List item "+strconv.Itoa(i+1)+" ")
		if err != nil {
			return nil, fmt.Errorf("%s, List item %d: %w", doc.where(), i+1, err)
		}
		targets = append(targets, t)
	}
	return targets, nil
}

// objectPodTarget locates the pod of one object at pointer in its document.
func objectPodTarget(raw []byte, pointer, namespaceFlag, labelPrefix string) (podTarget, error) {
	var head objectHead
	if err := json.Unmarshal(raw, &head); err != nil {
		return podTarget{}, fmt.Errorf("not an object: %w", err)
	}
	patched, err := checkInjectKind(head.APIVersion, head.Kind)
	if err != nil {
		return podTarget{}, fmt.Errorf("inject takes %s; this is %w", injectKinds, err)
	}
	if !patched {
		return podTarget{label: labelPrefix + head.Kind + "/" + head.Metadata.Name}, nil
	}
	template := podTemplatePointers[[2]string{head.APIVersion, head.Kind}]
	namespace := namespaceFlag
	if namespace == "" {
		namespace = head.Metadata.Namespace
	}
	if namespace == "" {
		namespace = "default"
	}
	t := podTarget{pointer: pointer + template, namespace: namespace, name: head.Metadata.Name}
	if template == "" {
		t.pod = raw
		if labelPrefix != "" {
			t.label = labelPrefix + "Pod/" + head.Metadata.Name
		}
		return t, nil
	}
	t.label = labelPrefix + head.Kind + "/" + head.Metadata.Name
	raw, err = valueAt(raw, template)
	if err != nil {
		return podTarget{}, fmt.Errorf("%s has no pod template (%s): %w", t.label, strings.ReplaceAll(template[1:], "/", "."), err)
	}
	var tmpl struct {
		Metadata json.RawMessage `json:"metadata"`
		Spec     json.RawMessage `json:"spec"`
	}
	if err := json.Unmarshal(raw, &tmpl); err != nil {
		return podTarget{}, fmt.Errorf("%s: the pod template is not an object: %w", t.label, err)
	}
	if len(tmpl.Metadata) == 0 {
		tmpl.Metadata = json.RawMessage("{}")
	}
	if len(tmpl.Spec) == 0 {
		return podTarget{}, fmt.Errorf("%s: the pod template has no spec", t.label)
	}
	var templateName struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &templateName)
	t.name = templateName.Metadata.Name // the controller names the pod; the template rarely does
	t.pod, err = json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": tmpl.Metadata, "spec": tmpl.Spec})
	return t, err
}

// valueAt is the JSON value at pointer in doc.
func valueAt(doc []byte, pointer string) ([]byte, error) {
	tokens, err := jsonpatch.ParsePointer(pointer)
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

// rebasePatch moves a pod's patch to pointer in its document: every op's
// path gets pointer in front (add, remove and replace have no from).
func rebasePatch(patch []byte, pointer string) ([]jsonpatch.Op, error) {
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
