package node

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// checkClusterFromOutside runs `dynamic-config check-cluster` on the host, as
// a platform engineer would from a laptop: the install proof and the checks
// of our webhook configurations (caBundle against the serving certificate it
// dials on each endpoint, endpoints, failurePolicy, matchConditions,
// timeouts).
func checkClusterFromOutside(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	r := run(ctx, nil, nil, theNode.dynamicConfig, "check-cluster", "-n", releaseNS, "--kubeconfig", theNode.kubeconfig)
	if r.err != nil {
		t.Fatalf("check-cluster: %v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	mark("check-cluster from the host passed in %.1fs: %s", time.Since(start).Seconds(), lines[len(lines)-1])
	saveText("check-cluster.txt", r.stdout)
}

// burstSize is the ReplicaSet's scale in the burst (issue 39 item 4).
const burstSize = 50

// burstWithDeciderKilled scales a ReplicaSet of asking pods 0 → 50 and
// kills one decider's container (SIGKILL through containerd, as a crash)
// while the ReplicaSet controller creates them. Every stored pod must carry
// its agent and no create may fail (failurePolicy Fail would refuse the
// create: the controller's FailedCreate event). The burst's pods are never
// scheduled (a node selector no node has): what is asserted is admission.
func burstWithDeciderKilled(t *testing.T) {
	apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: burst, namespace: %[1]s}
spec:
  replicas: 0
  selector: {matchLabels: {app: burst}}
  template:
    metadata:
      labels: {app: burst}
      annotations:
        %[2]s
    spec:
      nodeSelector: {dcnode/burst: never-scheduled}
      automountServiceAccountToken: false
      enableServiceLinks: false
      %[4]s
      containers:
        - name: app
          image: %[3]s
          args: [watch, /config/burst.json]
          resources: {requests: {cpu: 1m, memory: 8Mi}, limits: {memory: 16Mi}}
          %[5]s
`, appsNS, asks("apps/burst.json", "/config/burst.json"), appImage, restrictedPodSecurity, restrictedContainerSecurity))

	deciders := podsOf(t, releaseNS, "app.kubernetes.io/component=decider")
	if len(deciders) < 2 {
		t.Fatalf("%d decider pods: the burst needs two (one is killed)", len(deciders))
	}
	victim, survivor := deciders[0], deciders[1]
	restartsBefore := restarts(victim)
	injectsBefore, err := scrape(survivor.Status.PodIP, 9092, `dynamic_config_decisions_total{outcome="inject",purpose="mutate"}`)
	if err != nil {
		t.Fatalf("the surviving decider's metrics: %v", err)
	}
	start := time.Now()
	mustKubectl(t, nil, "scale", "replicaset/burst", "-n", appsNS, "--replicas", strconv.Itoa(burstSize))
	time.Sleep(300 * time.Millisecond)
	killContainer(t, victim, "decider")
	mark("burst: ReplicaSet scaled 0 → %d; decider %s SIGKILLed %.1fs in", burstSize, victim.Name, time.Since(start).Seconds())

	eventually(t, "the ReplicaSet's pods are created", 4*time.Minute, time.Second, func() error {
		var rs appsv1.ReplicaSet
		getJSON(t, &rs, "replicaset", "-n", appsNS, "burst")
		if rs.Status.Replicas != burstSize {
			return fmt.Errorf("%d of %d pods", rs.Status.Replicas, burstSize)
		}
		return nil
	})
	created := time.Since(start)
	pods := podsOf(t, appsNS, "app=burst")
	without := 0
	for _, p := range pods {
		if p.Annotations["dynamic-config.rs/status"] != "injected" || containerNamed(p.Spec.Containers, agentName) == nil {
			without++
			t.Errorf("pod %s was stored without its agent", p.Name)
		}
	}
	failed := failedCreates(t, "burst")
	if failed > 0 {
		t.Errorf("the ReplicaSet controller saw %d failed creates", failed)
	}
	eventually(t, "the killed decider is back", 2*time.Minute, time.Second, func() error {
		var p corev1.Pod
		getJSON(t, &p, "pod", "-n", releaseNS, victim.Name)
		if restarts(p) <= restartsBefore || !podReady(p) {
			return fmt.Errorf("restarts %d (before %d), ready %v", restarts(p), restartsBefore, podReady(p))
		}
		return nil
	})
	injectsAfter, err := scrape(survivor.Status.PodIP, 9092, `dynamic_config_decisions_total{outcome="inject",purpose="mutate"}`)
	if err != nil {
		t.Fatalf("the surviving decider's metrics: %v", err)
	}
	mark("burst: %d pods created in %.1fs: %d without their agent, %d failed creates; the surviving decider answered %.0f of the burst's injections (round robin: the killed one the rest, before its kill or after its restart); the killed decider restarted by the kubelet and Ready again",
		len(pods), created.Seconds(), without, failed, injectsAfter-injectsBefore)
	mustKubectl(t, nil, "delete", "replicaset/burst", "-n", appsNS, "--wait=false")
}

func restarts(p corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// killContainer SIGKILLs a pod's container through containerd: the process
// dies as in a crash, the kubelet restarts it.
func killContainer(t *testing.T, p corev1.Pod, container string) {
	t.Helper()
	for _, s := range p.Status.ContainerStatuses {
		if s.Name != container {
			continue
		}
		id, ok := strings.CutPrefix(s.ContainerID, "containerd://")
		if !ok {
			t.Fatalf("container %s of %s: id %q", container, p.Name, s.ContainerID)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r := run(ctx, nil, nil, "ctr", "--address", theNode.containerd, "-n", "k8s.io", "tasks", "kill", "-s", "SIGKILL", id)
		if r.err != nil {
			t.Fatalf("kill %s/%s: %v", p.Name, container, r)
		}
		return
	}
	t.Fatalf("pod %s has no container %s", p.Name, container)
}

// failedCreates counts the ReplicaSet controller's FailedCreate events for rs.
func failedCreates(t *testing.T, rs string) int {
	t.Helper()
	var events corev1.EventList
	getJSON(t, &events, "events", "-n", appsNS, "--field-selector", "involvedObject.name="+rs+",reason=FailedCreate")
	n := 0
	for _, e := range events.Items {
		n += int(max(e.Count, 1))
		t.Logf("FailedCreate: %s", e.Message)
	}
	return n
}

// auditCountsUninjected: with failurePolicy Ignore (an upgrade), the front
// door scaled to 0 and gone, a pod that asks is admitted without its agent;
// the audit reporter, a pod of the release, counts it in its gauge.
func auditCountsUninjected(t *testing.T) {
	values := writeValues(t, "ignore", "webhook:\n  failurePolicy: Ignore\n")
	start := time.Now()
	if r := helm(8*time.Minute, "upgrade", release, theNode.chart, "-n", releaseNS, "-f", values,
		"--wait", "--wait-for-jobs", "--timeout", "7m"); r.err != nil {
		t.Fatalf("helm upgrade to failurePolicy Ignore: %v", r)
	}
	mark("audit: helm upgrade to failurePolicy Ignore in %.1fs", time.Since(start).Seconds())

	mustKubectl(t, nil, "scale", "deployment/"+fullname+"-frontdoor", "-n", releaseNS, "--replicas", "0")
	eventually(t, "every front door pod is gone", 3*time.Minute, time.Second, func() error {
		var l corev1.PodList
		getJSON(t, &l, "pods", "-n", releaseNS, "-l", "app.kubernetes.io/component=frontdoor")
		if len(l.Items) > 0 {
			return fmt.Errorf("%d front door pods left", len(l.Items))
		}
		return nil
	})
	mark("audit: front door scaled to 0, its pods gone")
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: asked-while-down
  namespace: %[1]s
  annotations:
    %[2]s
spec:
  nodeSelector: {dcnode/burst: never-scheduled}
  automountServiceAccountToken: false
  enableServiceLinks: false
  %[4]s
  containers:
    - name: app
      image: %[3]s
      args: [watch, /config/audit.json]
      %[5]s
`, auditNS, strings.ReplaceAll(asks("apps/audit.json", "/config/audit.json"), "\n        ", "\n    "), appImage,
		strings.ReplaceAll(restrictedPodSecurity, "\n        ", "\n    "), strings.ReplaceAll(restrictedContainerSecurity, "\n            ", "\n        ")))
	var p corev1.Pod
	getJSON(t, &p, "pod", "-n", auditNS, "asked-while-down")
	if p.Annotations["dynamic-config.rs/status"] == "injected" {
		t.Fatalf("the pod was injected with the front door at 0")
	}
	mark("audit: pod %s/asked-while-down admitted without its agent (failurePolicy Ignore, no front door)", auditNS)
	mustKubectl(t, nil, "scale", "deployment/"+fullname+"-frontdoor", "-n", releaseNS, "--replicas", "2")

	var gauge float64
	eventually(t, "the audit reporter counts the pod", 2*time.Minute, 2*time.Second, func() error {
		v, err := auditGauge(t, auditNS)
		if err != nil {
			return err
		}
		if v != 1 {
			return fmt.Errorf("dynamic_config_pods_asking_uninjected{namespace=%q} = %v", auditNS, v)
		}
		gauge = v
		return nil
	})
	mark("audit: the reporter pod's gauge dynamic_config_pods_asking_uninjected{namespace=%q} = %v", auditNS, gauge)
	mustKubectl(t, nil, "rollout", "status", "deployment/"+fullname+"-frontdoor", "-n", releaseNS, "--timeout", "3m")
	mustKubectl(t, nil, "delete", "pod", "asked-while-down", "-n", auditNS, "--wait=false")
}

// auditGauge scrapes the audit reporter's pod (pod IPs are routed to the
// node's pod bridge) and returns the gauge for ns.
func auditGauge(t *testing.T, ns string) (float64, error) {
	t.Helper()
	pods := podsOf(t, releaseNS, "app.kubernetes.io/component=audit")
	if len(pods) != 1 || pods[0].Status.PodIP == "" {
		return 0, fmt.Errorf("%d audit reporter pods", len(pods))
	}
	return scrape(pods[0].Status.PodIP, 9094, fmt.Sprintf(`dynamic_config_pods_asking_uninjected{namespace=%q}`, ns))
}

// scrape reads one series (its name and labels as exposed) from a pod's
// Prometheus endpoint; a series not exposed yet is 0.
func scrape(podIP string, port int, series string) (float64, error) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(fmt.Sprintf("http://%s:%d/metrics", podIP, port))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, sc.Err()
}
