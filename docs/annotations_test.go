package docs

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

func generated(t *testing.T) []byte {
	t.Helper()
	doc, err := Annotations()
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	return doc
}

func TestTheCommittedDocumentIsTheGeneratorsOutput(t *testing.T) {
	committed, err := os.ReadFile("annotations.md")
	if err != nil {
		t.Fatalf("read the committed document: %v", err)
	}
	if d := drift(committed, generated(t)); d != "" {
		t.Fatalf("docs/annotations.md is out of date (%s): run make docs and commit", d)
	}
}

func TestDriftIsFoundInAChangedDocument(t *testing.T) {
	doc := generated(t)
	tests := []struct {
		name      string
		committed []byte
		want      string
	}{
		{"an identical document has no drift", doc, ""},
		{"a document without the endpoint row drifts at that row",
			without(doc, "| `dynamic-config.rs/endpoint` |"), "generated \"| 3 | `dynamic-config.rs/endpoint` |"},
		{"a document with a hand edit drifts at the edit",
			bytes.Replace(doc, []byte("# Pod annotations"), []byte("# Annotations"), 1), "committed \"# Annotations\\n\", generated \"# Pod annotations\\n\""},
		{"a document with a line appended drifts after the last line",
			append(slices.Clone(doc), "extra\n"...), "committed \"extra\\n\", generated \"\""},
		{"a missing document drifts at the first line", nil, "line 1: committed \"\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := drift(tt.committed, doc)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Fatalf("drift = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEveryKeyExceptStatusHasARowInTheGeneratedTable(t *testing.T) {
	doc := generated(t)
	keys := documentedKeys(registry.Rows(), registry.OtherKeys())
	tests := []struct {
		name    string
		doc     []byte
		missing []string
	}{
		{"the generated document lists every key", doc, nil},
		{"a document without the endpoint row misses endpoint and only endpoint",
			without(doc, "| `dynamic-config.rs/endpoint` |"), []string{"endpoint"}},
		{"a document without the last registry row misses it",
			without(doc, "| "+strconv.Itoa(registry.Len())+" |"), []string{registry.Rows()[registry.Len()-1].Name}},
		{"a document without the also-section row misses also-section",
			without(doc, "| `dynamic-config.rs/also-section.<name>` |"), []string{"also-section.<name>"}},
		{"a document without the named-render row misses it",
			without(doc, "| `dynamic-config.rs/<key>.<name>` |"), []string{"<key>.<name>"}},
		{"a key mentioned only in prose is missing",
			bytes.Replace(doc, []byte("| 7 | `dynamic-config.rs/mode` |"), []byte("See `dynamic-config.rs/mode` "), 1), []string{"mode"}},
		{"a document without the status row misses nothing: the status mark is exempt",
			without(doc, "| `dynamic-config.rs/status` |"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := missingKeys(tt.doc, keys); !slices.Equal(got, tt.missing) {
				t.Fatalf("missing %q, want %q", got, tt.missing)
			}
		})
	}
}

func TestTheKeyTableFollowsTheRegistryOrder(t *testing.T) {
	var want []string
	for _, r := range registry.Rows() {
		want = append(want, r.Name)
	}
	doc := generated(t)
	swapped := bytes.Replace(doc, []byte("| 1 | `dynamic-config.rs/inject` |"), []byte("| 1 | `dynamic-config.rs/source` |"), 1)
	tests := []struct {
		name    string
		doc     []byte
		inOrder bool
	}{
		{"the generated table is in registry order", doc, true},
		{"a table whose first row names the second key is not", swapped, false},
		{"a table without a row is not", without(doc, "| 40 |"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := slices.Equal(tableOrder(tt.doc), want); got != tt.inOrder {
				t.Fatalf("in registry order = %v, want %v (table %q)", got, tt.inOrder, tableOrder(tt.doc))
			}
		})
	}
}

func TestRenderJudgesTheKeysItIsGiven(t *testing.T) {
	all := registry.Rows()
	others := registry.OtherKeys()
	withoutDoc := slices.Clone(all)
	withoutDoc[2].Doc = ""
	withoutScope := slices.Clone(all)
	withoutScope[5].Scope = 0
	otherWithoutDoc := slices.Clone(others)
	otherWithoutDoc[1].Doc = ""
	otherWithoutGrammar := slices.Clone(others)
	otherWithoutGrammar[2].Grammar = ""
	tests := []struct {
		name    string
		rows    []registry.Row
		others  []registry.OtherKey
		err     string
		missing []string
	}{
		{"the registry renders with every key", all, others, "", nil},
		{"a row dropped from the rows is missing from the table", slices.Delete(slices.Clone(all), 2, 3), others, "", []string{"endpoint"}},
		{"an other key dropped is missing from the table", all, slices.Delete(slices.Clone(others), 1, 2), "", []string{"also.<name>"}},
		{"a row without a doc line is refused by name", withoutDoc, others, `"endpoint"`, nil},
		{"a row without a scope is refused by name", withoutScope, others, `"path"`, nil},
		{"an other key without a doc line is refused by name", all, otherWithoutDoc, `other keys without documentation (doc and grammar are required): "also.<name>"`, nil},
		{"an other key without a grammar is refused by name", all, otherWithoutGrammar, `"also-section.<name>"`, nil},
		{"every undocumented key is named at once", withoutDoc, otherWithoutDoc, `"endpoint"; other keys without documentation (doc and grammar are required): "also.<name>"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Render(tt.rows, tt.others)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got := missingKeys(doc, documentedKeys(all, others)); !slices.Equal(got, tt.missing) {
				t.Fatalf("missing %q, want %q", got, tt.missing)
			}
		})
	}
}

func TestADeprecatedKeySaysSoInItsMeaning(t *testing.T) {
	tests := []struct {
		name string
		row  registry.Row
		want string
	}{
		{"a current key is its doc line", registry.Row{Doc: "d"}, "d"},
		{"a deprecated key names its replacement",
			registry.Row{Doc: "d", DeprecatedSince: "v0.4.0", Replacement: "new"}, "d (deprecated since v0.4.0; use dynamic-config.rs/new)"},
		{"a deprecated key without a replacement says so",
			registry.Row{Doc: "d", DeprecatedSince: "v0.4.0"}, "d (deprecated since v0.4.0; no replacement)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := meaning(&tt.row); got != tt.want {
				t.Fatalf("meaning = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestACellStaysInItsColumnAndShowsItsPlaceholders(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"an empty cell reads as a dash", "", "—"},
		{"a pipe is escaped", "a|b", `a\|b`},
		{"angle brackets are not read as HTML", "<secret-name>/<key>", "&lt;secret-name&gt;/&lt;key&gt;"},
		{"a newline does not break the row", "a\nb", "a b"},
		{"angle brackets inside a code span are shown as written", "the key `<name>` of <render>", "the key `<name>` of &lt;render&gt;"},
		{"a pipe inside a code span is still escaped", "`a|b`", "`a\\|b`"},
		{"text after a code span is escaped again", "`x` <y>", "`x` &lt;y&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cell(tt.in); got != tt.want {
				t.Fatalf("cell(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
