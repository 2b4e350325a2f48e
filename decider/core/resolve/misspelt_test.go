package resolve

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// A pod whose only inject keys are misspellings passes untouched, as every
// pod that does not ask does, but it is told why (issue 40): the warning
// names the key and the one it is near.
func TestAMisspeltInjectIsAWarningNotASilentSkip(t *testing.T) {
	cases := []struct {
		name string
		pod  *decision.Facts
		want []string // warning messages, in order
	}{
		{"a swapped pair of letters", facts("injcet", "true", "source", "consul"),
			[]string{`dynamic-config.rs/injcet is not part of the contract: did you mean dynamic-config.rs/inject? The pod was admitted without the agent, since only dynamic-config.rs/inject "true" asks for it`}},
		{"two misspellings are two warnings, in byte order", facts("inejct", "true", "Inject", "true"),
			[]string{
				`dynamic-config.rs/Inject is not part of the contract: did you mean dynamic-config.rs/inject? The pod was admitted without the agent, since only dynamic-config.rs/inject "true" asks for it`,
				`dynamic-config.rs/inejct is not part of the contract: did you mean dynamic-config.rs/inject? The pod was admitted without the agent, since only dynamic-config.rs/inject "true" asks for it`,
			}},
		{"the real key beside a misspelling is the pod's answer", facts("inject", "false", "injcet", "true"), nil},
		{"a key near another key than inject is no reason to warn", facts("source", "consul", "sorce", "vault"), nil},
		{"a pod without misspellings is skipped in silence", facts("source", "consul"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(nil, nil, c.pod)
			if d.Outcome != decision.OutcomeSkip || d.SkipReason != decision.SkipNotRequested {
				t.Fatalf("outcome %v (%v), want a NOT_REQUESTED skip", d.Outcome, d.SkipReason)
			}
			var got []string
			for _, w := range d.Warnings {
				if w.Code != WarnInjectMisspelled {
					t.Errorf("warning code %q, want %q", w.Code, WarnInjectMisspelled)
				}
				got = append(got, w.Message)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}
