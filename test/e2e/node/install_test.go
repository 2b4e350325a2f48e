package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// clusterDNS asks the cluster DNS (CoreDNS on the node's address) from the
// host: the kubernetes Service's name resolves, a name outside cluster.local
// does not (no forwarder is compiled in).
func clusterDNS(t *testing.T) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, "10.200.0.1:53")
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := r.LookupHost(ctx, "kubernetes.default.svc.cluster.local")
	if err != nil || len(addrs) != 1 || addrs[0] != "10.96.0.1" {
		t.Fatalf("kubernetes.default.svc.cluster.local = %v, %v; want [10.96.0.1]", addrs, err)
	}
	if addrs, err := r.LookupHost(ctx, "example.com"); err == nil {
		t.Fatalf("example.com resolved to %v through the cluster DNS: it must answer cluster.local only", addrs)
	}
}

// values is the chart values of every step: the image `make image` built,
// short bounds for the hooks, the audit reporter on; tls and extra are
// added per step (YAML text).
func writeValues(t *testing.T, name, extra string) string {
	t.Helper()
	path := filepath.Join(theNode.work, "values", name+".yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf(`image:
  repository: %s
  tag: %q
installProof:
  timeout: 1m
audit:
  enabled: true
  interval: 5s
%s`, theNode.imageRepo, theNode.imageTag, extra)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// helmInstall installs the chart as the README says, hooks on, and waits
// for the Deployments and the hook Jobs.
func helmInstall(t *testing.T) {
	values := writeValues(t, "install", "")
	start := time.Now()
	r := helm(8*time.Minute, "install", release, theNode.chart, "-n", releaseNS, "-f", values,
		"--wait", "--wait-for-jobs", "--timeout", "7m")
	if r.err != nil {
		t.Fatalf("helm install: %v", r)
	}
	mark("chart installed: helm install --wait --wait-for-jobs returned after %.1fs", time.Since(start).Seconds())
	hookTimeline(t, start)
	deploymentsReady(t)
}

// hookTimeline prints when each hook Job of the release ran since start, from
// the Job controller's events (the Jobs themselves are deleted on success).
func hookTimeline(t *testing.T, since time.Time) {
	t.Helper()
	var events corev1.EventList
	getJSON(t, &events, "events", "-n", releaseNS, "--field-selector", "involvedObject.kind=Job")
	type span struct{ created, completed time.Time }
	jobs := map[string]*span{}
	for _, e := range events.Items {
		when := e.LastTimestamp.Time
		if !e.EventTime.IsZero() {
			when = e.EventTime.Time
		}
		if when.Before(since.Truncate(time.Second)) {
			continue
		}
		s := jobs[e.InvolvedObject.Name]
		if s == nil {
			s = &span{}
			jobs[e.InvolvedObject.Name] = s
		}
		switch e.Reason {
		case "SuccessfulCreate":
			if s.created.IsZero() || when.Before(s.created) {
				s.created = when
			}
		case "Completed":
			s.completed = when
		}
	}
	names := make([]string, 0, len(jobs))
	for n := range jobs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return jobs[names[i]].created.Before(jobs[names[j]].created) })
	for _, n := range names {
		s := jobs[n]
		if s.completed.IsZero() {
			mark("hook %s: pod created at +%.0fs, not completed", n, s.created.Sub(theNode.t0).Seconds())
			continue
		}
		mark("hook %s: pod created at +%.0fs, Job complete at +%.0fs (%.0fs)", n,
			s.created.Sub(theNode.t0).Seconds(), s.completed.Sub(theNode.t0).Seconds(), s.completed.Sub(s.created).Seconds())
	}
}

// deploymentsReady checks the decider and the front door: every replica
// Ready, probes in the pod spec, no restart.
func deploymentsReady(t *testing.T) {
	t.Helper()
	for _, component := range []string{"decider", "frontdoor"} {
		var d appsv1.Deployment
		getJSON(t, &d, "deployment", "-n", releaseNS, fullname+"-"+component)
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.ReadyReplicas != want || d.Status.UpdatedReplicas != want {
			t.Errorf("deployment %s: %d ready, %d updated of %d", d.Name, d.Status.ReadyReplicas, d.Status.UpdatedReplicas, want)
		}
		c := d.Spec.Template.Spec.Containers[0]
		if c.ReadinessProbe == nil || c.LivenessProbe == nil {
			t.Errorf("deployment %s: container %s has no readiness or liveness probe", d.Name, c.Name)
		}
		pods := podsOf(t, releaseNS, "app.kubernetes.io/component="+component)
		for _, p := range pods {
			if !podReady(p) {
				t.Errorf("pod %s is not Ready", p.Name)
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.RestartCount != 0 {
					t.Errorf("pod %s: container %s restarted %d times", p.Name, cs.Name, cs.RestartCount)
				}
			}
		}
		mark("deployment %s: %d/%d Ready on the node (readiness %s, liveness %s)", d.Name, d.Status.ReadyReplicas, want,
			probeText(c.ReadinessProbe), probeText(c.LivenessProbe))
	}
}

func probeText(p *corev1.Probe) string {
	if p == nil || p.HTTPGet == nil {
		return "none"
	}
	return fmt.Sprintf("%s %s:%s", p.HTTPGet.Scheme, p.HTTPGet.Path, p.HTTPGet.Port.String())
}

func podsOf(t *testing.T, ns, selector string) []corev1.Pod {
	t.Helper()
	var l corev1.PodList
	getJSON(t, &l, "pods", "-n", ns, "-l", selector)
	var live []corev1.Pod
	for _, p := range l.Items {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	return live
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// helmTest runs the chart's test hook: the install proof again.
func helmTest(t *testing.T) {
	start := time.Now()
	r := helm(4*time.Minute, "test", release, "-n", releaseNS, "--timeout", "3m")
	if r.err != nil {
		t.Fatalf("helm test: %v", r)
	}
	if !strings.Contains(r.stdout, "Phase:          Succeeded") && !strings.Contains(r.stdout, "Succeeded") {
		t.Fatalf("helm test did not report a succeeded test: %s", r.stdout)
	}
	mark("helm test passed in %.1fs (%s)", time.Since(start).Seconds(), testSuiteLine(r.stdout))
}

func testSuiteLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "TEST SUITE:") {
			return strings.Join(strings.Fields(l), " ")
		}
	}
	return "no TEST SUITE line"
}

// helmUninstall removes the release and checks that nothing of it is left
// but the two class CRDs the chart keeps (crds.keep).
func helmUninstall(t *testing.T) {
	start := time.Now()
	r := helm(4*time.Minute, "uninstall", release, "-n", releaseNS, "--wait", "--timeout", "3m")
	if r.err != nil {
		t.Fatalf("helm uninstall: %v", r)
	}
	mark("helm uninstall returned after %.1fs", time.Since(start).Seconds())
	hookTimeline(t, start)
	// The Deployments are gone when helm returns; their pods terminate after
	// (the front door drains first): give them their grace period.
	var crds, other []string
	eventually(t, "the release's pods are gone", 2*time.Minute, time.Second, func() error {
		crds, other = nil, nil
		for _, o := range releaseObjects(t) {
			if strings.HasPrefix(o, "customresourcedefinition.apiextensions.k8s.io/") {
				crds = append(crds, o)
			} else {
				other = append(other, o)
			}
		}
		if len(other) > 0 {
			return fmt.Errorf("left: %v", other)
		}
		return nil
	})
	wantCRDs := []string{
		"customresourcedefinition.apiextensions.k8s.io/clusterdynamicconfigclasses.dynamic-config.rs",
		"customresourcedefinition.apiextensions.k8s.io/dynamicconfigclasses.dynamic-config.rs",
	}
	sort.Strings(crds)
	if strings.Join(crds, " ") != strings.Join(wantCRDs, " ") {
		t.Errorf("CRDs left: %v; want exactly %v", crds, wantCRDs)
	}
	if s := secretsIn(t, releaseNS); len(s) > 0 {
		t.Errorf("Secrets left in %s after helm uninstall: %v", releaseNS, s)
	}
	mark("after helm uninstall: no object of the release is left but %s (crds.keep), and no Secret", strings.Join(crds, " "))
}

// releaseObjects lists every object of any kind that carries the release's
// instance label, namespaced or not.
func releaseObjects(t *testing.T) []string {
	t.Helper()
	kinds := strings.Fields(mustKubectl(t, nil, "api-resources", "--verbs=list", "-o", "name"))
	var skip = map[string]bool{"events": true, "events.events.k8s.io": true, "componentstatuses": true}
	var want []string
	for _, k := range kinds {
		if !skip[k] {
			want = append(want, k)
		}
	}
	r := kubectl(nil, "get", strings.Join(want, ","), "-A", "-l", "app.kubernetes.io/instance="+release, "-o", "name")
	if r.err != nil {
		t.Fatalf("list the release's objects: %v", r)
	}
	return strings.Fields(r.stdout)
}

// secretsIn lists the Secrets of ns but Helm's release records.
func secretsIn(t *testing.T, ns string) []string {
	t.Helper()
	var l corev1.SecretList
	getJSON(t, &l, "secrets", "-n", ns)
	var names []string
	for _, s := range l.Items {
		if s.Type == "helm.sh/release.v1" {
			continue
		}
		names = append(names, s.Name+" ("+string(s.Type)+")")
	}
	sort.Strings(names)
	return names
}
