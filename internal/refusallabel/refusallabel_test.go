package refusallabel

import (
	"slices"
	"testing"
)

func TestTheReasonValuesAreTheSpecs(t *testing.T) {
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{
			name: "the decider's dynamic_config_decision_refusals_total (spec 07 §5)",
			got:  Decision(),
			want: []string{"malformed", "pinned", "policy", "conflict", "env_policy"},
		},
		{
			name: "the front door's dynamic_config_admission_refusals_total (spec 07 §5, issue 23's caller_refused)",
			got:  FrontDoor(),
			want: []string{"malformed", "pinned", "policy", "conflict", "env_policy", "decider_unavailable", "internal", "caller_refused"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got, tt.want) {
				t.Fatalf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestTheListsAreFreshEachCall(t *testing.T) {
	d := Decision()
	d[0] = "changed"
	if Decision()[0] != Malformed || FrontDoor()[0] != Malformed {
		t.Fatal("a caller's change to a returned list reached the next caller")
	}
}
