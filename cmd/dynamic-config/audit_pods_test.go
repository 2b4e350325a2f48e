package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The audit commands' usage errors; what they find is tested in podaudit
// and, against a real API server, in test/e2e/podaudit_test.go.
func TestTheAuditCommandsRefuseBadFlagsWithExitTwo(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\nclusters: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"an unknown output", []string{"audit-pods", "-o", "yaml"}, `audit-pods: -o is "yaml": want table or json`},
		{"a namespace and all namespaces", []string{"audit-pods", "-A", "-n", "shop"}, "audit-pods: -n and -A exclude each other"},
		{"a zero timeout", []string{"audit-pods", "--timeout", "0s"}, "audit-pods: --timeout is 0s: it must be positive"},
		{"a kubeconfig without a cluster", []string{"audit-pods", "-A", "--kubeconfig", kubeconfig}, "audit-pods: API server client:"},
		{"a zero interval", []string{"audit-reporter", "--interval", "0s"}, "audit-reporter: --interval is 0s: it must be positive"},
		{"no namespace label at all", []string{"audit-reporter", "--max-namespaces", "0"}, "audit-reporter: --max-namespaces is 0: it must be positive"},
		{"a negative event budget", []string{"audit-reporter", "--max-events-per-pass", "-1"}, "audit-reporter: --max-events-per-pass is -1: it must not be negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			code := run(c.args, strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), exitUsage, c.want)
			}
		})
	}
}
