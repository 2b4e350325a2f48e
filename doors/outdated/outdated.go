// Package outdated finds and rolls the workloads an older revision injected
// (spec 10 §8, issue 42): the workloads whose pods carry another revision
// stamp than the active installation's and whose agent part — agent
// containers, volumes, mounts — would differ if their pod template were
// injected now (Find, behind `audit-pods --outdated`), and their restart
// the way `kubectl rollout restart` does it, a few at a time, each rollout
// judged finished the way `kubectl rollout status` judges it (Restart,
// behind `rollout restart --outdated`).
package outdated

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/kubeclient"
	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
	"github.com/dynamic-config-admission/dynamic-config/podaudit"
)

// Workload is one workload the audit lists: its pods on another revision
// and what differs in their agent part.
type Workload struct {
	// Namespace, Kind and Name are the workload key's (spec 10 §1; the
	// cluster part is the decider's, which the audit does not name).
	Namespace string `json:"namespace"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	// Pods is how many of its pods carry a revision other than the active.
	Pods int `json:"pods"`
	// Revisions are those pods' stamps, sorted ("_none": injected before
	// stamps existed).
	Revisions []string `json:"revisions"`
	// Paths are the differing paths of the agent part (spec 10 §3 names).
	Paths []string `json:"paths"`
	// Refused is the active installation's refusal of the pod template
	// ("" = none): listed, since the next pod would not be admitted, and
	// never restarted.
	Refused string `json:"refused,omitempty"`
	// Template says where the pod decided now came from: "Deployment
	// shop/web"'s template, or "the pod itself" for a bare pod (or an owner
	// the audit does not read, or one that is gone).
	Template string `json:"template"`
}

// Key is the workload key's namespace/kind/name.
func (w Workload) Key() string { return w.Namespace + "/" + w.Kind + "/" + w.Name }

// Report is what Find found.
type Report struct {
	// Active is the active installation's revision stamp.
	Active string `json:"active"`
	// Checked is how many workloads had pods on another revision.
	Checked int `json:"checked"`
	// Workloads are the listed ones, by key.
	Workloads []Workload `json:"workloads"`
}

// group is the injected pods of one workload on another revision: one pod
// of each revision, whose agent part is compared.
type group struct {
	key    workload.Key
	pods   int
	sample map[string]*corev1.Pod // by revision
}

// Find lists the outdated workloads of namespace ("" = every namespace):
// it reads the active revision from eng (the cluster's decider, or the
// installation given), groups the injected pods whose stamp differs by
// workload key, injects each workload's pod template through eng as the
// controller's next pod, and lists the workloads where the agent part of
// one of their pods differs from it.
func Find(ctx context.Context, typed kubernetes.Interface, eng *engine.Engine, namespace string) (*Report, error) {
	revision, err := eng.Revision(ctx)
	if err != nil {
		return nil, err
	}
	active := annotation.Stamp(revision)
	pods, err := typed.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the pods: %w", err)
	}
	groups := map[workload.Key]*group{}
	for i := range pods.Items {
		p := &pods.Items[i]
		rev, injected := podaudit.RevisionOf(p.Annotations)
		if !injected || rev == active || p.DeletionTimestamp != nil {
			continue
		}
		key := workload.Of("", objectOf(p))
		g := groups[key]
		if g == nil {
			g = &group{key: key, sample: map[string]*corev1.Pod{}}
			groups[key] = g
		}
		g.pods++
		if g.sample[rev] == nil {
			g.sample[rev] = p
		}
	}
	report := &Report{Active: active, Checked: len(groups), Workloads: []Workload{}}
	for _, g := range groups {
		w, err := compare(ctx, typed, eng, g)
		if err != nil {
			return nil, err
		}
		if len(w.Paths) > 0 {
			report.Workloads = append(report.Workloads, w)
		}
	}
	sort.Slice(report.Workloads, func(i, j int) bool { return report.Workloads[i].Key() < report.Workloads[j].Key() })
	return report, nil
}

// compare injects g's pod template now and compares each revision's pod
// with it.
func compare(ctx context.Context, typed kubernetes.Interface, eng *engine.Engine, g *group) (Workload, error) {
	w := Workload{Namespace: g.key.Namespace, Kind: g.key.Kind, Name: g.key.Name, Pods: g.pods, Paths: []string{}}
	var any *corev1.Pod
	for rev, p := range g.sample {
		w.Revisions = append(w.Revisions, rev)
		any = p
	}
	slices.Sort(w.Revisions)
	template, from, err := Template(ctx, typed, g.key, any)
	if err != nil {
		return w, err
	}
	w.Template = from
	now, refused, err := inject(eng, template)
	if err != nil {
		return w, fmt.Errorf("%s: %w", w.Key(), err)
	}
	if refused != "" {
		w.Refused, w.Paths = refused, []string{"(refused)"}
		return w, nil
	}
	for _, rev := range w.Revisions {
		for _, path := range Diff(AgentPart(g.sample[rev]), AgentPart(now)) {
			if !slices.Contains(w.Paths, path) {
				w.Paths = append(w.Paths, path)
			}
		}
	}
	slices.Sort(w.Paths)
	return w, nil
}

// inject runs pod through eng as the API server would admit it and returns
// the pod stored, or the refusal's message.
func inject(eng *engine.Engine, pod *corev1.Pod) (*corev1.Pod, string, error) {
	raw, err := json.Marshal(pod)
	if err != nil {
		return nil, "", fmt.Errorf("encode the pod template: %w", err)
	}
	admitted, err := eng.AdmitPod(raw, pod.Namespace, pod.Name)
	if err != nil {
		return nil, "", fmt.Errorf("inject the pod template: %w", err)
	}
	if admitted.Refused() {
		msg := "refused"
		if admitted.Answer.Status != nil {
			msg = admitted.Answer.Status.Message
		}
		return nil, msg, nil
	}
	out := &corev1.Pod{}
	if err := json.Unmarshal(admitted.Mutated, out); err != nil {
		return nil, "", fmt.Errorf("decode the injected pod template: %w", err)
	}
	return out, "", nil
}

// Template is the pod the workload's controller would create next, as the
// API server receives it: the owner's pod template (a Deployment's,
// StatefulSet's, DaemonSet's, ReplicaSet's, Job's, or a CronJob's job
// template's) with pod's namespace, generateName and owner references, so
// that the decider names the same workload; from says which. A bare pod, an
// owner of another kind, or an owner that is gone: pod without what the
// injection added (Uninjected).
func Template(ctx context.Context, typed kubernetes.Interface, key workload.Key, pod *corev1.Pod) (out *corev1.Pod, from string, err error) {
	var t *corev1.PodTemplateSpec
	ns, name := key.Namespace, key.Name
	switch key.Kind {
	case "Deployment":
		o, e := typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		t, err = templateOf(o, e, func() *corev1.PodTemplateSpec { return &o.Spec.Template })
	case "StatefulSet":
		o, e := typed.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		t, err = templateOf(o, e, func() *corev1.PodTemplateSpec { return &o.Spec.Template })
	case "DaemonSet":
		o, e := typed.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		t, err = templateOf(o, e, func() *corev1.PodTemplateSpec { return &o.Spec.Template })
	case "ReplicaSet":
		o, e := typed.AppsV1().ReplicaSets(ns).Get(ctx, name, metav1.GetOptions{})
		t, err = templateOf(o, e, func() *corev1.PodTemplateSpec { return &o.Spec.Template })
	case "Job":
		o, e := typed.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		t, err = templateOf(o, e, func() *corev1.PodTemplateSpec { return &o.Spec.Template })
	case "CronJob":
		o, e := typed.BatchV1().CronJobs(ns).Get(ctx, name, metav1.GetOptions{})
		t, err = templateOf(o, e, func() *corev1.PodTemplateSpec { return &o.Spec.JobTemplate.Spec.Template })
	}
	if err != nil {
		return nil, "", fmt.Errorf("read the %s %s/%s: %w", key.Kind, ns, name, err)
	}
	if t == nil {
		return Uninjected(pod), "the pod itself", nil
	}
	out = &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
	out.Namespace, out.GenerateName, out.OwnerReferences = pod.Namespace, pod.GenerateName, pod.OwnerReferences
	if hash, ok := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok { // the ReplicaSet's, which the key reads
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	}
	return out, key.Kind + " " + ns + "/" + name, nil
}

// templateOf is template() of an owner read with err: nil, nil when the
// owner is gone.
func templateOf[T any](o *T, err error, template func() *corev1.PodTemplateSpec) (*corev1.PodTemplateSpec, error) {
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, err
	case o == nil:
		return nil, errors.New("the API server answered nothing")
	}
	return template(), nil
}

// objectOf is what the workload key is read from in pod.
func objectOf(p *corev1.Pod) workload.Object {
	o := workload.Object{Namespace: p.Namespace, Kind: "Pod", Name: p.Name, GenerateName: p.GenerateName, Labels: p.Labels}
	if c := metav1.GetControllerOf(p); c != nil {
		o.ControllerKind, o.ControllerName = c.Kind, c.Name
	}
	return o
}

// Selection is what a command selects the outdated workloads with:
// kubectl's --kubeconfig, -n and -A, and the cluster's decider (the front
// door's client: its TLS, mTLS and token), whose active installation the
// pods are compared with.
type Selection struct {
	Kubeconfig kubeclient.Kubeconfig
	Namespace  string
	All        bool
	Decider    client.Config
}

// List is Find over the selection; it returns the API server client it
// read with, for the restart.
func (s Selection) List(ctx context.Context) (kubernetes.Interface, *Report, error) {
	namespace, err := s.Kubeconfig.Scope(s.Namespace, s.All)
	if err != nil {
		return nil, nil, err
	}
	if s.Decider.Target == "" {
		return nil, nil, errors.New("no decider to ask: --outdated compares with the active installation of the cluster's decider; give its gRPC address with --decider-target (e.g. static:///127.0.0.1:9443 through kubectl port-forward)")
	}
	typed, err := s.Kubeconfig.Typed()
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(s.Decider)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	report, err := Find(ctx, typed, engine.Remote(c.Conn()), namespace)
	return typed, report, err
}
