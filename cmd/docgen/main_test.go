package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/docs"
)

func TestDocgenWritesAndChecksTheDocument(t *testing.T) {
	current, err := docs.Annotations()
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	tests := []struct {
		name     string
		existing []byte // nil = no file
		args     []string
		code     int
		stderr   string
	}{
		{"writing creates the document", nil, nil, 0, ""},
		{"a current document passes the check", current, []string{"-check"}, 0, ""},
		{"a stale document fails the check with the remedy", []byte("old\n"), []string{"-check"}, 1,
			"annotations.md is out of date: run make docs and commit"},
		{"a missing document fails the check", nil, []string{"-check"}, 1, "run make docs and commit"},
		{"an unknown flag is a usage error", nil, []string{"-bogus"}, 2, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "annotations.md")
			if tt.existing != nil {
				if err := os.WriteFile(out, tt.existing, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var stderr bytes.Buffer
			code := run(append([]string{"-out", out}, tt.args...), &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d, stderr containing %q", code, stderr.String(), tt.code, tt.stderr)
			}
			if tt.code == 0 {
				if got, _ := os.ReadFile(out); !bytes.Equal(got, current) {
					t.Fatalf("file after run differs from the generated document")
				}
			}
		})
	}
}
