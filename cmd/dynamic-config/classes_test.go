package main

import (
	"bytes"
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
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// The done-when case of issue 14: its classes file and pod.
var (
	doneWhenClasses = filepath.Join(casesDir, "class-namespaced-fills-all-three", "classes.yaml")
	doneWhenPod     = filepath.Join(casesDir, "class-namespaced-fills-all-three", "pod.yaml")
)

// badClasses writes a classes file with two invalid documents.
func badClasses(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "classes.yaml")
	text := "apiVersion: dynamic-config.rs/v1alpha1\nkind: DynamicConfigClass\nmetadata: {name: a, namespace: billing}\nspec: {source: mysql, endpoint: x}\n" +
		"---\napiVersion: dynamic-config.rs/v1alpha1\nkind: ClusterDynamicConfigClass\nmetadata: {name: b}\nspec: {source: consul}\n"
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheOfflineDoorsReadClassesFromAFile(t *testing.T) {
	empty := foundationEmptyFile(t)
	bad := badClasses(t)
	tests := []struct {
		name    string
		args    []string
		environ []string
		code    int
		stdout  []string
		stderr  string
	}{
		{name: "inject fills the class's source, endpoint and token Secret in billing",
			args: []string{"inject", "-f", doneWhenPod, "-n", "billing", "--classes-file", doneWhenClasses}, code: exitOK,
			stdout: []string{"- --source\n", "- vault\n", "- --endpoint\n", "- https://vault.billing.svc:8200\n", "key: token\n", "name: billing-vault-token\n"},
			stderr: doneWhenPod + ": injected (1 agent container(s))\n"},
		{name: "inject refuses the same pod in payments with the not-found text",
			args: []string{"inject", "-f", doneWhenPod, "-n", "payments", "--classes-file", doneWhenClasses}, code: exitRefused,
			stderr: doneWhenPod + `: refused (DynamicConfigPolicy 403): dynamic-config.rs/class is "team-vault", but no class of that name is visible from namespace payments: list them with kubectl get dynamicconfigclasses,clusterdynamicconfigclasses` + "\n"},
		{name: "explain names the class in FROM and shows the classes revision",
			args: []string{"explain", "-f", doneWhenPod, "-n", "billing", "--classes-file", doneWhenClasses}, code: exitOK,
			stdout: []string{"   classes: sha256:", "source", "class", "class billing/team-vault\n", "token-secret", "billing-vault-token/token", "class billing/team-vault\n"}},
		{name: "an invalid classes file is exit 2 with every problem",
			args: []string{"inject", "-f", doneWhenPod, "--classes-file", bad}, code: exitUsage,
			stderr: bad + `: document 1 (DynamicConfigClass billing/a): spec.source is "mysql": one of consul, vault, config-server, firestore, git, redis, etcd, nats, s3` + "\n" +
				bad + ": document 2 (ClusterDynamicConfigClass b): spec.endpoint is required\n"},
		{name: "a missing classes file is exit 2",
			args: []string{"explain", "-f", doneWhenPod, "--classes-file", bad + ".missing"}, code: exitUsage,
			stderr: "classes file: open " + bad + ".missing: no such file or directory\n"},
		{name: "classes switched on by the environment without a file is exit 2",
			args: []string{"inject", "-f", doneWhenPod}, environ: []string{"DYNAMIC_CONFIG_WEBHOOK_CLASSES=true"}, code: exitUsage,
			stderr: "inject: DYNAMIC_CONFIG_WEBHOOK_CLASSES is true, and the offline doors do not watch the API server: give the classes with --classes-file FILE\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := processEnviron
			processEnviron = func() []string { return tt.environ }
			t.Cleanup(func() { processEnviron = saved })
			var stdout, stderr bytes.Buffer
			code := run(append(tt.args, "--installation", empty), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || (tt.stderr != "" && stderr.String() != tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d, %q", code, stderr.String(), tt.code, tt.stderr)
			}
			rest := stdout.String()
			for _, frag := range tt.stdout {
				i := strings.Index(rest, frag)
				if i < 0 {
					t.Fatalf("stdout lacks %q (in order):\n%s", frag, stdout.String())
				}
				rest = rest[i+len(frag):]
			}
		})
	}
}

func TestDeciderClassRefusals(t *testing.T) {
	bad := badClasses(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"an invalid classes file stops the decider with every problem", []string{"--classes-file", bad},
			bad + ": document 2 (ClusterDynamicConfigClass b): spec.endpoint is required"},
		{"a classes file and a kubeconfig exclude each other", []string{"--classes-file", bad, "--kubeconfig", "k"},
			"--classes-file and --kubeconfig exclude each other: the file replaces the API server"},
		{"a kubeconfig without classes is refused", []string{"--kubeconfig", "k"},
			"--kubeconfig is for the classes watch: add --classes (or DYNAMIC_CONFIG_WEBHOOK_CLASSES=true)"},
		{"classes outside a cluster need a kubeconfig", []string{"--classes"},
			"pass --kubeconfig FILE or --classes-file FILE"},
		{"a kubeconfig that does not exist is refused", []string{"--classes", "--kubeconfig", bad + ".missing"},
			"decider: --kubeconfig " + bad + ".missing: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			withFoundationEnv(t, nil)
			var stderr bytes.Buffer
			args := append([]string{"--plaintext", "--installation", foundationEmptyFile(t), "--addr", "127.0.0.1:0", "--metrics-addr", ""}, c.args...)
			if code := deciderMain(t.Context(), args, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

// TestDeciderWithAClassesFile starts the real decider with --classes-file.
func TestDeciderWithAClassesFile(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	reg := prometheus.NewRegistry()
	d, err := startDecider(ctx, deciderSetup{
		logger:       slog.New(slog.NewJSONHandler(io.Discard, nil)),
		registry:     reg,
		installation: installationloader.Options{DocumentPath: foundationEmptyFile(t), DocumentExplicit: true},
		addr:         "127.0.0.1:0",
		classes:      classesSetup{file: doneWhenClasses},
		server:       server.Config{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.shutdown(time.Second)
	c, err := client.New(client.Config{Target: d.addr.String(), Plaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	callCtx, callCancel := context.WithTimeout(ctx, 5*time.Second)
	defer callCancel()

	resp, err := healthpb.NewHealthClient(c.Conn()).Check(callCtx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health %v, %v", resp.GetStatus(), err)
	}
	inst, err := c.GetInstallation(callCtx, &deciderv1.GetInstallationRequest{})
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
	if v := testutil.ToFloat64(gaugeOf(t, reg, "dynamic_config_classes_synced")); v != 1 {
		t.Errorf("dynamic_config_classes_synced = %v", v)
	}
}

// gaugeOf finds a registered gauge's value through Gather.
func gaugeOf(t *testing.T, reg *prometheus.Registry, name string) prometheus.Gauge {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name})
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			g.Set(mf.GetMetric()[0].GetGauge().GetValue())
			return g
		}
	}
	t.Fatalf("no gauge %s", name)
	return nil
}

// TestServeReadsAClassesFile: serve's decider holds the file's classes.
func TestServeReadsAClassesFile(t *testing.T) {
	addrs := foundationServe(t, "--classes-file", doneWhenClasses)
	c, err := client.New(client.Config{Target: addrs["decider"], Plaintext: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	inst, err := c.GetInstallation(ctx, &deciderv1.GetInstallationRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inst.GetClasses()) != 2 || inst.GetClasses()[1].GetName() != "team-vault" {
		t.Errorf("serve's decider holds %v", inst.GetClasses())
	}
}

// TestDeciderIsNotServingBeforeTheClassesSync points the watch at an API
// server that does not answer: health stays NOT_SERVING and Decide answers
// Unavailable, while the decider itself runs.
func TestDeciderIsNotServingBeforeTheClassesSync(t *testing.T) {
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
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	d, err := startDecider(ctx, deciderSetup{
		logger:       slog.New(slog.NewJSONHandler(io.Discard, nil)),
		registry:     prometheus.NewRegistry(),
		installation: installationloader.Options{DocumentPath: foundationEmptyFile(t), DocumentExplicit: true},
		addr:         "127.0.0.1:0",
		classes:      classesSetup{watch: true, kubeconfig: kubeconfig},
		server:       server.Config{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.shutdown(time.Second)
	// a plain connection: the front door's client would not call a
	// NOT_SERVING decider at all
	conn, err := grpc.NewClient(d.addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	callCtx, callCancel := context.WithTimeout(ctx, 5*time.Second)
	defer callCancel()
	resp, err := healthpb.NewHealthClient(conn).Check(callCtx, &healthpb.HealthCheckRequest{})
	if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("health %v, %v; want NOT_SERVING before the sync", resp.GetStatus(), err)
	}
	if d.server.Ready() {
		t.Error("/readyz would answer ready before the sync")
	}
	_, err = deciderv1.NewDeciderServiceClient(conn).Decide(callCtx, &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE,
		Pod: &deciderv1.PodFacts{Namespace: "billing", Name: "app", Operation: deciderv1.Operation_OPERATION_CREATE}})
	if err == nil || !strings.Contains(err.Error(), "the classes have not synced from the API server yet") {
		t.Errorf("Decide before the sync: %v", err)
	}
}
