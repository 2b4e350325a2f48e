package installation

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

// loadYAML builds the installation of a YAML document (may be "": none)
// with the given environment, as the loader would hand it over.
func loadYAML(t *testing.T, doc string, env ...string) (*Installation, error) {
	t.Helper()
	var d Document
	if doc != "" {
		d.Path, d.Present = filepath.Join(t.TempDir(), "installation.yaml"), true
		root, problem := docparse.Document(d.Path, []byte(doc))
		if problem != "" {
			d.Problems = []string{problem}
		}
		d.Root = root
	}
	return Build(d, env, docparse.Text)
}

// mustLoad loads and fails the test on any problem.
func mustLoad(t *testing.T, doc string, env ...string) *Installation {
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
	var p *Problems
	if !errors.As(err, &p) {
		t.Fatalf("expected *Problems, got %v", err)
	}
	return p.Lines
}

func assertLines(t *testing.T, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems differ\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
