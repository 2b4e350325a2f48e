package outdated

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// rolled is a Deployment whose status says its rollout is done; stuck one
// whose new replica never comes up.
func rolled(name string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	d.Status = appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
	return d
}

func stuck(name string) *appsv1.Deployment {
	d := rolled(name)
	d.Status.UpdatedReplicas, d.Status.AvailableReplicas = 0, 0
	return d
}

// patched is the names patched, in order, and the patch options of each.
func patched(c *fake.Clientset) (names []string, opts []metav1.PatchOptions, bodies []string) {
	for _, a := range c.Actions() {
		if p, ok := a.(k8stesting.PatchActionImpl); ok {
			names, opts, bodies = append(names, p.Name), append(opts, p.PatchOptions), append(bodies, string(p.Patch))
		}
	}
	return names, opts, bodies
}

func listed(kind string, names ...string) []Workload {
	var out []Workload
	for _, n := range names {
		out = append(out, Workload{Namespace: "shop", Kind: kind, Name: n})
	}
	return out
}

func TestRestartPatchesTheTemplateAsKubectlDoesAndWaitsForEachRollout(t *testing.T) {
	c := fake.NewClientset(rolled("web"), rolled("api"))
	var out bytes.Buffer
	at := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	err := Restart(context.Background(), c, listed("Deployment", "web", "api"),
		RestartOptions{MaxInFlight: 1, Timeout: time.Second, Poll: 10 * time.Millisecond, Now: func() time.Time { return at }, Out: &out})
	if err != nil {
		t.Fatalf("Restart: %v\n%s", err, out.String())
	}
	names, opts, bodies := patched(c)
	if strings.Join(names, " ") != "web api" {
		t.Errorf("patched %v, want web then api, each once", names)
	}
	for i, b := range bodies {
		if want := `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-12-05T04:00:00Z"}}}}}`; b != want || len(opts[i].DryRun) != 0 {
			t.Errorf("patch %d = %s %v, want %s without dry run", i, b, opts[i].DryRun, want)
		}
	}
	d, _ := c.AppsV1().Deployments("shop").Get(context.Background(), "web", metav1.GetOptions{})
	if d.Spec.Template.Annotations[RestartedAtKey] != "2026-12-05T04:00:00Z" {
		t.Errorf("the template's annotations are %v", d.Spec.Template.Annotations)
	}
	if !strings.Contains(out.String(), "rolled out: shop/Deployment/api") {
		t.Errorf("the progress does not say api rolled out:\n%s", out.String())
	}
}

func TestRestartStopsAtTheFirstRolloutThatDoesNotFinishInTime(t *testing.T) {
	c := fake.NewClientset(stuck("web"), rolled("api"))
	var out bytes.Buffer
	err := Restart(context.Background(), c, listed("Deployment", "web", "api"),
		RestartOptions{MaxInFlight: 1, Timeout: 100 * time.Millisecond, Poll: 10 * time.Millisecond, Out: &out})
	if !errors.Is(err, ErrNotFinished) || !strings.Contains(err.Error(), "0 out of 1 new replicas have been updated") {
		t.Fatalf("Restart = %v, want ErrNotFinished naming what it waited for", err)
	}
	if names, _, _ := patched(c); strings.Join(names, " ") != "web" {
		t.Errorf("patched %v, want web only: nothing starts after the first that did not finish", names)
	}
	if !strings.Contains(out.String(), "not finished: shop/Deployment/web") {
		t.Errorf("the progress does not name it:\n%s", out.String())
	}
}

func TestRestartLeavesJobsCronJobsBarePodsAndOnDeleteUpdatesAlone(t *testing.T) {
	onDelete := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "agent"}}
	onDelete.Spec.UpdateStrategy.Type = appsv1.OnDeleteDaemonSetStrategyType
	c := fake.NewClientset([]runtime.Object{onDelete}...)
	var out bytes.Buffer
	ws := append(append(append(listed("Job", "migrate"), listed("CronJob", "nightly")...), listed("Pod", "debug-")...), listed("DaemonSet", "agent")...)
	if err := Restart(context.Background(), c, ws, RestartOptions{MaxInFlight: 2, Timeout: time.Second, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if names, _, _ := patched(c); len(names) != 0 {
		t.Errorf("patched %v, want nothing", names)
	}
	for _, key := range []string{"shop/Job/migrate", "shop/CronJob/nightly", "shop/Pod/debug-", "shop/DaemonSet/agent"} {
		if !strings.Contains(out.String(), "left alone: "+key) {
			t.Errorf("%s is not listed as left alone:\n%s", key, out.String())
		}
	}
}

func TestADryRunSendsEveryPatchAsTheAPIServersDryRunAndWaitsForNone(t *testing.T) {
	c := fake.NewClientset(stuck("web"), stuck("api"))
	var out bytes.Buffer
	if err := Restart(context.Background(), c, listed("Deployment", "web", "api"), RestartOptions{DryRun: true, MaxInFlight: 1, Timeout: 50 * time.Millisecond, Out: &out}); err != nil {
		t.Fatalf("a dry run waits for no rollout: %v", err)
	}
	names, opts, _ := patched(c)
	if len(names) != 2 || len(opts[0].DryRun) != 1 || opts[0].DryRun[0] != metav1.DryRunAll || len(opts[1].DryRun) != 1 {
		t.Errorf("patched %v with %v, want both with dryRun=All", names, opts)
	}
	if strings.Count(out.String(), "would restart: ") != 2 {
		t.Errorf("the progress does not say what would restart:\n%s", out.String())
	}
}

func TestTheRolloutIsJudgedAsKubectlRolloutStatusJudgesIt(t *testing.T) {
	two, one := int32(2), int32(1)
	dep := func(gen, observed int64, s appsv1.DeploymentStatus, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: gen}, Spec: appsv1.DeploymentSpec{Replicas: &two}}
		s.ObservedGeneration, s.Conditions = observed, conds
		d.Status = s
		return d
	}
	deployments := []struct {
		name         string
		d            *appsv1.Deployment
		done, failed bool
	}{
		{"a Deployment whose new generation is not observed yet is waited for", dep(3, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}), false, false},
		{"a Deployment with fewer updated replicas than wanted is waited for", dep(3, 3, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 2}), false, false},
		{"a Deployment with old replicas left is waited for", dep(3, 3, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 2, AvailableReplicas: 2}), false, false},
		{"a Deployment whose updated replicas are not all available is waited for", dep(3, 3, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 1}), false, false},
		{"a Deployment with every replica updated and available is done", dep(3, 3, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}), true, false},
		{"a Deployment past its progress deadline failed", dep(3, 3, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1},
			appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded"}), false, true},
	}
	for _, tt := range deployments {
		t.Run(tt.name, func(t *testing.T) {
			if status, done, failed := DeploymentStatus(tt.d); done != tt.done || failed != tt.failed {
				t.Errorf("DeploymentStatus = %q, done %v, failed %v", status, done, failed)
			}
		})
	}
	sts := func(observed int64, ready, updated int32, current, update string, partition *int32) *appsv1.StatefulSet {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: &two}}
		if partition != nil {
			s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: partition}
		}
		s.Status = appsv1.StatefulSetStatus{ObservedGeneration: observed, ReadyReplicas: ready, UpdatedReplicas: updated, CurrentRevision: current, UpdateRevision: update}
		return s
	}
	statefulSets := []struct {
		name string
		s    *appsv1.StatefulSet
		done bool
	}{
		{"a StatefulSet whose generation is not observed is waited for", sts(1, 2, 2, "a", "a", nil), false},
		{"a StatefulSet with a pod not ready is waited for", sts(2, 1, 2, "a", "a", nil), false},
		{"a StatefulSet between two revisions is waited for", sts(2, 2, 1, "a", "b", nil), false},
		{"a StatefulSet on one revision with every pod ready is done", sts(2, 2, 2, "b", "b", nil), true},
		{"a partitioned StatefulSet is done when the pods above the partition are updated", sts(2, 2, 1, "a", "b", &one), true},
	}
	for _, tt := range statefulSets {
		t.Run(tt.name, func(t *testing.T) {
			if status, done := StatefulSetStatus(tt.s); done != tt.done {
				t.Errorf("StatefulSetStatus = %q, done %v", status, done)
			}
		})
	}
	ds := func(observed int64, desired, updated, available int32) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: appsv1.DaemonSetStatus{ObservedGeneration: observed,
			DesiredNumberScheduled: desired, UpdatedNumberScheduled: updated, NumberAvailable: available}}
	}
	daemonSets := []struct {
		name string
		d    *appsv1.DaemonSet
		done bool
	}{
		{"a DaemonSet whose generation is not observed is waited for", ds(1, 3, 3, 3), false},
		{"a DaemonSet with a node not updated is waited for", ds(2, 3, 2, 3), false},
		{"a DaemonSet with an updated pod not available is waited for", ds(2, 3, 3, 2), false},
		{"a DaemonSet updated and available on every node is done", ds(2, 3, 3, 3), true},
	}
	for _, tt := range daemonSets {
		t.Run(tt.name, func(t *testing.T) {
			if status, done := DaemonSetStatus(tt.d); done != tt.done {
				t.Errorf("DaemonSetStatus = %q, done %v", status, done)
			}
		})
	}
}
