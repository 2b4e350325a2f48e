package podaudit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var (
	webhookCreated = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	afterWebhook   = webhookCreated.Add(time.Hour)
)

// chartWebhook is the chart's injection webhook: every namespace but
// kube-system and the release's, pods labelled tier=web only.
func chartWebhook(t *testing.T) Webhook {
	t.Helper()
	cfg := &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "dynamic-config", CreationTimestamp: metav1.NewTime(webhookCreated)},
		Webhooks: []admissionv1.MutatingWebhook{
			{Name: "other.example.com"},
			{
				Name: DefaultWebhookName,
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "dynamic-config"},
				}}},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}},
			},
		},
	}
	w, err := WebhookFrom(cfg, "dynamic-config", DefaultWebhookName)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func namespaces() Namespaces {
	ns := Namespaces{}
	for _, n := range []string{"apps", "kube-system", "dynamic-config"} {
		ns[n] = map[string]string{"kubernetes.io/metadata.name": n}
	}
	return ns
}

func podMeta(ns, name string, created time.Time, ann map[string]string, lbls map[string]string) *metav1.PartialObjectMetadata {
	if lbls == nil {
		lbls = map[string]string{"tier": "web"}
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(created),
		Annotations: ann, Labels: lbls,
	}}
}

var asking = map[string]string{InjectKey: "true", key("source"): "consul"}

func key(k string) string { return "dynamic-config.rs/" + k }

func TestClassifyNamesWhyAPodThatAskedIsNotInjected(t *testing.T) {
	w := chartWebhook(t)
	cases := []struct {
		name     string
		pod      *metav1.PartialObjectMetadata
		w        Webhook
		finding  bool
		reason   Reason
		declined bool
		detail   string
	}{
		{"a pod without prefixed annotations is no finding", podMeta("apps", "p", afterWebhook, map[string]string{"team": "x"}, nil), w, false, "", false, ""},
		{"an injected pod is no finding", podMeta("apps", "p", afterWebhook, map[string]string{InjectKey: "true", StatusKey: StatusInjected}, nil), w, false, "", false, ""},
		{"inject false is declined", podMeta("apps", "p", afterWebhook, map[string]string{InjectKey: "false"}, nil), w, true, ReasonInjectFalse, true, `inject: "false"`},
		{"prefixed keys without inject or class are not requested", podMeta("apps", "p", afterWebhook, map[string]string{key("source"): "consul"}, nil), w, true, ReasonNotRequested, true, "neither"},
		{"a class without inject asks", podMeta("apps", "p", afterWebhook, map[string]string{ClassKey: "team"}, nil), w, true, ReasonUnknown, false, "did not answer"},
		{"a missing webhook configuration is named", podMeta("apps", "p", afterWebhook, asking, nil), Webhook{Configuration: "dynamic-config", Name: DefaultWebhookName}, true, ReasonNoWebhook, false, "dynamic-config with the webhook inject.dynamic-config.rs does not exist"},
		{"an excluded namespace is named", podMeta("kube-system", "p", afterWebhook, asking, nil), w, true, ReasonNamespaceExcluded, false, "does not select namespace kube-system"},
		{"a pod outside the objectSelector is named", podMeta("apps", "p", afterWebhook, asking, map[string]string{"tier": "db"}), w, true, ReasonObjectExcluded, false, "tier=web"},
		{"a pod older than the webhook is named", podMeta("apps", "p", webhookCreated.Add(-time.Second), asking, nil), w, true, ReasonCreatedBeforeWebhook, false, "before dynamic-config (2026-12-01T10:00:00Z)"},
		{"a pod the webhook should have seen is unknown", podMeta("apps", "p", afterWebhook, asking, nil), w, true, ReasonUnknown, false, "failurePolicy was Ignore"},
		{"an unknown namespace is not judged by the selector", podMeta("elsewhere", "p", afterWebhook, asking, nil), w, true, ReasonUnknown, false, ""},
		{"a status other than injected is not the mark", podMeta("apps", "p", afterWebhook, map[string]string{InjectKey: "true", StatusKey: "skipped"}, nil), w, true, ReasonUnknown, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ok := Classify(c.pod, namespaces(), c.w)
			if ok != c.finding {
				t.Fatalf("finding = %v, want %v (%+v)", ok, c.finding, f)
			}
			if !ok {
				return
			}
			if f.Reason != c.reason || f.Reason.Declined() != c.declined {
				t.Errorf("reason = %s (declined %v), want %s (declined %v)", f.Reason, f.Reason.Declined(), c.reason, c.declined)
			}
			if !strings.Contains(f.Detail, c.detail) {
				t.Errorf("detail %q does not contain %q", f.Detail, c.detail)
			}
			if f.Namespace != c.pod.Namespace || f.Name != "p" || f.UID != "uid-p" {
				t.Errorf("finding names %s/%s %s", f.Namespace, f.Name, f.UID)
			}
		})
	}
}

func TestAuditOrdersFindingsByNamespaceThenName(t *testing.T) {
	w := chartWebhook(t)
	pods := []metav1.Object{
		podMeta("zeta", "a", afterWebhook, asking, nil),
		podMeta("apps", "b", afterWebhook, asking, nil),
		podMeta("apps", "a", afterWebhook, asking, nil),
		podMeta("apps", "c", afterWebhook, map[string]string{"x": "y"}, nil),
	}
	var got []string
	for _, f := range Audit(pods, namespaces(), w) {
		got = append(got, f.Namespace+"/"+f.Name)
	}
	if want := "apps/a apps/b zeta/a"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestAWebhookConfigurationWithoutOurWebhookIsNotFound(t *testing.T) {
	cfg := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Webhooks: []admissionv1.MutatingWebhook{{Name: "other.example.com"}}}
	w, err := WebhookFrom(cfg, "x", DefaultWebhookName)
	if err != nil || w.Found {
		t.Fatalf("found = %v, err = %v; want not found", w.Found, err)
	}
	if f, _ := Classify(podMeta("apps", "p", afterWebhook, asking, nil), nil, w); f.Reason != ReasonNoWebhook {
		t.Errorf("reason %s, want %s", f.Reason, ReasonNoWebhook)
	}
}

func TestNamespaceSeriesFoldsTheNamespacesBeyondTheCap(t *testing.T) {
	var fs []Finding
	add := func(ns string, n int) {
		for range n {
			fs = append(fs, Finding{Namespace: ns})
		}
	}
	add("a", 1)
	add("b", 3)
	add("c", 2)
	add("d", 2)
	cases := []struct {
		name string
		max  int
		want string
	}{
		{"under the cap every namespace keeps its name", 4, "a=1 b=3 c=2 d=2"},
		{"over the cap the largest keep theirs, ties by name", 2, "_other=3 b=3 c=2"},
		{"a cap of one keeps the largest", 1, "_other=5 b=3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := NamespaceSeries(fs, c.max)
			var parts []string
			for _, k := range []string{OverflowNamespace, "a", "b", "c", "d"} {
				if n, ok := got[k]; ok {
					parts = append(parts, fmt.Sprintf("%s=%d", k, n))
				}
			}
			if strings.Join(parts, " ") != c.want {
				t.Errorf("series %v, want %s", parts, c.want)
			}
		})
	}
}

func TestEventNameIsAValidSubdomainForAnyPodName(t *testing.T) {
	uid := "0f8fad5b-d9cb-469f-a165-70867728950e"
	cases := []struct{ name, pod string }{
		{"a short name is kept", "web-1"},
		{"a long name is cut to fit", strings.Repeat("a", 253)},
		{"a cut never ends in a dash or a dot", strings.Repeat("a", 203) + "-." + strings.Repeat("b", 40)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := EventName(c.pod, uid)
			if len(n) > 253 || !strings.HasSuffix(n, ".uninjected."+uid) || strings.Contains(n, "-.") || strings.Contains(n, "..") {
				t.Errorf("event name %q (%d characters)", n, len(n))
			}
			if len(c.pod) < 100 && n != c.pod+".uninjected."+uid {
				t.Errorf("event name %q does not keep the pod name", n)
			}
		})
	}
}

func TestTheCacheKeepsOnlyWhatTheAuditReads(t *testing.T) {
	in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "p", Namespace: "apps", UID: "u", CreationTimestamp: metav1.NewTime(afterWebhook),
		Labels:          map[string]string{"tier": "web"},
		Annotations:     map[string]string{InjectKey: "true", key("template"): strings.Repeat("x", 4096), "kubectl.kubernetes.io/last-applied-configuration": "{}"},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		OwnerReferences: []metav1.OwnerReference{{Name: "rs"}},
	}}
	out, err := trimObject(in)
	if err != nil {
		t.Fatal(err)
	}
	m := out.(*metav1.PartialObjectMetadata)
	if m.ManagedFields != nil || m.OwnerReferences != nil {
		t.Errorf("managedFields or ownerReferences kept: %+v", m)
	}
	want := map[string]string{InjectKey: "true", key("template"): ""}
	if fmt.Sprint(m.Annotations) != fmt.Sprint(want) {
		t.Errorf("annotations %v, want %v", m.Annotations, want)
	}
	before, _ := Classify(in, nil, chartWebhook(t))
	after, _ := Classify(m, nil, chartWebhook(t))
	if before != after {
		t.Errorf("the trim changed the finding: %+v → %+v", before, after)
	}
}

func TestTheJSONReportCountsAskingAndUninjected(t *testing.T) {
	r := &Report{Webhook: chartWebhook(t), Pods: 5, Findings: []Finding{
		{Namespace: "apps", Name: "a", Reason: ReasonUnknown},
		{Namespace: "apps", Name: "b", Reason: ReasonInjectFalse},
	}}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Webhook struct {
			Found   bool   `json:"found"`
			Created string `json:"created"`
		} `json:"webhook"`
		Pods, Asking, Uninjected int
		Findings                 []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Webhook.Found || doc.Webhook.Created != "2026-12-01T10:00:00Z" || doc.Pods != 5 || doc.Asking != 2 || doc.Uninjected != 1 || len(doc.Findings) != 2 || doc.Findings[1]["reason"] != "inject-false" {
		t.Errorf("report %s", buf.String())
	}
	buf.Reset()
	if err := WriteJSON(&buf, &Report{}); err != nil || !strings.Contains(buf.String(), `"findings": []`) {
		t.Errorf("an empty report: %s (%v)", buf.String(), err)
	}
}

func TestTheTableHasOneLinePerFindingUnderAHeader(t *testing.T) {
	var buf bytes.Buffer
	_ = WriteTable(&buf, []Finding{{Namespace: "apps", Name: "a", Created: afterWebhook, Reason: ReasonUnknown, Detail: "d"}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "NAMESPACE") || !strings.Contains(lines[1], "apps") || !strings.Contains(lines[1], "unknown") || !strings.Contains(lines[1], "2026-12-01T11:00:00Z") {
		t.Errorf("table:\n%s", buf.String())
	}
}
