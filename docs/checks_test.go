package docs

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// documentedKeys are the keys the user table must list: every registry key
// and every other recognised key except the status mark (spec 01 §2).
func documentedKeys(rows []registry.Row, others []registry.OtherKey) []string {
	keys := make([]string, 0, len(rows)+len(others))
	for i := range rows {
		keys = append(keys, rows[i].Name)
	}
	for i := range others {
		if others[i].Kind != registry.KindStatus {
			keys = append(keys, others[i].Form)
		}
	}
	return keys
}

// missingKeys are the keys that have no table row of their own in doc; a key
// only mentioned in prose or inside another row's text does not count.
func missingKeys(doc []byte, keys []string) []string {
	var missing []string
	for _, k := range keys {
		if !hasTableRow(doc, k) {
			missing = append(missing, k)
		}
	}
	return missing
}

func hasTableRow(doc []byte, key string) bool {
	cell := "| `" + registry.Prefix + key + "` |"
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, cell) {
			return true
		}
	}
	return false
}

var numberedRow = regexp.MustCompile("^\\| [0-9]+ \\| `" + regexp.QuoteMeta(registry.Prefix) + "([^`]+)` \\|")

// tableOrder is the order of the keys in the numbered registry table.
func tableOrder(doc []byte) []string {
	var names []string
	for line := range strings.Lines(string(doc)) {
		if m := numberedRow.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// drift describes the first difference between the committed and the
// generated document, "" when they are equal.
func drift(committed, generated []byte) string {
	if bytes.Equal(committed, generated) {
		return ""
	}
	c := strings.SplitAfter(string(committed), "\n")
	g := strings.SplitAfter(string(generated), "\n")
	for i := 0; i < len(c) || i < len(g); i++ {
		var cl, gl string
		if i < len(c) {
			cl = c[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if cl != gl {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, cl, gl)
		}
	}
	return "the documents differ"
}

// without returns doc minus the lines containing s.
func without(doc []byte, s string) []byte {
	var b strings.Builder
	for line := range strings.Lines(string(doc)) {
		if !strings.Contains(line, s) {
			b.WriteString(line)
		}
	}
	return []byte(b.String())
}
