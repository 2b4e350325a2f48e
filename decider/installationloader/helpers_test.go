package installationloader

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// writeDoc writes an installation document named name into a fresh directory.
func writeDoc(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadYAML loads a YAML document file (none when doc is "") with the given environment.
func loadYAML(t *testing.T, doc string, env ...string) (*installation.Installation, error) {
	t.Helper()
	opts := Options{Environ: env}
	if doc != "" {
		opts.DocumentPath, opts.DocumentExplicit = writeDoc(t, "installation.yaml", doc), true
	}
	return Load(opts)
}

// mustLoad loads and fails the test on any problem.
func mustLoad(t *testing.T, doc string, env ...string) *installation.Installation {
	t.Helper()
	inst, err := loadYAML(t, doc, env...)
	if err != nil {
		t.Fatalf("unexpected problems:\n%v", err)
	}
	return inst
}

// problemLines loads and returns the problem lines (failing when valid).
func problemLines(t *testing.T, doc string, env ...string) []string {
	t.Helper()
	_, err := loadYAML(t, doc, env...)
	var p *installation.Problems
	if !errors.As(err, &p) {
		t.Fatalf("expected *installation.Problems, got %v", err)
	}
	return p.Lines
}

func assertLines(t *testing.T, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems differ\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
