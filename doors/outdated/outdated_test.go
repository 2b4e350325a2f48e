package outdated

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// asking is what a pod template asks for: a consul render.
var asking = map[string]string{
	"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "consul", "dynamic-config.rs/endpoint": "http://consul:8500",
	"dynamic-config.rs/key": "app/config.json", "dynamic-config.rs/path": "/config/app.json",
}

// withImage is an installation whose agent image is image; agent-image
// annotations under registry.local/ are allowed.
func withImage(t *testing.T, image string) *installation.Installation {
	t.Helper()
	inst, err := installation.Build(installation.Document{}, []string{
		"DYNAMIC_CONFIG_AGENT_IMAGE=" + image, installation.VarImageAllow + "=registry.local/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func newEngine(t *testing.T, inst *installation.Installation) *engine.Engine {
	t.Helper()
	e, err := engine.New(inst, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func template(extra map[string]string) corev1.PodTemplateSpec {
	a := map[string]string{}
	for k, v := range asking {
		a[k] = v
	}
	for k, v := range extra {
		a[k] = v
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: a},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
	}
}

// podOf is the pod a controller makes of t, injected under e, with the
// controller owner reference (kind, name) and labels.
func podOf(t *testing.T, e *engine.Engine, ns, name, ownerKind, owner string, labels map[string]string, tmpl corev1.PodTemplateSpec) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
	p.Namespace, p.Name = ns, name
	for k, v := range labels {
		p.Labels[k] = v
	}
	if ownerKind != "" {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{Kind: ownerKind, Name: owner, Controller: &yes}}
	}
	out, refused, err := inject(e, p)
	if err != nil || refused != "" {
		t.Fatal(err, refused)
	}
	return out
}

func deployment(ns, name string, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{Template: tmpl}}
}

func TestFindListsTheWorkloadsWhoseAgentPartTheActiveInstallationWouldChange(t *testing.T) {
	r1, r2 := withImage(t, "registry.local/agent:v1"), withImage(t, "registry.local/agent:v2")
	e1, e2 := newEngine(t, r1), newEngine(t, r2)
	plain, pinned := template(nil), template(map[string]string{"dynamic-config.rs/agent-image": "registry.local/agent:pinned"})
	hash := func(h string) map[string]string { return map[string]string{"pod-template-hash": h} }
	cron := batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nightly"}}
	cron.Spec.JobTemplate.Spec.Template = plain
	bare := podOf(t, e1, "shop", "debug", "", "", nil, plain)
	bare.GenerateName = "debug-"
	objects := []runtime.Object{
		deployment("shop", "web", plain), deployment("shop", "pinned", pinned), deployment("shop", "fresh", plain), &cron,
		podOf(t, e1, "shop", "web-5d9c-a", "ReplicaSet", "web-5d9c", hash("5d9c"), plain),
		podOf(t, e1, "shop", "web-5d9c-b", "ReplicaSet", "web-5d9c", hash("5d9c"), plain),
		podOf(t, e1, "shop", "pinned-77f4-a", "ReplicaSet", "pinned-77f4", hash("77f4"), pinned),
		podOf(t, e2, "shop", "fresh-6f8d-a", "ReplicaSet", "fresh-6f8d", hash("6f8d"), plain),
		podOf(t, e1, "shop", "nightly-29000000-x", "Job", "nightly-29000000", nil, plain),
		bare,
	}
	report, err := Find(context.Background(), fake.NewClientset(objects...), e2, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range report.Workloads {
		got = append(got, w.Key())
		if w.Revisions[0] != annotation.Stamp(r1.Revision) || strings.Join(w.Paths, " ") != "containers[dynamic-config-agent].image" {
			t.Errorf("%s: revisions %v, paths %v; want [%s] and the agent image", w.Key(), w.Revisions, w.Paths, annotation.Stamp(r1.Revision))
		}
	}
	want := "shop/CronJob/nightly shop/Deployment/web shop/Pod/debug-"
	if strings.Join(got, " ") != want {
		t.Errorf("listed %v, want %s (not the pinned Deployment, whose agent part R2 leaves alone, nor the one already on R2)", got, want)
	}
	if report.Active != annotation.Stamp(r2.Revision) || report.Checked != 4 {
		t.Errorf("active %s, checked %d; want %s and 4 (web, pinned, nightly, debug-)", report.Active, report.Checked, annotation.Stamp(r2.Revision))
	}
	if len(report.Workloads) > 1 && report.Workloads[1].Pods != 2 {
		t.Errorf("web has %d pods listed, want 2", report.Workloads[1].Pods)
	}
}

func TestTheAgentPartOfARunningPodEqualsTheTemplateInjectedUnderTheSameInstallation(t *testing.T) {
	e := newEngine(t, withImage(t, "registry.local/agent:v1"))
	running := podOf(t, e, "shop", "web-1", "ReplicaSet", "web-1", nil, template(nil))
	// The API server defaults what the injection leaves out; the reader skips it.
	for i := range running.Spec.InitContainers {
		running.Spec.InitContainers[i].ImagePullPolicy = corev1.PullIfNotPresent
		running.Spec.InitContainers[i].TerminationMessagePath = "/dev/termination-log"
	}
	now := podOf(t, e, "shop", "web-2", "ReplicaSet", "web-1", nil, template(nil))
	if paths := Diff(AgentPart(running), AgentPart(now)); len(paths) != 0 {
		t.Errorf("the same installation differs at %v", paths)
	}
	if len(AgentPart(now).Agents) == 0 {
		t.Error("the injected pod has no agent part: the comparison would be empty on both sides")
	}
	if got := AgentPart(Uninjected(running)); len(got.Agents)+len(got.Volumes)+len(got.AppMounts) != 0 {
		t.Errorf("Uninjected left an agent part: %+v", got)
	}
}

func TestTheReportIsATableOrJSON(t *testing.T) {
	r := &Report{Active: "aaaaaaaaaaaa", Checked: 2, Workloads: []Workload{{Namespace: "shop", Kind: "Deployment", Name: "web", Pods: 3,
		Revisions: []string{"bbbbbbbbbbbb"}, Paths: []string{"containers[dynamic-config-agent].image"}}}}
	var table, js bytes.Buffer
	if err := Write(&table, "table", r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"active revision aaaaaaaaaaaa: 1 of 2", "shop/Deployment/web", "3", "bbbbbbbbbbbb", "containers[dynamic-config-agent].image"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
	if err := Write(&js, "json", r); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Workloads[0].Key() != "shop/Deployment/web" || back.Workloads[0].Pods != 3 {
		t.Errorf("the JSON does not read back: %v %s", err, js.String())
	}
	if CheckOutput("yaml") == "" || CheckOutput("json") != "" {
		t.Error("CheckOutput takes table and json only")
	}
}

func TestAWorkloadTheActiveInstallationRefusesIsListedAndNeverRestarted(t *testing.T) {
	r1 := withImage(t, "registry.local/agent:v1")
	denying, err := installation.Build(installation.Document{}, []string{"DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY=consul"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := template(nil)
	c := fake.NewClientset(deployment("shop", "web", plain),
		podOf(t, newEngine(t, r1), "shop", "web-5d9c-a", "ReplicaSet", "web-5d9c", map[string]string{"pod-template-hash": "5d9c"}, plain))
	report, err := Find(context.Background(), c, newEngine(t, denying), "shop")
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Workloads) != 1 || report.Workloads[0].Refused == "" {
		t.Fatalf("want web listed with the refusal: %+v", report.Workloads)
	}
	var out bytes.Buffer
	if err := Restart(context.Background(), c, report.Workloads, RestartOptions{MaxInFlight: 1, Timeout: time.Second, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if names, _, _ := patched(c); len(names) != 0 || !strings.Contains(out.String(), "left alone: shop/Deployment/web (the active installation refuses") {
		t.Errorf("patched %v; progress:\n%s", names, out.String())
	}
}
