package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/doors/webhookscope"
)

// explain says when the chart's webhooks would never see the object
// (issue 15, like istioctl x check-inject).
func TestExplainSaysWhetherTheWebhookIsCalled(t *testing.T) {
	withFoundationEnv(t, nil)
	dir := t.TempDir()
	empty := explainWriteFile(t, dir, "empty.yaml", "")
	pod := explainWriteFile(t, dir, "pod.yaml", explainConsulPod)
	labelled := explainWriteFile(t, dir, "labelled.yaml", strings.Replace(explainConsulPod, "  name: app\n", "  name: app\n  labels:\n    tier: web\n", 1))
	plain := explainWriteFile(t, dir, "plain.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: plain\n  annotations:\n    team: a\nspec:\n  containers:\n  - name: app\n    image: busybox\n")
	deployment := explainWriteFile(t, dir, "deployment.yaml", explainDeployment)
	policy := explainWriteFile(t, dir, "policy.yaml", explainPolicy)
	values := explainWriteFile(t, dir, "values.yaml", `webhook:
  excludeNamespaces: [legacy]
  objectSelector:
    matchLabels:
      tier: web
`)
	gating := explainWriteFile(t, dir, "gating.yaml", "webhook:\n  namespaceGating: true\n  matchConditions:\n  - name: not-jobs\n    expression: 'true'\n")

	cases := []struct {
		name string
		args []string
		want string // the line after the header
	}{
		{"a pod that asks, in a namespace the chart selects, is called",
			[]string{"-f", pod, "--installation", empty},
			"webhook /mutate: called\n"},
		{"kube-system is never selected",
			[]string{"-f", pod, "--installation", empty, "-n", "kube-system"},
			`webhook /mutate: never called: namespace "kube-system" is excluded by the chart's namespaceSelector (kube-system, kube-node-lease, dynamic-config) (the decision below is what it would answer)` + "\n"},
		{"the release namespace is never selected, --release-namespace names it",
			[]string{"-f", pod, "--installation", empty, "-n", "platform", "--release-namespace", "platform"},
			`webhook /mutate: never called: namespace "platform" is excluded by the chart's namespaceSelector (kube-system, kube-node-lease, platform)`},
		{"a pod without a dynamic-config.rs/ annotation key fails the matchCondition",
			[]string{"-f", plain, "--installation", empty},
			"webhook /mutate: never called: the pod has no dynamic-config.rs/ annotation key (the webhook's matchCondition asks-for-dynamic-config)"},
		{"webhook.excludeNamespaces from --values excludes its namespaces",
			[]string{"-f", labelled, "--values", values, "-n", "legacy"},
			`webhook /mutate: never called: namespace "legacy" is excluded by the chart's namespaceSelector (kube-system, kube-node-lease, dynamic-config, legacy)`},
		{"webhook.objectSelector from --values is matched against the pod's labels",
			[]string{"-f", pod, "--values", values},
			"webhook /mutate: never called: the pod's labels do not match webhook.objectSelector (tier=web)"},
		{"a pod with the selected labels is called",
			[]string{"-f", labelled, "--values", values},
			"webhook /mutate: called\n"},
		{"namespace gating and the installer's own conditions are named as what must hold",
			[]string{"-f", pod, "--values", gating},
			`webhook /mutate: called, provided the installer's matchCondition "not-jobs" is true (not evaluated offline) and namespace "default" is labelled dynamic-config.rs/injection=enabled (webhook.namespaceGating)`},
		{"a workload in an excluded namespace never reaches /validate",
			[]string{"-f", deployment, "--installation", policy, "-n", "kube-node-lease"},
			`webhook /validate: never called: namespace "kube-node-lease" is excluded`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := explainRun(t, append(c.args, "--no-env")...)
			if code == exitUsage {
				t.Fatalf("exit 2: %s", errOut)
			}
			lines := strings.SplitAfterN(out, "\n", 3)
			if len(lines) < 2 || !strings.HasPrefix(lines[1], c.want) {
				t.Errorf("output:\n%s\nwant its second line to start with %q", out, c.want)
			}
		})
	}

	t.Run("-o json carries the reach", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", plain, "--installation", empty, "--no-env", "-o", "json")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got struct{ Webhook webhookscope.Reach }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Webhook.Path != "/mutate" || got.Webhook.Reached || len(got.Webhook.Blocked) != 1 {
			t.Errorf("webhook %+v", got.Webhook)
		}
	})
}

func TestExplainIsCompactUnlessAll(t *testing.T) {
	withFoundationEnv(t, nil)
	dir := t.TempDir()
	empty := explainWriteFile(t, dir, "empty.yaml", "")
	pod := explainWriteFile(t, dir, "pod.yaml", explainConsulPod)
	compact, _, _ := explainRun(t, "-f", pod, "--installation", empty, "--no-env")
	all, _, _ := explainRun(t, "-f", pod, "--installation", empty, "--no-env", "--all")
	if !strings.Contains(compact, " unset knobs hidden; --all shows them)\n") || strings.Contains(all, "hidden") {
		t.Errorf("compact:\n%s\n--all:\n%s", compact, all)
	}
	// every unset row of --all (VALUE —) is missing from the compact table,
	// and every other row is there
	rows := func(out string) map[string]bool {
		m := map[string]bool{}
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); strings.HasPrefix(line, "  ") && len(f) >= 3 && f[0] != "KNOB" {
				m[f[0]] = true
			}
		}
		return m
	}
	compactRows, unset := rows(compact), 0
	for _, line := range strings.Split(all, "\n") {
		f := strings.Fields(line)
		if !strings.HasPrefix(line, "  ") || len(f) < 3 || f[0] == "KNOB" {
			continue
		}
		isUnset := f[1] == "—"
		if isUnset {
			unset++
		}
		if compactRows[f[0]] == isUnset {
			t.Errorf("knob %s: in the compact table %v, unset %v", f[0], compactRows[f[0]], isUnset)
		}
	}
	if unset == 0 {
		t.Fatal("the canonical pod has no unset knob: the test proves nothing")
	}
}
