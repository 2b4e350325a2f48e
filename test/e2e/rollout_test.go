package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// envPromtool is the promtool built by `make chart-alerts` (make e2e sets it):
// the rollout test evaluates the chart's DynamicConfigRolloutHalted alert
// against what the decider exported.
const envPromtool = "E2E_PROMTOOL"

// The agent images of the rollout scenarios: the active installation's
// (seed 000 sets none: the built-in) and the candidate's.
const (
	activeAgentImage    = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0"
	candidateAgentImage = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0"
)

// imageRollout is a rollout whose candidate is seed 000 with another agent
// image, in canary for canary (the slice's YAML: percent, clusters).
func imageRollout(t *testing.T, canary string) string {
	t.Helper()
	return "candidate:\n" + indent(seedInstallation(t), "  ") +
		"  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: " + candidateAgentImage + "\n" +
		"stage: canary\ncanary: " + canary + "\n"
}

func indent(text, by string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(by + l + "\n")
	}
	return b.String()
}

// workloadBucket is the slice bucket of a workload key (spec 10 §2: FNV-1a 64
// of the key, modulo 10 000), computed here independently of the product.
func workloadBucket(key string) int {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int(h.Sum64() % 10_000)
}

// agentImage is the image of the pod's injected agent ("" when none).
func agentImage(p *corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		if c.Name == agentName {
			return c.Image
		}
	}
	return ""
}

// askingDeployment is a Deployment of replicas pods that ask for the consul agent.
func askingDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}}
	d.Name, d.Namespace = name, ns
	d.Spec.Replicas = &replicas
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	d.Spec.Template.Labels = labels
	d.Spec.Template.Annotations = consulAnnotations()
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: appImage}}
	return d
}

// deploymentPods are the stored pods of Deployment name (label app=name).
func deploymentPods(t *testing.T, ns, name string) []corev1.Pod {
	t.Helper()
	r := mustKubectl(t, nil, "get", "pods", "-n", ns, "-l", "app="+name, "-o", "json")
	var list corev1.PodList
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// rolloutStatus runs `dynamic-config rollout status -o json` against the
// deciders at addrs and returns its exit code and verdict report.
func rolloutStatus(t *testing.T, addrs ...string) (int, rolloutReport, productRun) {
	t.Helper()
	r := runProduct(t, []string{"rollout", "status", "--decider-target", "static:///" + strings.Join(addrs, ","),
		"--decider-plaintext", "-o", "json"}, nil)
	var report rolloutReport
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("rollout status -o json (exit %d): %v\nstdout:\n%s\nstderr:\n%s", r.code, err, r.stdout, r.stderr)
	}
	return r.code, report, r
}

// rolloutReport is the part of `rollout status -o json` the tests read.
type rolloutReport struct {
	Verdict           string            `json:"verdict"`
	Reasons           []string          `json:"reasons"`
	CandidateRevision string            `json:"candidateRevision"`
	Stage             string            `json:"stage"`
	Compared          uint64            `json:"compared"`
	Counts            map[string]uint64 `json:"counts"`
}

// decisionLine is the part of the decider's "decision" log line that ties
// an admission (its decision id, in the audit annotations) to the pod's
// generateName, which a ReplicaSet's pods share: <deployment>-<hash>-.
type decisionLine struct {
	Msg        string `json:"msg"`
	DecisionID string `json:"decision_id"`
	Purpose    string `json:"purpose"`
	Name       string `json:"name"`
	Revision   string `json:"revision"`
	Rollout    string `json:"rollout"`
}

// workloadAudit is what the API server's audit log says of the admissions of
// one Deployment's pods: how many, by the injection webhook's revision
// annotation, by its rollout annotation.
type workloadAudit struct {
	pods      int
	revisions map[string]int
	rollouts  map[string]int
}

// deploymentAudit reads the audit annotations of every created pod of ns
// whose decision (by the injection webhook's decision-id annotation) the
// decider logged for a pod named after Deployment name.
func deploymentAudit(t *testing.T, d *decider, ns, name string) workloadAudit {
	t.Helper()
	names := map[string]string{} // decision id → pod name or generateName
	for _, line := range strings.Split(d.proc.logText(), "\n") {
		var l decisionLine
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "decision" && l.Purpose == "mutate" {
			names[l.DecisionID] = l.Name
		}
	}
	f, err := os.Open(theCluster.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := workloadAudit{revisions: map[string]int{}, rollouts: map[string]int{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Verb != "create" || e.Stage != "ResponseComplete" ||
			e.ObjectRef.Resource != "pods" || e.ObjectRef.Namespace != ns || e.ResponseStatus.Code != 201 {
			continue
		}
		if !strings.HasPrefix(names[e.Annotations[injectWebhookName+"/decision-id"]], name+"-") {
			continue
		}
		w.pods++
		w.revisions[e.Annotations[injectWebhookName+"/revision"]]++
		w.rollouts[e.Annotations[injectWebhookName+"/rollout"]]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return w
}

// rolloutsLoaded counts the decider's "rollout loaded" lines.
func rolloutsLoaded(p *process) int {
	return strings.Count(p.logText(), `"msg":"rollout loaded"`)
}

// TestARolloutCanariesWholeWorkloadsAndItsGuardHaltsOnANewRefusal is spec 10
// §2–§4 through the real kube-apiserver and controller-manager: a
// candidate with another agent image at a 50 % canary gives every pod of a
// Deployment in the slice the candidate's image and every pod of one outside
// it the active's, across a Deployment rollout; then a candidate that denies
// the pods' source halts on the first pod of the slice, which is admitted
// with the active's answer, the chart's DynamicConfigRolloutHalted alert
// fires on the decider's metrics, and `rollout status` exits 1 with halted.
// The revision that decided each pod is read from the API server's audit
// log (the injection webhook's revision and rollout annotations), tied to
// its Deployment by the decision id of the decider's decision line.
func TestARolloutCanariesWholeWorkloadsAndItsGuardHaltsOnANewRefusal(t *testing.T) {
	kcm := os.Getenv(envKubeControllerManager)
	if kcm == "" {
		t.Fatalf("%s is not set; run the end-to-end tests with `make e2e`", envKubeControllerManager)
	}
	ns := newNamespace(t)
	dir := testDir(t)
	installation := filepath.Join(dir, "installation.yaml")
	writeInstallation(t, installation, seedInstallation(t))
	rollout := filepath.Join(dir, "rollout.yaml")
	writeInstallation(t, rollout, imageRollout(t, "{percent: 50}"))
	d := newDecider(t, "decider", installation)
	d.extra = []string{"--rollout", rollout, "--cluster-name", "east", "--reload-interval", "1s"}
	d.start()
	_, door := startFrontdoor(t, "frontdoor", d.addr)
	registerInjection(t, ns+"-inject", ns, door, injection{})
	waitForEffect(t, "the injection webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)

	// Two Deployments, one whose key falls in the 50 % slice and one whose
	// does not.
	var in, out string
	for i := 0; in == "" || out == ""; i++ {
		name := fmt.Sprintf("web-%d", i)
		if workloadBucket("east/"+ns+"/Deployment/"+name) < 5000 {
			if in == "" {
				in = name
			}
		} else if out == "" {
			out = name
		}
	}

	t.Run("Deployments scaled to 20 under a 50 % canary: every pod of one Deployment has one revision, across its ReplicaSets", func(t *testing.T) {
		mustStart(t, "kube-controller-manager", filepath.Join(testDir(t), "kube-controller-manager.log"), nil, kcm,
			"--kubeconfig", theCluster.kubeconfig,
			"--controllers", "deployment,replicaset",
			"--leader-elect=false",
			"--secure-port", "0",
			"--v", "1")
		for _, name := range []string{in, out} {
			wantAdmitted(t, applyJSON(t, askingDeployment(ns, name, 20)))
		}
		waitPods := func(name string, n int) []corev1.Pod {
			t.Helper()
			var pods []corev1.Pod
			if err := eventually(fmt.Sprintf("%d pods of %s", n, name), 3*time.Minute, 500*time.Millisecond, func() error {
				if pods = deploymentPods(t, ns, name); len(pods) < n {
					return fmt.Errorf("%d of %d pods", len(pods), n)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return pods
		}
		images := func(pods []corev1.Pod) map[string]int {
			seen := map[string]int{}
			for i := range pods {
				seen[agentImage(&pods[i])]++
			}
			return seen
		}
		start := time.Now()
		for _, c := range []struct{ name, image string }{{in, candidateAgentImage}, {out, activeAgentImage}} {
			seen := images(waitPods(c.name, 20))
			if len(seen) != 1 || seen[c.image] == 0 {
				t.Fatalf("Deployment %s (bucket %d): agent images %v; want all %s", c.name,
					workloadBucket("east/"+ns+"/Deployment/"+c.name), seen, c.image)
			}
			asserted(t, "Deployment %s (20 pods, bucket %d; the slice is buckets below 5000): every pod's agent image %s", c.name,
				workloadBucket("east/"+ns+"/Deployment/"+c.name), c.image)
		}
		t.Logf("FIGURE: 40 pods of two Deployments created by the controllers and admitted in %s", time.Since(start).Round(100*time.Millisecond))

		// The revision that decided, as the audit annotations say it: the
		// candidate's for every pod of the Deployment in the slice, the
		// active's for every pod of the other; canary marks exactly the first.
		_, status, _ := rolloutStatus(t, d.addr)
		if !revisionPattern.MatchString(status.CandidateRevision) || status.Stage != "canary" {
			t.Fatalf("rollout status: candidate revision %q, stage %q; want a revision in canary", status.CandidateRevision, status.Stage)
		}
		auditOf := func(name string, pods int) workloadAudit {
			t.Helper()
			var w workloadAudit
			if err := eventually("the audit events of "+name+"'s pods", 20*time.Second, 250*time.Millisecond, func() error {
				if w = deploymentAudit(t, d, ns, name); w.pods < pods {
					return fmt.Errorf("%d of %d", w.pods, pods)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return w
		}
		inAudit, outAudit := auditOf(in, 20), auditOf(out, 20)
		if len(inAudit.revisions) != 1 || inAudit.revisions[status.CandidateRevision] != inAudit.pods || inAudit.rollouts["canary"] != inAudit.pods {
			t.Errorf("Deployment %s in the slice: %d admissions, revisions %v, rollout marks %v; want every one the candidate's %s, canary",
				in, inAudit.pods, inAudit.revisions, inAudit.rollouts, status.CandidateRevision)
		}
		var active string
		for rev := range outAudit.revisions {
			active = rev
		}
		if len(outAudit.revisions) != 1 || !revisionPattern.MatchString(active) || active == status.CandidateRevision || outAudit.rollouts[""] != outAudit.pods {
			t.Errorf("Deployment %s outside the slice: %d admissions, revisions %v, rollout marks %v; want every one the active's, unmarked",
				out, outAudit.pods, outAudit.revisions, outAudit.rollouts)
		}
		asserted(t, "audit annotations: %s's %d admissions all revision %s (the candidate's), rollout=canary; %s's %d all revision %s (the active's), unmarked",
			in, inAudit.pods, status.CandidateRevision[:19], out, outAudit.pods, active[:19])
		// A Deployment rollout: a new ReplicaSet (another pod-template-hash)
		// whose pods are the same workload. Without a kubelet no pod becomes
		// available, so the controller surges (5 pods) and replaces the old
		// ReplicaSet's unavailable pods.
		for _, c := range []struct{ name, image string }{{in, candidateAgentImage}, {out, activeAgentImage}} {
			mustKubectl(t, nil, "-n", ns, "patch", "deployment", c.name, "--type", "merge",
				"-p", `{"spec":{"template":{"metadata":{"labels":{"release":"2"}}}}}`)
			var fresh []corev1.Pod
			if err := eventually("the new ReplicaSet's pods of "+c.name, 2*time.Minute, 500*time.Millisecond, func() error {
				fresh = nil
				for _, p := range deploymentPods(t, ns, c.name) {
					if p.Labels["release"] == "2" {
						fresh = append(fresh, p)
					}
				}
				if len(fresh) < 5 { // the Deployment's default maxSurge: 25 % of 20
					return fmt.Errorf("%d pods of the new ReplicaSet", len(fresh))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if seen := images(fresh); len(seen) != 1 || seen[c.image] == 0 {
				t.Fatalf("Deployment %s's new ReplicaSet: agent images %v; want all %s", c.name, seen, c.image)
			}
			all := len(deploymentPods(t, ns, c.name))
			w := auditOf(c.name, all)
			if len(w.revisions) != 1 {
				t.Errorf("Deployment %s across its two ReplicaSets: %d admissions, revisions %v; want one revision", c.name, w.pods, w.revisions)
			}
			asserted(t, "Deployment %s after a template change: the new ReplicaSet's %d pods keep agent image %s; its %d admissions over both ReplicaSets have one revision",
				c.name, len(fresh), c.image, w.pods)
		}
	})

	t.Run("a bare pod of the slice carries the candidate's revision and rollout: canary in its audit annotations", func(t *testing.T) {
		var inPod, outPod string
		for i := 0; inPod == "" || outPod == ""; i++ {
			name := fmt.Sprintf("bare-%d", i)
			if workloadBucket("east/"+ns+"/Pod/"+name) < 5000 {
				if inPod == "" {
					inPod = name
				}
			} else if outPod == "" {
				outPod = name
			}
		}
		for _, name := range []string{inPod, outPod} {
			wantAdmitted(t, applyJSON(t, pod(ns, name, consulAnnotations())))
		}
		canary, shadow := auditAnnotations(t, "pods", ns, inPod), auditAnnotations(t, "pods", ns, outPod)
		if canary[injectWebhookName+"/rollout"] != "canary" || !revisionPattern.MatchString(canary[injectWebhookName+"/revision"]) ||
			canary[injectWebhookName+"/revision"] == shadow[injectWebhookName+"/revision"] {
			t.Errorf("the canary pod's audit annotations %v (the shadowed pod's %v); want rollout canary and the candidate's revision", canary, shadow)
		}
		if _, marked := shadow[injectWebhookName+"/rollout"]; marked || agentImage(getPod(t, ns, outPod)) != activeAgentImage {
			t.Errorf("the pod outside the slice: audit %v, image %s; want the active's answer, unmarked", shadow, agentImage(getPod(t, ns, outPod)))
		}
		if !t.Failed() {
			asserted(t, "a bare pod of the slice: audit rollout=canary, revision %s (the active's: %s)",
				canary[injectWebhookName+"/revision"], shadow[injectWebhookName+"/revision"])
		}
	})

	t.Run("a candidate that denies the pods' source halts on the first canary pod, which gets the active's answer; the alert fires", func(t *testing.T) {
		loaded := rolloutsLoaded(d.proc)
		writeInstallation(t, rollout, "candidate:\n"+indent(seedInstallation(t), "  ")+
			"  sourceDeny:\n    '*': [consul]\nstage: canary\ncanary: {percent: 100}\n")
		if err := eventually("the denying candidate loaded", 20*time.Second, 100*time.Millisecond, func() error {
			if rolloutsLoaded(d.proc) <= loaded {
				return errNoEffectYet
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		r := applyJSON(t, pod(ns, "first-canary", consulAnnotations()))
		wantAdmitted(t, r)
		first := getPod(t, ns, "first-canary")
		if img := agentImage(first); img != activeAgentImage {
			t.Fatalf("the first canary pod's agent image %q; want the active's %s", img, activeAgentImage)
		}
		audit := auditAnnotations(t, "pods", ns, "first-canary")
		if audit[injectWebhookName+"/rollout"] != "fallback" {
			t.Errorf("the first canary pod's audit annotations %v; want rollout fallback", audit)
		}
		if !strings.Contains(d.proc.logText(), `"msg":"rollout halted`) || !strings.Contains(d.proc.logText(), `"workload":"east/`+ns+`/Pod/first-canary"`) {
			t.Errorf("no ERROR line naming the workload in the decider's log")
		}
		halted := metricSum(t, d.metricsAddr, "dynamic_config_rollout_halted")
		if halted != 1 {
			t.Fatalf("dynamic_config_rollout_halted = %v; want 1", halted)
		}
		asserted(t, "a pod newly refused by the candidate was admitted with the active's agent (%s), audit rollout=fallback; dynamic_config_rollout_halted 1", activeAgentImage)

		// Halted: the next pod is the active's, unmarked.
		wantAdmitted(t, applyJSON(t, pod(ns, "after-halt", consulAnnotations())))
		if audit := auditAnnotations(t, "pods", ns, "after-halt"); audit[injectWebhookName+"/rollout"] != "" {
			t.Errorf("a pod after the halt has audit annotations %v; want no rollout (shadow)", audit)
		}

		fired := evaluateRolloutHaltedAlert(t, d)
		asserted(t, "the chart's DynamicConfigRolloutHalted expression over the decider's scrape fires: %s", fired)

		code, status, run := rolloutStatus(t, d.addr)
		if code != 1 || status.Verdict != "halted" || !strings.Contains(strings.Join(status.Reasons, "\n"), ns+"/Pod/first-canary") {
			t.Fatalf("rollout status: exit %d, verdict %q, reasons %q; want exit 1, halted by east/%s/Pod/first-canary\n%s%s",
				code, status.Verdict, status.Reasons, ns, run.stdout, run.stderr)
		}
		text := runProduct(t, []string{"rollout", "status", "--decider-target", "static:///" + d.addr, "--decider-plaintext"}, nil)
		if text.code != 1 || !strings.Contains(text.stdout, "halted") {
			t.Errorf("rollout status (text): exit %d; want 1 and the verdict halted\n%s%s", text.code, text.stdout, text.stderr)
		}
		asserted(t, "rollout status: exit %d, verdict %s (%s), %d decisions compared %v, in %s", code, status.Verdict,
			strings.Join(status.Reasons, "; "), status.Compared, status.Counts, run.took.Round(time.Millisecond))
	})
}

// evaluateRolloutHaltedAlert runs promtool over the chart's rendered
// DynamicConfigRolloutHalted rule with the decider's scraped
// dynamic_config_rollout_halted samples as input (labelled as the chart's
// ServiceMonitor would: its namespace and job, the pod), and fails unless
// the alert fires. It returns the firing labels.
func evaluateRolloutHaltedAlert(t *testing.T, d *decider) string {
	t.Helper()
	promtool := os.Getenv(envPromtool)
	if promtool == "" {
		t.Fatalf("%s is not set; run the end-to-end tests with `make e2e` (it builds promtool as make chart-alerts does)", envPromtool)
	}
	rule := renderedRule(t, "DynamicConfigRolloutHalted")
	sel := regexp.MustCompile(`namespace="([^"]+)", job="([^"]+)"`).FindStringSubmatch(rule)
	if sel == nil {
		t.Fatalf("the rendered rule selects no decider: %s", rule)
	}
	scrape := fetch(t, "http://"+d.metricsAddr+"/metrics")
	var series []string
	var revision string
	for _, line := range strings.Split(scrape, "\n") {
		if !strings.HasPrefix(line, "dynamic_config_rollout_halted{") {
			continue
		}
		labels := line[strings.Index(line, "{")+1 : strings.Index(line, "}")]
		value := strings.TrimSpace(line[strings.Index(line, "}")+1:])
		if m := regexp.MustCompile(`candidate_revision="([^"]+)"`).FindStringSubmatch(labels); m != nil && value == "1" {
			revision = m[1]
		}
		series = append(series, fmt.Sprintf("      - series: 'dynamic_config_rollout_halted{%s, namespace=%q, job=%q, pod=\"decider-0\"}'\n        values: '%sx5'\n",
			labels, sel[1], sel[2], value))
	}
	if revision == "" {
		t.Fatalf("the scrape holds no halted series:\n%s", scrape)
	}
	dir := filepath.Join(testDir(t), "promtool")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rules := "groups:\n  - name: rollout\n    rules:\n      - alert: DynamicConfigRolloutHalted\n        expr: '" +
		strings.ReplaceAll(rule, "'", "''") + "'\n        labels: {severity: warning}\n"
	tests := "rule_files: [rules.yaml]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" + strings.Join(series, "") +
		"    alert_rule_test:\n      - eval_time: 2m\n        alertname: DynamicConfigRolloutHalted\n        exp_alerts:\n" +
		"          - exp_labels: {severity: warning, candidate_revision: '" + revision + "', pod: decider-0}\n"
	for name, text := range map[string]string{"rules.yaml": rules, "tests.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(promtool, "test", "rules", "tests.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool: the alert does not fire on the decider's metrics: %v\n%s\nrules:\n%s\ntests:\n%s", err, out, rules, tests)
	}
	return "candidate_revision=" + revision
}

// renderedRule is the expression of alert in the chart's PrometheusRule as
// `make chart-render` rendered it (chart-crd-features.yaml), read by kubectl.
func renderedRule(t *testing.T, alert string) string {
	t.Helper()
	installChartCRDs(t) // kubectl maps the PrometheusRule kind through its CRD
	r := mustKubectl(t, nil, "create", "--dry-run=client", "-o", "json", "-f", filepath.Join(chartRenderDir(t), "chart-crd-features.yaml"))
	type object struct {
		Kind string `json:"kind"`
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for {
		var v struct {
			object
			Items []object `json:"items"`
		}
		if err := dec.Decode(&v); err != nil {
			break
		}
		for _, o := range append(v.Items, v.object) {
			if o.Kind != "PrometheusRule" {
				continue
			}
			for _, g := range o.Spec.Groups {
				for _, rule := range g.Rules {
					if rule.Alert == alert {
						return strings.TrimSpace(rule.Expr)
					}
				}
			}
		}
	}
	t.Fatalf("no alert %s in the rendered PrometheusRule", alert)
	return ""
}

// TestAFollowerCanariesOnlyWhenItsClusterIsListed is spec 10 §6: a leader
// in east with a 100 % canary of another agent image, a follower in west;
// west's pods get the active's image while canary.clusters names east only,
// and the candidate's once it names west too.
func TestAFollowerCanariesOnlyWhenItsClusterIsListed(t *testing.T) {
	west := startSecondCluster(t, "west")
	dir := testDir(t)
	installation := filepath.Join(dir, "installation.yaml")
	writeInstallation(t, installation, seedInstallation(t))
	rollout := filepath.Join(dir, "rollout.yaml")
	writeInstallation(t, rollout, imageRollout(t, "{percent: 100, clusters: [east]}"))
	leader := newDecider(t, "decider-east-leader", installation)
	leader.extra = []string{"--cluster-name", "east", "--drain-delay", "0s", "--rollout", rollout, "--reload-interval", "1s"}
	leader.start()
	follower := newFollower(t, "decider-west-follower", leader.addr)
	follower.start()
	_, westDoor := startFrontdoor(t, "frontdoor-west", follower.addr, "--cluster-name", "west")

	var westNS string
	onCluster(west, func() {
		westNS = newNamespace(t)
		registerInjection(t, westNS+"-inject", westNS, westDoor, injection{})
		waitForEffect(t, "west's injection webhook takes effect", pod(westNS, "webhook-probe", consulAnnotations()), injectedOrRefused)
	})
	n := 0
	// westPod admits a consul pod in west and returns its agent image and
	// the injection webhook's rollout audit annotation.
	westPod := func(t *testing.T) (image, mark string) {
		t.Helper()
		n++
		name := fmt.Sprintf("consul-%d", n)
		onCluster(west, func() {
			wantAdmitted(t, applyJSON(t, pod(westNS, name, consulAnnotations())))
			image = agentImage(getPod(t, westNS, name))
			mark = auditAnnotations(t, "pods", westNS, name)[injectWebhookName+"/rollout"]
		})
		return image, mark
	}

	t.Run("canary.clusters names east only: west's follower shadows", func(t *testing.T) {
		if img, mark := westPod(t); img != activeAgentImage || mark != "" {
			t.Fatalf("a west pod's agent image %q, audit rollout %q; want the active's %s, unmarked", img, mark, activeAgentImage)
		}
		if v := metricSum(t, follower.metricsAddr, "dynamic_config_rollout_decisions_total", `result="changed"`); v < 1 {
			t.Errorf("the follower compared nothing: dynamic_config_rollout_decisions_total{result=changed} = %v", v)
		}
		asserted(t, "clusters [east]: a west pod has the active's agent image %s, and the follower counted the candidate as changed", activeAgentImage)
	})

	t.Run("canary.clusters names west too: west's follower canaries", func(t *testing.T) {
		writeInstallation(t, rollout, imageRollout(t, "{percent: 100, clusters: [east, west]}"))
		start := time.Now()
		if err := eventually("the follower canaries", 30*time.Second, 200*time.Millisecond, func() error {
			if img, mark := westPod(t); img != candidateAgentImage || mark != "canary" {
				return fmt.Errorf("agent image %s, audit rollout %q", img, mark)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		asserted(t, "clusters [east, west]: a west pod has the candidate's agent image %s and audit rollout=canary, %s after the leader's document changed",
			candidateAgentImage, time.Since(start).Round(100*time.Millisecond))
	})
}
