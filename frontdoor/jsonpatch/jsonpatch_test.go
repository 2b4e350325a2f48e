package jsonpatch

import (
	"strings"
	"testing"
)

func TestApplyBehavesAsTheAPIServersEngine(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		patch   string
		want    string
		wantErr string
	}{
		{
			name:  "an add to an object member creates it",
			doc:   `{"a":1}`,
			patch: `[{"op":"add","path":"/b","value":{"c":[]}}]`,
			want:  `{"a":1,"b":{"c":[]}}`,
		},
		{
			name:  "an add with a dash appends to an array",
			doc:   `{"a":[1,2]}`,
			patch: `[{"op":"add","path":"/a/-","value":3}]`,
			want:  `{"a":[1,2,3]}`,
		},
		{
			name:  "an add at index zero inserts first",
			doc:   `{"a":[1,2]}`,
			patch: `[{"op":"add","path":"/a/0","value":0}]`,
			want:  `{"a":[0,1,2]}`,
		},
		{
			name:  "an add at the array length inserts at the end",
			doc:   `{"a":[1]}`,
			patch: `[{"op":"add","path":"/a/1","value":2}]`,
			want:  `{"a":[1,2]}`,
		},
		{
			name:  "an escaped member name is unescaped tilde last",
			doc:   `{"m":{}}`,
			patch: `[{"op":"add","path":"/m/dynamic-config.rs~1status","value":"injected"},{"op":"add","path":"/m/a~0b~01","value":1}]`,
			want:  `{"m":{"a~b~1":1,"dynamic-config.rs/status":"injected"}}`,
		},
		{
			name:  "a replace changes an existing member",
			doc:   `{"c":[{"command":["a"],"args":["b"]}]}`,
			patch: `[{"op":"replace","path":"/c/0/command","value":["x","<&>"]},{"op":"remove","path":"/c/0/args"}]`,
			want:  `{"c":[{"command":["x","<&>"]}]}`,
		},
		{
			name:  "a remove takes an element out of an array",
			doc:   `[1,2,3]`,
			patch: `[{"op":"remove","path":"/1"}]`,
			want:  `[1,3]`,
		},
		{
			name:  "large numbers keep their literal text",
			doc:   `{"n":12345678901234567890,"f":1.50}`,
			patch: `[]`,
			want:  `{"f":1.50,"n":12345678901234567890}`,
		},
		{
			name:  "a null member can be replaced by an add",
			doc:   `{"v":null}`,
			patch: `[{"op":"add","path":"/v","value":[]},{"op":"add","path":"/v/-","value":"x"}]`,
			want:  `{"v":["x"]}`,
		},
		// Failures and leniencies are the API server's (evanphx/json-patch v4):
		// inject must accept exactly what the cluster accepts.
		{
			name:    "an add below a missing member fails",
			doc:     `{}`,
			patch:   `[{"op":"add","path":"/spec/volumes","value":[]}]`,
			wantErr: `doc is missing path: "/spec/volumes"`,
		},
		{
			name:    "an add past the end of an array fails",
			doc:     `{"a":[]}`,
			patch:   `[{"op":"add","path":"/a/1","value":1}]`,
			wantErr: "invalid index referenced",
		},
		{
			name:    "a remove of a missing member fails",
			doc:     `{}`,
			patch:   `[{"op":"remove","path":"/x"}]`,
			wantErr: "Unable to remove nonexistent key: x",
		},
		{
			name:    "a pointer without a leading slash fails",
			doc:     `{}`,
			patch:   `[{"op":"add","path":"a","value":1}]`,
			wantErr: `doc is missing path: "a"`,
		},
		{
			name:    "descending into a string fails",
			doc:     `{"a":"s"}`,
			patch:   `[{"op":"add","path":"/a/b","value":1}]`,
			wantErr: `doc is missing path: "/a/b"`,
		},
		{
			name:    "a patch that is not an array of operations is refused",
			doc:     `{}`,
			patch:   `{"op":"add"}`,
			wantErr: "decode patch",
		},
		{
			name:    "a document that is not one JSON value is refused",
			doc:     `{} {}`,
			patch:   `[]`,
			wantErr: "decode document",
		},
		{
			name:  "a replace of a missing member adds it, as the API server does",
			doc:   `{}`,
			patch: `[{"op":"replace","path":"/x","value":1}]`,
			want:  `{"x":1}`,
		},
		{
			name:  "move is applied, as the API server does",
			doc:   `{"a":1}`,
			patch: `[{"op":"move","from":"/a","path":"/b"}]`,
			want:  `{"b":1}`,
		},
		{
			name:  "an add without a value adds null, as the API server does",
			doc:   `{}`,
			patch: `[{"op":"add","path":"/a"}]`,
			want:  `{"a":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply([]byte(tt.doc), []byte(tt.patch))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Apply() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply() error = %v", err)
			}
			if string(got) != tt.want {
				t.Fatalf("Apply() = %s, want %s", got, tt.want)
			}
		})
	}
}

func FuzzApply(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":null}],"m":{}}`), []byte(`[{"op":"add","path":"/a/-","value":2},{"op":"remove","path":"/a/0"},{"op":"replace","path":"/m","value":{"x~y/z":1}}]`))
	f.Add([]byte(`[]`), []byte(`[{"op":"add","path":"/0","value":"x"},{"op":"add","path":"","value":{}}]`))
	f.Add([]byte(`{"k":"v"}`), []byte(`[{"op":"add","path":"/k~1~0","value":1}]`))
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		out, err := Apply(doc, patch)
		if err != nil {
			return
		}
		if _, err := Decode(out); err != nil {
			t.Fatalf("Apply() produced invalid JSON %q: %v", out, err)
		}
	})
}
