package e2e

// The front door's decision cache through the real kube-apiserver (issue
// 43): pods of one ReplicaSet ask one question; an installation edit is
// never answered with the old revision once the decider announced the new
// one; a decider outage does not refuse the scale-up of a workload the
// front door already answered, for as long as --decision-cache-stale-if-error
// allows, while a new template is refused.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startControllerManager runs the run's kube-controller-manager with only
// controllers (e.g. "replicaset" or "deployment,replicaset") until t ends:
// the controllers create the pods of workloads through the API server, as in
// a cluster (no scheduler or kubelet: the pods are only stored).
func startControllerManager(t *testing.T, controllers string) {
	t.Helper()
	kcm := mustEnv(t, envKubeControllerManager)
	mustStart(t, "kube-controller-manager", filepath.Join(testDir(t), "kube-controller-manager.log"), nil, kcm,
		"--kubeconfig", theCluster.kubeconfig,
		"--controllers", controllers,
		"--leader-elect=false",
		"--secure-port", "0",
		"--v", "1")
}

func mustEnv(t *testing.T, name string) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		t.Fatalf("%s is not set; run the end-to-end tests with `make e2e`", name)
	}
	return v
}

// admissionLine is one front door admission line (spec 07 §4) and the
// decision cache's fields of it.
type admissionLine struct {
	Time             time.Time `json:"time"`
	Msg              string    `json:"msg"`
	Name             string    `json:"name"`
	Outcome          string    `json:"outcome"`
	DecisionID       string    `json:"decision_id"`
	Revision         string    `json:"revision"`
	DurationMS       float64   `json:"duration_ms"`
	DecisionSource   string    `json:"decision_source"`
	OriginDecisionID string    `json:"origin_decision_id"`
	// The revision watch's announcement lines.
	AnnouncedRevision string `json:"-"`
}

// start is when the admission began: its line's time less its duration.
func (l admissionLine) start() time.Time {
	return l.Time.Add(-time.Duration(l.DurationMS * float64(time.Millisecond)))
}

// frontDoorLines reads the front door's JSON log: its admission lines for
// names starting with prefix, and the revision watch's announcements (msg
// "decision cache: the decider announced its revisions").
func frontDoorLines(t *testing.T, p *process, prefix string) (admissions, announcements []admissionLine) {
	t.Helper()
	s := bufio.NewScanner(strings.NewReader(p.logText()))
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		var l admissionLine
		if json.Unmarshal(s.Bytes(), &l) != nil {
			continue
		}
		switch {
		case l.Msg == "admission" && strings.HasPrefix(l.Name, prefix):
			admissions = append(admissions, l)
		case strings.HasPrefix(l.Msg, "decision cache: the decider announced"):
			var a struct {
				Revision string `json:"revision"`
			}
			_ = json.Unmarshal(s.Bytes(), &a)
			l.AnnouncedRevision = a.Revision
			announcements = append(announcements, l)
		}
	}
	return admissions, announcements
}

// cachedReplicaSet is a ReplicaSet of asking pods named name-*.
func cachedReplicaSet(ns, name string, replicas int32) *appsv1.ReplicaSet {
	labels := map[string]string{"app": name}
	return &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: consulAnnotations()},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: appImage}}},
			},
		},
	}
}

// waitInjectedPods waits until n pods name-* are stored, each with its agent.
func waitInjectedPods(t *testing.T, ns, prefix string, n int, timeout time.Duration) {
	t.Helper()
	if err := eventually(fmt.Sprintf("%d pods %s* stored", n, prefix), timeout, 250*time.Millisecond, func() error {
		if got := len(podsWithPrefix(t, ns, prefix)); got < n {
			return fmt.Errorf("%d of %d pods", got, n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantAllInjected(t, ns, prefix, n)
}

// cachedFrontDoor is a decider and a front door with the decision cache
// (the default) and a metrics listener, registered for ns.
func cachedFrontDoor(t *testing.T, ns, installation string, extra ...string) (*decider, *process, string) {
	t.Helper()
	d := newDecider(t, "decider", installation)
	d.start()
	metricsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	p, door := startFrontdoor(t, "frontdoor", d.addr, append([]string{"--metrics-addr", metricsAddr}, extra...)...)
	registerInjection(t, ns+"-inject", ns, door, injection{})
	waitForEffect(t, "the webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
	return d, p, metricsAddr
}

func TestTwoPodsOfOneReplicaSetAskTheDeciderOneQuestion(t *testing.T) {
	ns := newNamespace(t)
	installation := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, installation, seedInstallation(t))
	_, door, _ := cachedFrontDoor(t, ns, installation)
	startControllerManager(t, "replicaset")

	b, err := json.Marshal(cachedReplicaSet(ns, "twins", 1))
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, b, "create", "-f", "-")
	waitInjectedPods(t, ns, "twins-", 1, time.Minute)
	mustKubectl(t, nil, "-n", ns, "scale", "replicaset/twins", "--replicas", "2")
	waitInjectedPods(t, ns, "twins-", 2, time.Minute)

	lines, _ := frontDoorLines(t, door, "twins-")
	if len(lines) != 2 {
		t.Fatalf("the front door logged %d admissions of the ReplicaSet's pods; want 2: %+v", len(lines), lines)
	}
	first, second := lines[0], lines[1]
	t.Logf("e2e cache: ReplicaSet twins, pod 1: decision %s from %q; pod 2: decision %s from %q, origin %s",
		first.DecisionID, first.DecisionSource, second.DecisionID, second.DecisionSource, second.OriginDecisionID)
	if first.DecisionSource != "" || first.Outcome != "patched" {
		t.Errorf("the first pod was not decided by the decider: %+v", first)
	}
	// A hit needs the two keys equal byte for byte: the second pod, as the API
	// server sent it, asked exactly the first pod's question.
	if second.DecisionSource != "cache" || second.OriginDecisionID != first.DecisionID || second.DecisionID == first.DecisionID ||
		second.Outcome != "patched" {
		t.Errorf("the second pod of the ReplicaSet was not answered with the first pod's decision: %+v", second)
	}
}

func TestAnInstallationEditIsNeverAnsweredWithTheOldRevisionOnceAnnounced(t *testing.T) {
	ns := newNamespace(t)
	installation := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, installation, "watchSeconds: \"30\"\n")
	_, door, metricsAddr := cachedFrontDoor(t, ns, installation)

	// Four writers create pods of one template as fast as they are answered
	// (dry runs: nothing is stored), before, during and after the edit.
	template := pod(ns, "", consulAnnotations())
	template.GenerateName = "edit-"
	template.Labels = map[string]string{"app": "edit"}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var created, failed atomic.Int64
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				if r := createPod(template, true); r.code == 201 {
					created.Add(1)
				} else {
					failed.Add(1)
				}
			}
		})
	}
	time.Sleep(3 * time.Second)
	writeInstallation(t, installation, "watchSeconds: \"20\"\n")
	err := eventually("the new revision is announced to the front door", 30*time.Second, 100*time.Millisecond, func() error {
		if _, a := frontDoorLines(t, door, "edit-"); len(distinctRevisions(a)) < 2 {
			return errNoEffectYet
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}

	lines, announcements := frontDoorLines(t, door, "edit-")
	revs := distinctRevisions(announcements)
	oldRev, newRev := revs[0], revs[1]
	var announcedAt time.Time
	for _, a := range announcements {
		if a.AnnouncedRevision == newRev {
			announcedAt = a.Time
			break
		}
	}
	type counts struct{ total, old, hits, misses int }
	var before, after counts
	for _, l := range lines {
		c := &before
		if l.start().After(announcedAt) {
			c = &after
		}
		c.total++
		if l.Revision == oldRev {
			c.old++
		}
		if l.DecisionSource == "cache" {
			c.hits++
		} else {
			c.misses++
		}
	}
	t.Logf("e2e cache: installation edit %s → %s: %d creates answered, %d failed; lookups hit %.0f miss %.0f bypass %.0f",
		short(oldRev), short(newRev), created.Load(), failed.Load(),
		metricSum(t, metricsAddr, "dynamic_config_decision_cache_lookups_total", `result="hit"`),
		metricSum(t, metricsAddr, "dynamic_config_decision_cache_lookups_total", `result="miss"`),
		metricSum(t, metricsAddr, "dynamic_config_decision_cache_lookups_total", `result="bypass"`))
	t.Logf("e2e cache: begun before the announcement: %d admissions (%d with the old revision, %d hits, %d misses)",
		before.total, before.old, before.hits, before.misses)
	t.Logf("e2e cache: begun after the announcement:  %d admissions (%d with the old revision, %d hits, %d misses)",
		after.total, after.old, after.hits, after.misses)
	if after.old != 0 {
		t.Errorf("%d admissions begun after the front door heard %s were answered with the old revision %s", after.old, newRev, oldRev)
	}
	if before.hits == 0 || after.hits == 0 || after.total < 10 {
		t.Errorf("the scenario proves nothing: %d hits before the edit, %d after, %d admissions after", before.hits, after.hits, after.total)
	}
	if failed.Load() != 0 {
		t.Errorf("%d creates failed; want every one answered", failed.Load())
	}
}

// distinctRevisions are the announced installation revisions in order.
func distinctRevisions(announcements []admissionLine) []string {
	var out []string
	for _, a := range announcements {
		if len(out) == 0 || out[len(out)-1] != a.AnnouncedRevision {
			out = append(out, a.AnnouncedRevision)
		}
	}
	return out
}

func short(revision string) string {
	if len(revision) > 19 {
		return revision[:19] + "…"
	}
	return revision
}

// cachedDeployment is a Deployment of asking pods named name-*.
func cachedDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: consulAnnotations()},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: appImage}}},
			},
		},
	}
}

func TestADeciderOutageDoesNotRefuseASeenDeploymentUntilTheStaleBound(t *testing.T) {
	const staleBound = 30 * time.Second
	ns := newNamespace(t)
	installation := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, installation, seedInstallation(t))
	d, door, metricsAddr := cachedFrontDoor(t, ns, installation,
		"--on-decider-error", "deny", "--decision-cache-stale-if-error", staleBound.String())
	startControllerManager(t, "deployment,replicaset")

	b, err := json.Marshal(cachedDeployment(ns, "seen", 1))
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, b, "create", "-f", "-")
	waitInjectedPods(t, ns, "seen-", 1, time.Minute)

	d.kill()
	killed := time.Now()
	mustKubectl(t, nil, "-n", ns, "scale", "deployment/seen", "--replicas", "3")
	waitInjectedPods(t, ns, "seen-", 3, staleBound/2)
	newTemplate := createPod(pod(ns, "new-template", map[string]string{
		"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "vault", "dynamic-config.rs/key": "secret/data/new"}), false)
	lines, _ := frontDoorLines(t, door, "seen-")
	denied, stale := count(lines, func(l admissionLine) bool { return l.Outcome == "decider_error_denied" }),
		count(lines, func(l admissionLine) bool { return l.DecisionSource == "stale-cache" })
	t.Logf("e2e cache: decider killed; scale 1 → 3 of the seen Deployment within %s: %d stale answers, %d refusals; a new template: HTTP %d %.120s",
		time.Since(killed).Round(time.Millisecond), stale, denied, newTemplate.code, newTemplate.message())
	if denied != 0 || stale != 2 {
		t.Errorf("the scale-up got %d refusals and %d stale answers; want 0 and 2", denied, stale)
	}
	if newTemplate.ok() || !strings.Contains(newTemplate.message(), "DynamicConfigDeciderUnavailable") &&
		!strings.Contains(newTemplate.message(), "the decider was unavailable") {
		t.Errorf("a new template while the decider is down: HTTP %d %s; want the decider-unavailable denial", newTemplate.code, newTemplate.message())
	}

	time.Sleep(time.Until(killed.Add(staleBound + 2*time.Second)))
	mustKubectl(t, nil, "-n", ns, "scale", "deployment/seen", "--replicas", "4")
	after := createPod(pod(ns, "new-template-after", map[string]string{
		"dynamic-config.rs/inject": "true", "dynamic-config.rs/source": "vault", "dynamic-config.rs/key": "secret/data/new"}), false)
	if err := eventually("the scale-up after the stale bound is refused", time.Minute, 250*time.Millisecond, func() error {
		lines, _ := frontDoorLines(t, door, "seen-")
		if count(lines, func(l admissionLine) bool { return l.Outcome == "decider_error_denied" }) == 0 {
			return errNoEffectYet
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	lines, _ = frontDoorLines(t, door, "seen-")
	denied = count(lines, func(l admissionLine) bool { return l.Outcome == "decider_error_denied" })
	stored := len(podsWithPrefix(t, ns, "seen-"))
	t.Logf("e2e cache: after the stale bound (%s): scale 3 → 4: %d refusals, %d pods stored; a new template: HTTP %d; stale lookups %.0f",
		staleBound, denied, stored, after.code, metricSum(t, metricsAddr, "dynamic_config_decision_cache_lookups_total", `result="stale"`))
	if stored != 3 || after.ok() {
		t.Errorf("after the stale bound %d pods are stored and the new template's create got HTTP %d; want 3 and a refusal", stored, after.code)
	}
}

func count(lines []admissionLine, match func(admissionLine) bool) int {
	n := 0
	for _, l := range lines {
		if match(l) {
			n++
		}
	}
	return n
}
