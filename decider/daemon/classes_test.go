package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// twoClasses is a classes file with one class of each kind.
const twoClasses = `apiVersion: dynamic-config.rs/v1alpha1
kind: ClusterDynamicConfigClass
metadata: {name: shared-consul}
spec: {source: consul, endpoint: "http://consul.infra:8500"}
---
apiVersion: dynamic-config.rs/v1alpha1
kind: DynamicConfigClass
metadata: {name: team-vault, namespace: billing}
spec: {source: vault, endpoint: "https://vault.billing:8200"}
`

// TestADeciderWithAClassesFileHoldsItsClasses starts the decider with
// Classes.File: GetInstallation lists the classes, the metrics count them.
func TestADeciderWithAClassesFileHoldsItsClasses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "classes.yaml")
	if err := os.WriteFile(file, []byte(twoClasses), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	d, err := Start(t.Context(), Config{Installation: loading(writeDocument(t, "")), Addr: "127.0.0.1:0",
		Classes: Classes{File: file}, Registry: reg, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown(time.Second)
	conn := dial(t, d.Addr().String())
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()

	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health %v, %v", resp.GetStatus(), err)
	}
	inst, err := deciderv1.NewDeciderServiceClient(conn).GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inst.GetClasses()) != 2 || !strings.HasPrefix(inst.GetClassesRevision(), "sha256:") {
		t.Errorf("GetInstallation classes %v, revision %q", inst.GetClasses(), inst.GetClassesRevision())
	}
	want := `
# HELP dynamic_config_classes Classes in the set in force, by kind.
# TYPE dynamic_config_classes gauge
dynamic_config_classes{kind="ClusterDynamicConfigClass"} 1
dynamic_config_classes{kind="DynamicConfigClass"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "dynamic_config_classes"); err != nil {
		t.Error(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	synced := false
	for _, mf := range mfs {
		synced = synced || mf.GetName() == "dynamic_config_classes_synced" && mf.GetMetric()[0].GetGauge().GetValue() == 1
	}
	if !synced {
		t.Error("dynamic_config_classes_synced is not 1")
	}
}

// TestADeciderIsNotServingBeforeTheClassesSync points the watch at an API
// server that does not answer: health stays NOT_SERVING, Ready is false and
// Decide answers Unavailable, while the decider itself runs.
func TestADeciderIsNotServingBeforeTheClassesSync(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: none, user: {}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
`), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Start(t.Context(), Config{Installation: loading(writeDocument(t, "")), Addr: "127.0.0.1:0",
		Classes: Classes{Watch: true, Kubeconfig: kubeconfig}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown(time.Second)
	conn := dial(t, d.Addr().String())
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("health %v, %v; want NOT_SERVING before the sync", resp.GetStatus(), err)
	}
	if d.Ready() {
		t.Error("/readyz would answer ready before the sync")
	}
	_, err = deciderv1.NewDeciderServiceClient(conn).Decide(ctx, &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		Pod: &deciderv1.PodFacts{Namespace: "billing", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE}})
	if err == nil || !strings.Contains(err.Error(), "the classes have not synced from the API server yet") {
		t.Errorf("Decide before the sync: %v", err)
	}
}
