package classloader

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
)

func object(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": classes.APIVersion, "kind": kind,
		"metadata": map[string]any{"name": name}, "spec": spec,
	}}
	if ns != "" {
		u.SetNamespace(ns)
	}
	return u
}

// lockedBuffer is a goroutine-safe log sink.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor polls cond for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTheWatchKeepsTheStoreInSyncAndLeavesInvalidObjectsOut runs the real
// informers over client-go's fake dynamic client.
func TestTheWatchKeepsTheStoreInSyncAndLeavesInvalidObjectsOut(t *testing.T) {
	valid := object(classes.KindNamespaced, "billing", "team-vault", map[string]any{"source": "vault", "endpoint": "https://vault:8200"})
	// an old, looser CRD let this one in: no endpoint
	invalid := object(classes.KindCluster, "", "broken", map[string]any{"source": "consul"})
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		NamespacedResource: "DynamicConfigClassList", ClusterResource: "ClusterDynamicConfigClassList",
	}, valid, invalid)

	store := classes.NewPendingStore()
	reg := prometheus.NewRegistry()
	logs := &lockedBuffer{}
	changed := 0
	var mu sync.Mutex
	w, err := New(Config{Client: client, Store: store, Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Metrics: metrics.NewClasses(reg), OnChange: func() { mu.Lock(); changed++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if store.Synced() {
		t.Fatal("the store is synced before the watch ran")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w.Run(ctx)

	waitFor(t, "the first sync", store.Synced)
	set := store.Current()
	if set.Count(classes.KindNamespaced) != 1 || set.Count(classes.KindCluster) != 0 || set.Lookup("billing", "team-vault") == nil {
		t.Fatalf("the set holds %+v", set.All())
	}
	if !strings.Contains(logs.String(), `"msg":"class ignored: it does not validate","kind":"ClusterDynamicConfigClass","namespace":"","name":"broken","problems":["spec.endpoint is required"]`) {
		t.Errorf("no warning naming the invalid class:\n%s", logs)
	}
	if v := testutil.ToFloat64(syncedGauge(t, reg)); v != 1 {
		t.Errorf("dynamic_config_classes_synced = %v", v)
	}
	first := set.Revision

	// an edit reaches the store with a new revision
	edited := valid.DeepCopy()
	if err := unstructured.SetNestedField(edited.Object, "https://vault-2:8200", "spec", "endpoint"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Resource(NamespacedResource).Namespace("billing").Update(ctx, edited, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the edit", func() bool { return store.Current().Lookup("billing", "team-vault").Endpoint == "https://vault-2:8200" })
	if store.Current().Revision == first {
		t.Error("the revision did not change with the edit")
	}

	// a delete too
	if err := client.Resource(NamespacedResource).Namespace("billing").Delete(ctx, "team-vault", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delete", func() bool { return store.Current().Lookup("billing", "team-vault") == nil })
	if n := strings.Count(logs.String(), "class ignored"); n != 1 {
		t.Errorf("the invalid class was warned about %d times; once per resource version", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if changed < 3 {
		t.Errorf("OnChange ran %d times, want at least 3 (sync, edit, delete)", changed)
	}
}

func syncedGauge(t *testing.T, reg *prometheus.Registry) prometheus.Gauge {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "dynamic_config_classes_synced" {
			g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"})
			g.Set(mf.GetMetric()[0].GetGauge().GetValue())
			return g
		}
	}
	t.Fatal("no dynamic_config_classes_synced")
	return nil
}
