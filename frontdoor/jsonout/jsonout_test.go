package jsonout

import (
	"bytes"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout/jsonouttest"
)

func TestAppendValueWritesWhatEncodingJSONWrites(t *testing.T) {
	values := map[string]any{
		"nil":               nil,
		"an empty array":    []any{},
		"an empty object":   map[string]any{},
		"a nil string list": []string(nil),
		"integers":          []any{0, int32(-7), int64(1 << 40), uint32(420), true, false},
		"nested objects in key order": map[string]any{"name": "agent", "args": []any{"--watch", "10"},
			"securityContext": map[string]any{"runAsUser": int64(1000), "capabilities": map[string]any{"drop": []any{"ALL"}}},
			"resources":       map[string]any{"limits": map[string]string{"memory": "64Mi", "cpu": "100m"}}},
		"a fallback kind": 1.5,
	}
	for _, s := range jsonouttest.EscapeCases {
		values["string "+s] = s
		values["object key "+s] = map[string]any{s: s, "a": []string{s}}
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			got, err := AppendValue(nil, v)
			if err != nil {
				t.Fatal(err)
			}
			if want := jsonouttest.Marshalled(t, v); !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func FuzzAppendValue(f *testing.F) {
	for _, s := range jsonouttest.EscapeCases {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		v := map[string]any{key: []any{value, map[string]string{value: key}}, "uid": value}
		got, err := AppendValue(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if want := jsonouttest.Marshalled(t, v); !bytes.Equal(got, want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestMarshalIsCompactUnescapedAndEndsWithoutNewline(t *testing.T) {
	got, err := Marshal(map[string]any{"b": "<&>", "a": []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":["x"],"b":"<&>"}`; string(got) != want {
		t.Fatalf("Marshal() = %s, want %s", got, want)
	}
}
