package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
)

// Issue 21 item 2: pods that asked for the agent and were admitted without
// it, found by `audit-pods` and by the in-cluster reporter.

// auditReporter is one `dynamic-config audit-reporter` process.
type auditReporter struct {
	proc        *process
	metricsAddr string
}

func startAuditReporter(t *testing.T, configuration string, extra ...string) *auditReporter {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	args := append([]string{"audit-reporter", "--kubeconfig", theCluster.kubeconfig,
		"--webhook-configuration", configuration, "--metrics-addr", addr, "--interval", "1s"}, extra...)
	p := mustStart(t, "audit-reporter", filepath.Join(testDir(t), "audit-reporter.log"), nil, theCluster.product, args...)
	if err := eventually("audit-reporter /readyz", 2*productReadyTimeout, 200*time.Millisecond, aliveCheck(p, func() error {
		return httpOK(http.DefaultClient, "http://"+addr+"/readyz", "")
	})); err != nil {
		t.Fatal(err)
	}
	return &auditReporter{proc: p, metricsAddr: addr}
}

// rssBytes is the process's resident set (VmRSS of /proc/<pid>/status).
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", rest, err)
			}
			return kb * 1024
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// auditPods runs `dynamic-config audit-pods` and returns its exit code and output.
func auditPods(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(theCluster.product, append([]string{"audit-pods", "--kubeconfig", theCluster.kubeconfig}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

type auditFinding struct {
	Namespace, Name, Reason, Detail string
}

type auditReport struct {
	Webhook struct {
		Configuration string
		Found         bool
	}
	Pods, Asking, Uninjected int
	Findings                 []auditFinding
}

func auditPodsJSON(t *testing.T, wantCode int, args ...string) auditReport {
	t.Helper()
	code, out, errOut := auditPods(t, append(args, "-o", "json")...)
	if code != wantCode {
		t.Fatalf("audit-pods %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", args, code, wantCode, out, errOut)
	}
	var r auditReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("audit-pods -o json: %v\n%s", err, out)
	}
	return r
}

func findingsByReason(r auditReport) map[string][]string {
	out := map[string][]string{}
	for _, f := range r.Findings {
		out[f.Reason] = append(out[f.Reason], f.Name)
	}
	for _, names := range out {
		sort.Strings(names)
	}
	return out
}

func mustCreatePod(t *testing.T, p *corev1.Pod) createResult {
	t.Helper()
	r := createPod(p, false)
	if !r.ok() {
		t.Fatalf("create pod %s/%s: %s", p.Namespace, p.Name, r.message())
	}
	return r
}

// deletePods deletes every pod of ns in one deletecollection call (without
// a kubelet an unscheduled pod goes at once), so that the run's later tests
// do not share the API server with them.
func deletePods(t *testing.T, ns string) {
	req, err := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/api/v1/namespaces/%s/pods", theCluster.serverURL, ns), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+theCluster.token)
	resp, err := (&http.Client{Timeout: 5 * time.Minute, Transport: apiHTTP.Transport}).Do(req)
	if err != nil {
		t.Logf("delete the pods of %s: %v", ns, err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Logf("delete the pods of %s: %s", ns, resp.Status)
	}
}

func TestAuditPodsFindsExactlyThePodsAdmittedWhileTheFrontDoorWasDown(t *testing.T) {
	ns := newNamespace(t)
	excluded := newNamespace(t)
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	s := startServe(t, path)

	// Before the webhook exists: an asking pod that no webhook could see.
	mustCreatePod(t, pod(ns, "early-1", consulAnnotations()))
	time.Sleep(1100 * time.Millisecond) // creationTimestamp has whole seconds
	config := ns + "-inject"
	registerInjection(t, config, ns, s.door, injection{failurePolicy: admissionv1.Ignore}) // a front door that does not answer lets the pod through
	waitForEffect(t, "the injection webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)

	// While the front door answers: injected pods, a pod that does not ask,
	// a pod that declines, and an asking pod in a namespace the webhook's
	// selector leaves out.
	for _, name := range []string{"before-1", "before-2"} {
		if r := mustCreatePod(t, pod(ns, name, consulAnnotations())); !r.injected() {
			t.Fatalf("%s was not injected while the front door answered: %s", name, r.body)
		}
	}
	mustCreatePod(t, pod(ns, "plain-1", map[string]string{"team": "shop"}))
	mustCreatePod(t, pod(ns, "declined-1", withAnnotations(consulAnnotations(), map[string]string{"dynamic-config.rs/inject": "false"})))
	mustCreatePod(t, pod(excluded, "elsewhere-1", consulAnnotations()))

	rep := startAuditReporter(t, config, "--namespace", ns)

	// The outage: the front door stops, failurePolicy Ignore admits.
	if err := s.proc.stop(10 * time.Second); err != nil {
		t.Logf("serve: %v", err)
	}
	outage := []string{"outage-1", "outage-2", "outage-3"}
	for _, name := range outage {
		if r := mustCreatePod(t, pod(ns, name, consulAnnotations())); r.injected() {
			t.Fatalf("%s was injected with the front door down: %s", name, r.body)
		}
	}

	r := auditPodsJSON(t, 1, "-n", ns, "--webhook-configuration", config)
	got := findingsByReason(r)
	t.Logf("e2e audit: audit-pods -n %s: %d pods read, %d asking, %d uninjected: %v", ns, r.Pods, r.Asking, r.Uninjected, got)
	want := map[string][]string{"unknown": outage, "created-before-webhook": {"early-1"}, "inject-false": {"declined-1"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("findings by reason %v, want %v", got, want)
	}
	if r.Uninjected != 4 || r.Asking != 5 || !r.Webhook.Found {
		t.Errorf("uninjected %d (want 4), asking %d (want 5), webhook found %v", r.Uninjected, r.Asking, r.Webhook.Found)
	}

	// Without --webhook-configuration audit-pods finds the configuration
	// holding the injection webhook itself (issue 40 item 6): this one when
	// it is alone in the cluster, else an error naming every one, this one
	// among them, for the flag to choose.
	switch code, out, errOut := auditPods(t, "-n", ns, "-o", "json"); code {
	case 1:
		var found auditReport
		if err := json.Unmarshal([]byte(out), &found); err != nil || !found.Webhook.Found || found.Webhook.Configuration != config || found.Uninjected != 4 {
			t.Errorf("audit-pods without --webhook-configuration: %v, %+v\n%s", err, found.Webhook, out)
		}
	case 2:
		if !strings.Contains(errOut, "--webhook-configuration chooses one") || !strings.Contains(errOut, config) {
			t.Errorf("audit-pods without --webhook-configuration: exit 2 without naming %s: %s", config, errOut)
		}
	default:
		t.Errorf("audit-pods without --webhook-configuration: exit %d\n%s%s", code, out, errOut)
	}

	rx := auditPodsJSON(t, 1, "-n", excluded, "--webhook-configuration", config)
	if got := findingsByReason(rx); fmt.Sprint(got) != fmt.Sprint(map[string][]string{"namespace-excluded": {"elsewhere-1"}}) {
		t.Errorf("the excluded namespace's findings %v", got)
	}

	code, table, _ := auditPods(t, "-n", ns, "--webhook-configuration", config)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if code != 1 || len(lines) != 6 || !strings.HasPrefix(lines[0], "NAMESPACE") || !strings.Contains(lines[1], "declined-1") || !strings.Contains(lines[5], "outage-3") {
		t.Errorf("audit-pods table (exit %d):\n%s", code, table)
	}

	// The reporter: the gauge counts the four, and each gets one Event.
	series := fmt.Sprintf(`namespace="%s"`, ns)
	if err := eventually("the reporter's gauge", 30*time.Second, 500*time.Millisecond, aliveCheck(rep.proc, func() error {
		if n := metricSum(t, rep.metricsAddr, "dynamic_config_pods_asking_uninjected", series); n != 4 {
			return fmt.Errorf("dynamic_config_pods_asking_uninjected{%s} = %v, want 4", series, n)
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Logf("e2e audit: reporter gauge dynamic_config_pods_asking_uninjected{%s} = 4", series)
	var events []corev1.Event
	readEvents := func() error {
		out := mustKubectl(t, nil, "get", "events", "-n", ns, "-o", "json")
		var list corev1.EventList
		if err := json.Unmarshal([]byte(out.stdout), &list); err != nil {
			return err
		}
		events = events[:0]
		for _, e := range list.Items {
			if e.Reason == "AskedButNotInjected" {
				events = append(events, e)
			}
		}
		if len(events) != 4 {
			return fmt.Errorf("%d AskedButNotInjected events, want 4", len(events))
		}
		return nil
	}
	if err := eventually("one Event per uninjected pod", 30*time.Second, 500*time.Millisecond, readEvents); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // three more passes
	if err := readEvents(); err != nil {
		t.Fatalf("after three more passes: %v", err)
	}
	var onPods []string
	for _, e := range events {
		if e.Count != 1 || e.Type != corev1.EventTypeWarning {
			t.Errorf("event %s: count %d, type %s", e.Name, e.Count, e.Type)
		}
		onPods = append(onPods, e.InvolvedObject.Name)
	}
	sort.Strings(onPods)
	if want := "[early-1 outage-1 outage-2 outage-3]"; fmt.Sprint(onPods) != want {
		t.Errorf("events on %v, want %s", onPods, want)
	}
	if n := metricSum(t, rep.metricsAddr, "dynamic_config_audit_events_total", `result="created"`); n != 4 {
		t.Errorf("dynamic_config_audit_events_total{result=created} = %v, want 4", n)
	}
}

// TestTheAuditReporterMemoryWithTenThousandPods measures the reporter's
// resident set with the pods of the run and again with 10 000 more pod
// objects in the API server (nothing schedules them: no kubelet runs).
func TestTheAuditReporterMemoryWithTenThousandPods(t *testing.T) {
	const pods = 10000
	ns := newNamespace(t)
	// Every namespace, as the chart runs it; no Events on the run's other pods.
	rep := startAuditReporter(t, "no-such-configuration", "--interval", "2s", "--max-events-per-pass", "0")
	// RSS as the kernel sees it, and the Go heap in use (what the cache
	// holds, without the garbage of the initial list not yet returned).
	settle := func() (pods float64, rss int64, heap float64) {
		time.Sleep(5 * time.Second)
		return metricSum(t, rep.metricsAddr, "dynamic_config_audit_pods"), rssBytes(t, rep.proc.pid()),
			metricSum(t, rep.metricsAddr, "go_memstats_heap_inuse_bytes")
	}
	basePods, baseRSS, baseHeap := settle()

	t.Cleanup(func() { deletePods(t, ns) })
	start := time.Now()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	var firstErr sync.Once
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > pods {
					return
				}
				p := pod(ns, fmt.Sprintf("p-%05d", i), map[string]string{"team": "shop"})
				p.Labels = map[string]string{"app": "shop", "pod-template-hash": "5d9f8c7b6"}
				if r := createPod(p, false); !r.ok() {
					failed.Add(1)
					firstErr.Do(func() { t.Logf("create %s: %s", p.Name, r.message()) })
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d creates failed", n, pods)
	}
	t.Logf("e2e audit: %d pods created in %s", pods, time.Since(start).Round(time.Second))
	if err := eventually("the reporter's cache holds the pods", 2*time.Minute, time.Second, aliveCheck(rep.proc, func() error {
		if n := metricSum(t, rep.metricsAddr, "dynamic_config_audit_pods"); n < basePods+pods {
			return fmt.Errorf("dynamic_config_audit_pods = %v, want %v", n, basePods+pods)
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	fullPods, fullRSS, fullHeap := settle()
	perPod := float64(fullRSS-baseRSS) / pods
	t.Logf("e2e audit: reporter RSS %.1f MiB with %.0f pods, %.1f MiB with %.0f pods (%+.0f bytes per added pod)",
		float64(baseRSS)/(1<<20), basePods, float64(fullRSS)/(1<<20), fullPods, perPod)
	t.Logf("e2e audit: reporter Go heap in use %.1f MiB with %.0f pods, %.1f MiB with %.0f pods (%+.0f bytes per added pod)",
		baseHeap/(1<<20), basePods, fullHeap/(1<<20), fullPods, (fullHeap-baseHeap)/pods)
	// No target: a bound only against a cache that keeps whole pods (a
	// pod object is several KiB; its trimmed metadata a few hundred bytes).
	if perPod > 8<<10 {
		t.Errorf("the reporter grows by %.0f bytes per pod; its cache should hold trimmed metadata only", perPod)
	}
}
