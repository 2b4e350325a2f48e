package webhookscope

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestReachSaysWhetherTheAPIServerCallsTheWebhook(t *testing.T) {
	asking := []byte(`{"metadata":{"annotations":{"dynamic-config.rs/inject":"true"}}}`)
	silent := []byte(`{"metadata":{"annotations":{"team":"a"}}}`)
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, []byte("webhook:\n  excludeNamespaces: [legacy]\n  namespaceGating: true\n"+
		"  objectSelector: {matchLabels: {inject: enabled}}\n  matchConditions: [{name: not-batch, expression: \"true\"}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		values    string
		pod       bool
		namespace string
		labels    map[string]string
		raw       []byte
		want      Reach
		text      string
	}{
		{name: "a pod that asks, with the chart's defaults, is called", pod: true, namespace: "default", raw: asking,
			want: Reach{Path: "/mutate", Reached: true}, text: "webhook /mutate: called"},
		{name: "a pod without an annotation key never reaches /mutate", pod: true, namespace: "default", raw: silent,
			want: Reach{Path: "/mutate", Blocked: []string{"the pod has no dynamic-config.rs/ annotation key (the webhook's matchCondition asks-for-dynamic-config)"}},
			text: "webhook /mutate: never called: the pod has no dynamic-config.rs/ annotation key (the webhook's matchCondition asks-for-dynamic-config) (the decision below is what it would answer)"},
		{name: "the release namespace is excluded, for workloads too", namespace: DefaultReleaseNamespace, raw: silent,
			want: Reach{Path: "/validate", Blocked: []string{`namespace "dynamic-config" is excluded by the chart's namespaceSelector (kube-system, kube-node-lease, dynamic-config, kube-public)`}}},
		{name: "kube-public is excluded from /validate by default", namespace: "kube-public", raw: silent,
			want: Reach{Path: "/validate", Blocked: []string{`namespace "kube-public" is excluded by the chart's namespaceSelector (kube-system, kube-node-lease, dynamic-config, kube-public)`}}},
		{name: "a pod that asks in kube-public still reaches /mutate", pod: true, namespace: "kube-public", raw: asking,
			want: Reach{Path: "/mutate", Reached: true}, text: "webhook /mutate: called"},
		{name: "the installer's selector, gating and conditions count", values: values, pod: true, namespace: "shop", labels: map[string]string{"inject": "enabled"}, raw: asking,
			want: Reach{Path: "/mutate", Reached: true, Provided: []string{
				`the installer's matchCondition "not-batch" is true (not evaluated offline)`,
				`namespace "shop" is labelled dynamic-config.rs/injection=enabled (webhook.namespaceGating)`}},
			text: `webhook /mutate: called, provided the installer's matchCondition "not-batch" is true (not evaluated offline) and namespace "shop" is labelled dynamic-config.rs/injection=enabled (webhook.namespaceGating)`},
		{name: "the installer's excluded namespaces and a label mismatch block", values: values, pod: true, namespace: "legacy", raw: asking,
			want: Reach{Path: "/mutate", Blocked: []string{
				`namespace "legacy" is excluded by the chart's namespaceSelector (kube-system, kube-node-lease, dynamic-config, legacy)`,
				"the pod's labels do not match webhook.objectSelector (inject=enabled)"}, Provided: []string{
				`the installer's matchCondition "not-batch" is true (not evaluated offline)`,
				`namespace "legacy" is labelled dynamic-config.rs/injection=enabled (webhook.namespaceGating)`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Load(tt.values, DefaultReleaseNamespace)
			if err != nil {
				t.Fatal(err)
			}
			got := s.Reach(tt.pod, tt.namespace, tt.labels, tt.raw)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if tt.text != "" && got.Text() != tt.text {
				t.Errorf("text %q\nwant %q", got.Text(), tt.text)
			}
		})
	}
}
