package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

func TestRolloutPromoteExitCodes(t *testing.T) {
	withEnviron(t)
	staged := "agent:\n  tag: v0.3.0\nrollout:\n  candidate:\n    agent:\n      tag: v0.4.0\n"
	rolloutDoc := testfile.Write(t, "rollout.yaml", "candidate:\n  watchSeconds: \"20\"\n")
	tests := []struct {
		name   string
		args   func() []string
		code   int
		stdout string
		stderr string
	}{
		{"--values rewrites the file", func() []string { return []string{"--values", testfile.Write(t, "values.yaml", staged)} }, 0, "", "is the installation; rollout emptied"},
		{"--values -o yaml prints the promoted values", func() []string { return []string{"--values", testfile.Write(t, "values.yaml", staged), "-o", "yaml"} }, 0, "agent:\n  tag: v0.4.0\n", ""},
		{"--rollout prints the installation document", func() []string { return []string{"--rollout", rolloutDoc} }, 0, "watchSeconds: \"20\"\n", ""},
		{"an invalid rollout is exit 2", func() []string {
			return []string{"--values", testfile.Write(t, "values.yaml", "rollout:\n  candidate:\n    agent:\n      tag: v0.4.0\n  stage: canary\n")}
		}, 2, "", "the slice is empty"},
		{"nothing to promote is exit 2", func() []string { return []string{"--values", testfile.Write(t, "values.yaml", "agent:\n  tag: v1\n")} }, 2, "", "no candidate to promote"},
		{"an unknown -o is a usage error", func() []string { return []string{"--rollout", rolloutDoc, "-o", "json"} }, 2, "", `-o is "json": yaml`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(append([]string{"rollout", "promote"}, tt.args()...), strings.NewReader(""), &out, &errOut)
			if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
			}
		})
	}
	t.Run("the values file is rewritten with the move done", func(t *testing.T) {
		path := testfile.Write(t, "values.yaml", staged)
		var out, errOut bytes.Buffer
		if code := run([]string{"rollout", "promote", "--values", path}, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		if data, _ := os.ReadFile(path); string(data) != "agent:\n  tag: v0.4.0\n" {
			t.Errorf("the file:\n%s", data)
		}
	})
}
