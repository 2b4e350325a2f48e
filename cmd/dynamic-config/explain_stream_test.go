package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// explainJob is a Job asking for the agent (restartPolicy Never: the plan
// places it as a native sidecar), in namespace ns.
func explainJob(ns string) string {
	return `apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: ` + ns + `}
spec:
  template:
    metadata:
      annotations:
        dynamic-config.rs/inject: "true"
        dynamic-config.rs/source: consul
        dynamic-config.rs/endpoint: http://consul:8500
        dynamic-config.rs/key: app.json
        dynamic-config.rs/path: /config/app.json
    spec:
      restartPolicy: Never
      containers: [{name: app, image: app:1}]
`
}

// explain on workloads and streams (issue 40 item 8): /validate is called
// only when the release renders it, an excluded namespace's workload claims
// no /mutate plan, native-sidecar shows what the plan does, and the kinds
// explain does not decide are passed over with a note, as inject does.
func TestExplainOnWorkloadsAndStreams(t *testing.T) {
	dir := t.TempDir()
	empty := explainWriteFile(t, dir, "empty.yaml", "")
	policy := explainWriteFile(t, dir, "policy.yaml", explainPolicy)
	stream := explainWriteFile(t, dir, "stream.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\n"+
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n---\n"+explainJob("shop"))
	system := explainWriteFile(t, dir, "system.yaml", explainJob("kube-system"))
	cases := []struct {
		name      string
		args      []string
		want, not []string
	}{
		{"a stream's Namespace and Service are passed over with a note", []string{"-f", stream, "--installation", empty}, []string{
			stream + " document 1: v1 Namespace shop: passed over (explain decides Pods and the v1 workloads that create them)\n",
			stream + " document 2: v1 Service web: passed over",
			"job shop/once   outcome: inject"}, nil},
		{"without an env policy the release renders no /validate", []string{"-f", system, "--installation", empty}, []string{
			"webhook /validate: never called: namespace \"kube-system\" is excluded by the chart's namespaceSelector (kube-system, kube-node-lease, dynamic-config, kube-public); the release renders no /validate webhook (envPolicy has no rules)"},
			[]string{"webhook /validate: called"}},
		{"with one, /validate is called on a workload", []string{"-f", stream, "--installation", policy}, []string{"webhook /validate: called\n"}, nil},
		{"a kube-system Job claims no /mutate plan", []string{"-f", system, "--installation", empty}, []string{
			"job kube-system/once   outcome: none (/mutate never sees the pods it creates)",
			"pod template spec.template: webhook /mutate: never called for the pods the Job creates: namespace \"kube-system\" is excluded",
			"\nplan: none: /mutate never sees the pods the Job creates\n"},
			[]string{"→ initContainers"}},
		{"native-sidecar shows what the plan does", []string{"-f", stream, "--installation", empty}, []string{
			"  native-sidecar          true                                                   pod spec             restartPolicy Never (resolved \"false\" from built-in; the plan places watching agents as native sidecars)\n"},
			[]string{"native-sidecar          false"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := explainRun(t, append(tc.args, "--no-env")...)
			if code != exitOK {
				t.Fatalf("exit %d: %s%s", code, out, errOut)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("explain lacks %q:\n%s", want, out)
				}
			}
			for _, not := range tc.not {
				if strings.Contains(out, not) {
					t.Errorf("explain has %q:\n%s", not, out)
				}
			}
		})
	}
	t.Run("-o json carries the note and the template's /mutate reach", func(t *testing.T) {
		out, errOut, code := explainRun(t, "-f", stream, "--installation", empty, "--no-env", "-o", "json")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var docs []struct {
			Kind, PassedOver string
			TemplateWebhook  *struct{ Path string }
		}
		if err := json.Unmarshal([]byte(out), &docs); err != nil {
			t.Fatal(err)
		}
		if len(docs) != 3 || docs[1].Kind != "Service" || !strings.Contains(docs[1].PassedOver, "passed over") ||
			docs[2].TemplateWebhook == nil || docs[2].TemplateWebhook.Path != "/mutate" {
			t.Errorf("unexpected JSON:\n%s", out)
		}
	})
}
