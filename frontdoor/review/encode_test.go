package review

import (
	"bytes"
	"encoding/json"
	"testing"
)

// strings that exercise every escape rule of encoding/json with HTML
// escaping off.
var escapeCases = []string{
	"", "plain", `quote " backslash \ slash /`, "<html> & 'single'",
	"control \x00 \x01 \x1f \b \f \n \r \t \x7f", "utf-8 é ü 漢字 🎉",
	"separators \u2028 \u2029", "invalid \xff \xc3 end", "\xe2\x80", "dynamic-config.rs~1status",
}

// marshalled is what encoding/json writes for v: the reference Encode must
// match byte for byte.
func marshalled(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestEncodeWritesWhatEncodingJSONWrites(t *testing.T) {
	responses := map[string]*Response{
		"an allowed answer": {UID: "u", Allowed: true},
		"a patched answer with audit annotations and warnings": {UID: "u-1", Allowed: true, Patch: "W10=", PatchType: PatchTypeJSONPatch,
			AuditAnnotations: map[string]string{"revision": "sha256:ab", "env-policy-rule-0": "would reject <A> & \"B\""},
			Warnings:         []string{"first", "second <&>\n"}},
		"a denial":                       {UID: "\xff", Status: &Status{Code: 400, Message: "dynamic-config.rs/watch-seconds is \"15s\": whole seconds\u2028", Reason: "DynamicConfigMalformed"}},
		"empty collections are left out": {UID: "u", AuditAnnotations: map[string]string{}, Warnings: []string{}},
		"no response":                    nil,
	}
	for name, r := range responses {
		t.Run(name, func(t *testing.T) {
			want := marshalled(t, Review{APIVersion: APIVersion, Kind: Kind, Response: r})
			if got := Encode(r); !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		r := &Response{UID: key, Warnings: []string{value}, AuditAnnotations: map[string]string{key: value}}
		if got, want := Encode(r), marshalled(t, Review{APIVersion: APIVersion, Kind: Kind, Response: r}); !bytes.Equal(got, want) {
			t.Errorf("Encode: got  %s\nwant %s", got, want)
		}
	})
}
