package docparse

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
)

func TestText(t *testing.T) {
	cases := []struct {
		name, text string
		kind       doctree.Kind
		err        string
	}{
		{"a YAML map is one mapping", "rules: []", doctree.Mapping, ""},
		{"a JSON list is one sequence", `[{"name": "A"}]`, doctree.Sequence, ""},
		{"a parse error drops the parser's prefix", "rules: [", 0, "line 1: did not find expected node content"},
		{"two documents are refused", "a: 1\n---\nb: 2", 0, "more than one document"},
		{"a broken second document is its parse error", "a: 1\n---\n[", 0, "line 3: did not find expected node content"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Text(tc.text)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err || n != nil {
					t.Fatalf("got %v, %v; want the error %q", n, err, tc.err)
				}
				return
			}
			if err != nil || n == nil || n.Kind != tc.kind {
				t.Fatalf("got %+v, %v; want a node of kind %d", n, err, tc.kind)
			}
		})
	}
}
