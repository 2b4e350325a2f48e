package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// audit-pods --outdated and rollout restart --outdated refuse what they
// cannot do before they reach a cluster; what they do is doors/outdated's
// (its tests, and the e2e TestOutdatedWorkloadsAreListedAndRolled).
func TestTheOutdatedCommandsRefuseAnIncompleteCommandLine(t *testing.T) {
	withFoundationEnv(t, nil)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"rollout restart selects nothing without --outdated", []string{"rollout", "restart", "-A"}, "rollout restart: --outdated is required"},
		{"rollout restart needs at least one rollout in flight", []string{"rollout", "restart", "--outdated", "--max-in-flight", "0"}, "--max-in-flight is 0"},
		{"rollout restart needs a positive timeout", []string{"rollout", "restart", "--outdated", "--timeout", "0s"}, "--timeout is 0s"},
		{"-n and -A exclude each other", []string{"rollout", "restart", "--outdated", "-n", "shop", "-A", "--kubeconfig", kubeconfig}, "-n and -A exclude each other"},
		{"--outdated asks the cluster's decider, so it needs its address", []string{"audit-pods", "--outdated", "-A", "--kubeconfig", kubeconfig}, "give its gRPC address with --decider-target"},
		{"audit-pods takes table or json", []string{"audit-pods", "--outdated", "-o", "yaml"}, `-o is "yaml": want table or json`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := cliRun(t, "", c.args...)
			if code != exitUsage || !strings.Contains(stderr, c.wantErr) {
				t.Errorf("exit %d (want %d), stderr does not say %q\nstdout:\n%s\nstderr:\n%s", code, exitUsage, c.wantErr, stdout, stderr)
			}
		})
	}
	stdout, _, code := cliRun(t, "", "rollout", "--help")
	if code != exitOK || !strings.Contains(stdout, "restart") {
		t.Errorf("the rollout group does not list restart (exit %d):\n%s", code, stdout)
	}
}
