package podaudit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
)

// The reporter against client-go's fake clients (the end-to-end test,
// test/e2e/podaudit_test.go, runs it against a real API server).

func fakePod(ns, name string, ann map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(afterWebhook), Annotations: ann},
	}
}

func fakeClients(t *testing.T) Clients {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ns := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{"kubernetes.io/metadata.name": "apps"}}}
	md := metadatafake.NewSimpleMetadataClient(scheme, ns,
		fakePod("apps", "asking-1", asking),
		fakePod("apps", "asking-2", asking),
		fakePod("apps", "injected", map[string]string{InjectKey: "true", StatusKey: StatusInjected}),
		fakePod("apps", "declined", map[string]string{InjectKey: "false"}),
		fakePod("apps", "plain", map[string]string{"team": "shop"}),
	)
	typed := kubefake.NewClientset(&admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "dynamic-config", CreationTimestamp: metav1.NewTime(webhookCreated)},
		Webhooks:   []admissionv1.MutatingWebhook{{Name: DefaultWebhookName}},
	})
	return Clients{Metadata: md, Typed: typed}
}

// startReporter runs a reporter until the test ends and waits for its
// first pass; the interval is long, so the test drives further passes.
func startReporter(t *testing.T, c Clients, maxEvents int) (*Reporter, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	r, err := NewReporter(ReporterConfig{Clients: c, Configuration: "dynamic-config", Webhook: DefaultWebhookName,
		Interval: time.Hour, MaxNamespaces: 10, MaxEventsPerPass: maxEvents, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !r.ready.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the reporter's first pass did not run")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r, reg
}

func eventNames(t *testing.T, c Clients) []string {
	t.Helper()
	list, err := c.Typed.CoreV1().Events("apps").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list.Items {
		if e.Reason != EventReason || e.InvolvedObject.Kind != "Pod" || e.Type != "Warning" {
			t.Errorf("event %s: reason %s, object %s, type %s", e.Name, e.Reason, e.InvolvedObject.Kind, e.Type)
		}
		names = append(names, e.Name)
	}
	return names
}

func TestTheReporterCountsTheAskingPodsAndPostsOneEventEach(t *testing.T) {
	c := fakeClients(t)
	r, reg := startReporter(t, c, 100)
	if got := testutil.ToFloat64(r.cached); got != 5 {
		t.Errorf("dynamic_config_audit_pods = %v, want 5", got)
	}
	want := `
# HELP dynamic_config_pods_asking_uninjected Pods that carry a dynamic-config.rs/ annotation asking for injection and no status mark (declined pods left out), by namespace; at most --max-namespaces names, the rest under namespace="_other".
# TYPE dynamic_config_pods_asking_uninjected gauge
dynamic_config_pods_asking_uninjected{namespace="apps"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dynamic_config_pods_asking_uninjected"); err != nil {
		t.Error(err)
	}
	r.Pass(context.Background())
	r.Pass(context.Background())
	names := eventNames(t, c)
	if strings.Join(names, " ") != EventName("asking-1", "uid-asking-1")+" "+EventName("asking-2", "uid-asking-2") {
		t.Errorf("events after three passes: %v, want one per asking pod", names)
	}
	// a reported pod is not tried again: no AlreadyExists round trips
	if created, exists := testutil.ToFloat64(r.events.WithLabelValues("created")), testutil.ToFloat64(r.events.WithLabelValues("exists")); created != 2 || exists != 0 {
		t.Errorf("events created %v, exists %v; want 2 and 0", created, exists)
	}
}

func TestARestartedReporterFindsItsEventsInsteadOfPostingAgain(t *testing.T) {
	c := fakeClients(t)
	first, _ := startReporter(t, c, 100)
	second, _ := startReporter(t, c, 100)
	if got := testutil.ToFloat64(first.events.WithLabelValues("created")); got != 2 {
		t.Errorf("the first reporter created %v events, want 2", got)
	}
	if created, exists := testutil.ToFloat64(second.events.WithLabelValues("created")), testutil.ToFloat64(second.events.WithLabelValues("exists")); created != 0 || exists != 2 {
		t.Errorf("the second reporter: created %v, exists %v; want 0 and 2", created, exists)
	}
	if n := len(eventNames(t, c)); n != 2 {
		t.Errorf("%d events, want 2", n)
	}
}

func TestTheEventBudgetSpreadsEventsOverPasses(t *testing.T) {
	cases := []struct {
		name           string
		max            int
		afterFirst     int
		afterTwoPasses int
	}{
		{"no budget posts none", 0, 0, 0},
		{"a budget of one posts one per pass", 1, 1, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeClients(t)
			r, _ := startReporter(t, c, tc.max)
			if n := len(eventNames(t, c)); n != tc.afterFirst {
				t.Errorf("after the first pass: %d events, want %d", n, tc.afterFirst)
			}
			r.Pass(context.Background())
			if n := len(eventNames(t, c)); n != tc.afterTwoPasses {
				t.Errorf("after the second pass: %d events, want %d", n, tc.afterTwoPasses)
			}
		})
	}
}
