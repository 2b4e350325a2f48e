package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The release, as the chart's README installs it.
const (
	release   = "dynamic-config"
	releaseNS = "dynamic-config"
	fullname  = "dynamic-config" // the release name is the chart's name
)

// The namespaces of the workloads, every one under restricted Pod Security
// enforcement, like the release namespace.
const (
	storeNS = "dcnode-store" // the fake consul
	appsNS  = "dcnode-apps"  // the Deployment, the Job and the burst
	auditNS = "dcnode-audit" // the pod created while the front door was at 0
)

// TestTheProductOnARealNode is the tier's one scenario, in order: each step
// builds on the cluster the previous ones left. A step whose failure leaves
// nothing to build on stops the scenario.
func TestTheProductOnARealNode(t *testing.T) {
	mark("tests start")
	for _, ns := range []string{releaseNS, storeNS, appsNS, auditNS} {
		restrictedNamespace(t, ns)
	}
	steps := []struct {
		name     string
		run      func(*testing.T)
		required bool
	}{
		{"the cluster DNS answers cluster.local and nothing else", clusterDNS, true},
		{"helm install with hooks: the check-installation and install-proof Jobs run as pods, both Deployments Ready with their probes", helmInstall, true},
		{"helm test passes", helmTest, false},
		{"an injected Deployment's app reads the document the agent rendered from the store, and a store change reaches the file within --watch", agentRenders, true},
		{"a Job with restartPolicy Never completes with the native-sidecar agent", jobCompletes, false},
		{"restricted Pod Security is enforced where the injected pods run", restrictedEnforced, false},
		{"check-cluster passes from outside the cluster", checkClusterFromOutside, false},
		{"a decider killed under a burst of 50 asking pods leaves none without its agent and no failed create", burstWithDeciderKilled, false},
		{"the audit reporter's gauge counts a pod created while the front door was at 0", auditCountsUninjected, false},
		{"every TLS mode switch by helm upgrade keeps injecting and orphans no Secret", tlsModeSwitches, false},
		{"helm uninstall leaves only the kept CRDs", helmUninstall, false},
	}
	for _, s := range steps {
		ok := t.Run(s.name, func(t *testing.T) {
			start := time.Now()
			s.run(t)
			if !t.Failed() {
				mark("PASS %s (%.1fs)", s.name, time.Since(start).Seconds())
			}
		})
		if !ok {
			mark("FAIL %s", s.name)
			saveClusterState(t)
			if s.required {
				t.Fatalf("%s failed: the later steps need it", s.name)
			}
		}
	}
	mark("tests done")
}

// restrictedNamespace creates ns enforcing the restricted Pod Security profile.
func restrictedNamespace(t *testing.T, ns string) {
	t.Helper()
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
`, ns))
}

// saveClusterState keeps what a failure needs to be understood in the work
// directory: every pod, event and the logs of the release's pods.
func saveClusterState(t *testing.T) {
	dir := filepath.Join(theNode.work, "state")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("save the cluster state: %v", err)
		return
	}
	for name, args := range map[string][]string{
		"pods.txt":   {"get", "pods", "-A", "-o", "wide"},
		"events.txt": {"get", "events", "-A", "--sort-by=.lastTimestamp"},
		"jobs.txt":   {"get", "jobs", "-A", "-o", "wide"},
		"secrets.txt": {"get", "secrets", "-n", releaseNS, "-o",
			"custom-columns=NAME:.metadata.name,TYPE:.type,HELM:.metadata.annotations.meta\\.helm\\.sh/release-name"},
	} {
		r := kubectl(nil, args...)
		_ = os.WriteFile(filepath.Join(dir, name), []byte(r.stdout+r.stderr), 0o644)
	}
	for _, ns := range []string{releaseNS, appsNS, storeNS} {
		r := kubectl(nil, "get", "pods", "-n", ns, "-o", "name")
		for _, p := range strings.Fields(r.stdout) {
			logs := kubectl(nil, "logs", "-n", ns, p, "--all-containers", "--prefix", "--tail=200")
			_ = os.WriteFile(filepath.Join(dir, ns+"-"+strings.TrimPrefix(p, "pod/")+".log"), []byte(logs.stdout+logs.stderr), 0o644)
		}
	}
	t.Logf("cluster state saved in %s", dir)
}
