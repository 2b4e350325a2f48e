package review

import (
	"bytes"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout/jsonouttest"
)

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
			want := jsonouttest.Marshalled(t, Review{APIVersion: APIVersion, Kind: Kind, Response: r})
			if got := Encode(r); !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range jsonouttest.EscapeCases {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		r := &Response{UID: key, Warnings: []string{value}, AuditAnnotations: map[string]string{key: value}}
		if got, want := Encode(r), jsonouttest.Marshalled(t, Review{APIVersion: APIVersion, Kind: Kind, Response: r}); !bytes.Equal(got, want) {
			t.Errorf("Encode: got  %s\nwant %s", got, want)
		}
	})
}
