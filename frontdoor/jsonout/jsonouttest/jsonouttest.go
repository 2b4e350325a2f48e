// Package jsonouttest holds what the tests of the front door's JSON writers
// share: the strings that exercise every escape rule, and the reference
// output they must match byte for byte.
package jsonouttest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// EscapeCases are strings that exercise every escape rule of encoding/json
// with HTML escaping off.
var EscapeCases = []string{
	"", "plain", `quote " backslash \ slash /`, "<html> & 'single'",
	"control \x00 \x01 \x1f \b \f \n \r \t \x7f", "utf-8 é ü 漢字 🎉",
	"separators \u2028 \u2029", "invalid \xff \xc3 end", "\xe2\x80", "dynamic-config.rs~1status",
}

// Marshalled is what encoding/json writes for v with HTML escaping off: the
// reference the appending writers must match byte for byte.
func Marshalled(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
