package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// otherDocument is an installation whose revision differs from the empty one.
func otherDocument(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(path, []byte("watchSeconds: \"30\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var revisionInTable = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

func TestFleetStatus(t *testing.T) {
	empty := foundationEmptyFile(t)
	a, b := startReplica(t, empty, fleetAge), startReplica(t, empty, fleetAge)
	other := startReplica(t, otherDocument(t), fleetAge)
	gone := freeLoopbackAddr(t)
	static := func(ds ...string) string { return "static:///" + strings.Join(ds, ",") }

	cases := []struct {
		name      string
		args      []string
		code      int
		revisions int      // distinct revisions in the table
		want      []string // lines or fragments of stdout
		stderr    string
	}{
		{"two replicas on one revision agree and exit 0",
			[]string{"--decider-target", static(a.Addr().String(), b.Addr().String())}, exitOK, 1,
			[]string{a.Addr().String() + "  " + installation.EmptyRevision, "in agreement: 2 replicas on one revision"}, ""},
		{"two deciders that disagree are reported as skew and exit 1",
			[]string{"--decider-target", static(a.Addr().String(), other.Addr().String())}, exitRefused, 2,
			[]string{"skew: 2 replicas answered with 2 revisions", installation.EmptyRevision + " on 1"}, ""},
		{"an unreachable replica makes the report incomplete and exits 1",
			[]string{"--decider-target", static(a.Addr().String(), gone), "--timeout", "1s"}, exitRefused, 1,
			[]string{gone + "  -", "unreachable:", "incomplete: 1 of 2 replicas unreachable"}, ""},
		{"a dns:/// target resolves to its addresses",
			[]string{"--decider-target", "dns:///" + a.Addr().String()}, exitOK, 1,
			[]string{"in agreement: 1 replicas on one revision"}, ""},
		{"every line names the last reload",
			[]string{"--decider-target", static(b.Addr().String())}, exitOK, 1, []string{"none yet"}, ""},
		{"a missing target is a usage error", nil, exitUsage, 0, nil, "fleet-status: --decider-target is required"},
		{"an unknown scheme is refused, naming it",
			[]string{"--decider-target", "xds:///deciders"}, exitUsage, 0, nil, `the scheme "xds" is not one of dns:/// and static:///`},
		{"a static entry without a port is refused, naming it",
			[]string{"--decider-target", "static:///" + a.Addr().String() + ",decider-b"}, exitUsage, 0, nil, `entry "decider-b" is not host:port`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"fleet-status", "--decider-plaintext"}, c.args...)
			code := run(args, strings.NewReader(""), &stdout, &stderr)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout.String(), stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			seen := map[string]bool{}
			for _, rev := range revisionInTable.FindAllString(stdout.String(), -1) {
				seen[rev] = true
			}
			if c.want != nil && len(seen) != c.revisions {
				t.Errorf("%d distinct revisions in the output, want %d:\n%s", len(seen), c.revisions, stdout.String())
			}
			if c.stderr != "" && !strings.Contains(stderr.String(), c.stderr) {
				t.Errorf("stderr lacks %q:\n%s", c.stderr, stderr.String())
			}
			if c.code == exitOK && stderr.Len() > 0 {
				t.Errorf("stderr on success:\n%s", stderr.String())
			}
		})
	}
}
