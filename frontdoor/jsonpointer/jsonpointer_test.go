package jsonpointer

import (
	"slices"
	"strings"
	"testing"
)

func TestEscapeTokenRoundTrips(t *testing.T) {
	for _, s := range []string{"plain", "dynamic-config.rs/status", "a~b", "~1/~0", ""} {
		tokens, err := Parse("/" + EscapeToken(s))
		if err != nil {
			t.Fatalf("Parse(%q) error = %v", s, err)
		}
		if len(tokens) != 1 || tokens[0] != s {
			t.Fatalf("round trip of %q gave %q", s, tokens)
		}
	}
}

func TestEscapeTokenEscapesTildeBeforeSlash(t *testing.T) {
	if got, want := EscapeToken("a/~b"), "a~1~0b"; got != want {
		t.Fatalf("EscapeToken(%q) = %q, want %q", "a/~b", got, want)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		pointer string
		want    []string
		wantErr string
	}{
		{name: "the empty pointer is the whole document", pointer: "", want: nil},
		{name: "the root member pointer has one empty token", pointer: "/", want: []string{""}},
		{name: "tokens are split at each slash", pointer: "/metadata/annotations/0", want: []string{"metadata", "annotations", "0"}},
		{name: "an escaped slash and tilde are unescaped tilde last", pointer: "/a~1b/c~0d/~01", want: []string{"a/b", "c~d", "~1"}},
		{name: "a pointer without a leading slash is refused", pointer: "metadata", wantErr: "must start with"},
		{name: "a tilde at the end is refused", pointer: "/a~", wantErr: "invalid escape"},
		{name: "a tilde before another character is refused", pointer: "/a~2", wantErr: "invalid escape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.pointer)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", tt.pointer, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) error = %v", tt.pointer, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Parse(%q) = %q, want %q", tt.pointer, got, tt.want)
			}
		})
	}
}

func FuzzEscapeTokenRoundTrips(f *testing.F) {
	for _, s := range []string{"plain", "dynamic-config.rs/status", "a~b", "~1/~0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tokens, err := Parse("/" + EscapeToken(s))
		if err != nil {
			t.Fatalf("Parse of the escaped %q error = %v", s, err)
		}
		if len(tokens) != 1 || tokens[0] != s {
			t.Fatalf("round trip of %q gave %q", s, tokens)
		}
	})
}
