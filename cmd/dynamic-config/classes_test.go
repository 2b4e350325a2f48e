package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/test/cases"
)

// The done-when case of issue 14: its classes file and pod.
var (
	doneWhenClasses = cases.Named("class-namespaced-fills-all-three").Path("classes.yaml")
	doneWhenPod     = cases.Named("class-namespaced-fills-all-three").Path("pod.yaml")
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
