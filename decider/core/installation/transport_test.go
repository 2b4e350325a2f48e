package installation

import (
	"errors"
	"strings"
	"testing"
)

func TestFromTransport(t *testing.T) {
	watch := []byte(`{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"30!","DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS":"true"}`)
	tests := []struct {
		name      string
		canonical []byte
		revision  string // "" = the canonical form's own
		want      string // "" = loads; else a fragment of the error
		mismatch  bool
	}{
		{name: "a canonical form with its own revision loads", canonical: watch},
		{name: "the empty form is the empty installation", canonical: []byte(`{}`)},
		{name: "another revision is a mismatch naming both", canonical: watch, revision: EmptyRevision, want: "the snapshot says " + EmptyRevision, mismatch: true},
		{name: "text that is not JSON is refused", canonical: []byte(`{"DYNAMIC_CONFIG_AGENT_IMAGE":`), want: "not a JSON object"},
		{name: "a JSON list is refused", canonical: []byte(`[]`), want: "not an object"},
		{name: "text after the object is refused", canonical: []byte(`{} {}`), want: "text after the object"},
		{name: "an unknown variable is refused", canonical: []byte(`{"DYNAMIC_CONFIG_AGENT_NOPE":"1"}`), want: `"DYNAMIC_CONFIG_AGENT_NOPE" is not an installation variable`},
		{name: "an env-only setting that is not a string is refused", canonical: []byte(`{"DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS":true}`), want: "a string is required"},
		{name: "an invalid value is refused by the installation's own checks", canonical: []byte(`{"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS":"-1"}`), want: "watch-seconds"},
		{name: "a gate that is not a list of pairs is refused", canonical: []byte(`{"DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW":{"*":["consul"]}}`), want: "[namespace, [names]] pairs"},
		{name: "nesting beyond the bound is refused", canonical: []byte(`{"DYNAMIC_CONFIG_ENV_POLICY":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`), want: "nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rev := tt.revision
			if rev == "" {
				rev = Revision(tt.canonical)
			}
			inst, err := FromTransport(Transport{Revision: rev, Canonical: tt.canonical})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if inst.Revision != rev {
					t.Fatalf("revision %s, want %s", inst.Revision, rev)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if errors.Is(err, ErrRevisionMismatch) != tt.mismatch {
				t.Fatalf("errors.Is(ErrRevisionMismatch) = %v, want %v", !tt.mismatch, tt.mismatch)
			}
		})
	}
}
