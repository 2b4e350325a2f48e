package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The chart make publish pushes is the repository's chart with the values
// that name where things were published (image.repository, and
// agent.image when the agent image was mirrored), so that
// `helm install oci://REGISTRY/charts/dynamic-config` deploys what was
// published with no --set. values.yaml is edited line by line, so its
// comments (the chart's documentation) stay as they are.

// plainValue is what --set writes: an image reference, a plain YAML scalar
// as it stands (a ':' is never followed by a space, nothing starts a comment).
var plainValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$`)

// setValues is the repeated --set PATH=VALUE flag.
type setValues []string

func (s *setValues) String() string     { return strings.Join(*s, ",") }
func (s *setValues) Set(v string) error { *s = append(*s, v); return nil }

// setValuesLine replaces the scalar at path (parent.key, two levels) in the
// text of a values.yaml: the line "  key: …" inside the top-level block
// "parent:". A trailing comment is kept. It fails when the key is not found
// exactly once in its block.
func setValuesLine(text, path, value string) (string, error) {
	parent, key, ok := strings.Cut(path, ".")
	if !ok || parent == "" || key == "" || strings.Contains(key, ".") {
		return "", fmt.Errorf("--set %s: want PARENT.KEY=VALUE (two levels)", path)
	}
	if !plainValue.MatchString(value) {
		return "", fmt.Errorf("--set %s=%q: want an image reference (letters, digits and ._:/@+-)", path, value)
	}
	lines := strings.Split(text, "\n")
	keyLine := regexp.MustCompile(`^  ` + regexp.QuoteMeta(key) + `:[ \t]*([^#]*?)([ \t]+#.*)?$`)
	in, found := false, -1
	for i, l := range lines {
		switch {
		case l == parent+":":
			in = true
			continue
		case l != "" && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "#"):
			in = false
		}
		if in && keyLine.MatchString(l) {
			if found >= 0 {
				return "", fmt.Errorf("--set %s: two such lines in values.yaml", path)
			}
			found = i
		}
	}
	if found < 0 {
		return "", fmt.Errorf("--set %s: no line \"  %s: …\" in the block \"%s:\" of values.yaml", path, key, parent)
	}
	m := keyLine.FindStringSubmatch(lines[found])
	lines[found] = "  " + key + ": " + value + m[2]
	return strings.Join(lines, "\n"), nil
}

// copyChart copies the chart directory src to dst (made; must not exist),
// but for its Go files: the chart's Go package (which the packaged chart
// leaves out, .helmignore) must not reappear as a second package of the
// module under bin/.
func copyChart(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.Mkdir(out, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
}

// runChartValues is `ociimage chart-values --chart DIR --out DIR --set PATH=VALUE…`:
// the chart copied to OUT/<its name> with values.yaml's PATHs set.
func runChartValues(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ociimage chart-values", flag.ContinueOnError)
	chart := fs.String("chart", "", "the chart directory")
	out := fs.String("out", "", "the directory to copy it into (its old copy is replaced)")
	var sets setValues
	fs.Var(&sets, "set", "PARENT.KEY=VALUE of values.yaml, e.g. image.repository=registry.example.com/team/dynamic-config; repeatable")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *chart == "" || *out == "" || len(sets) == 0 || fs.NArg() > 0 {
		return errors.New("want --chart DIR --out DIR and at least one --set PARENT.KEY=VALUE")
	}
	values, err := os.ReadFile(filepath.Join(*chart, "values.yaml"))
	if err != nil {
		return err
	}
	text := string(values)
	for _, s := range sets {
		p, v, _ := strings.Cut(s, "=")
		if text, err = setValuesLine(text, p, v); err != nil {
			return err
		}
	}
	dst := filepath.Join(*out, filepath.Base(filepath.Clean(*chart)))
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := copyChart(*chart, dst); err != nil {
		return fmt.Errorf("copy the chart: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dst, "values.yaml"), []byte(text), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s\n", dst, strings.Join(sets, ", "))
	return nil
}
