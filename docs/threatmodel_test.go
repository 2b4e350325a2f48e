package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTheThreatModelNamesRealTests keeps docs/threat-model.md honest: every
// Go test or fuzz function it names as proof exists, and every
// helm-unittest suite it names is a suite of the chart.
func TestTheThreatModelNamesRealTests(t *testing.T) {
	doc, err := os.ReadFile("threat-model.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	funcs := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	suites := map[string]bool{}
	suite := regexp.MustCompile(`(?m)^suite: (.+)$`)
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".work" || d.Name() == ".cache") {
			return filepath.SkipDir
		}
		switch {
		case strings.HasSuffix(path, "_test.go"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range funcs.FindAllSubmatch(b, -1) {
				defined[string(m[1])] = true
			}
		case strings.Contains(path, filepath.Join("charts", "dynamic-config", "tests")) && strings.HasSuffix(path, "_test.yaml"):
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range suite.FindAllSubmatch(b, -1) {
				suites[strings.TrimSpace(string(m[1]))] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllSubmatch(doc, -1)
	if len(named) < 30 {
		t.Fatalf("the threat model names %d tests; it should prove each threat", len(named))
	}
	for _, m := range named {
		if !defined[string(m[1])] {
			t.Errorf("docs/threat-model.md names %s, which is no test or fuzz function of the repository", m[1])
		}
	}
	for _, m := range regexp.MustCompile("chart `([^`]+)` suite").FindAllSubmatch(doc, -1) {
		if !suites[string(m[1])] {
			t.Errorf("docs/threat-model.md names the chart suite %q, which does not exist", m[1])
		}
	}
}
