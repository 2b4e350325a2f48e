// Package knob validates and compares knob values: the value grammars of the
// annotation contract (spec 01 §3) that both a pod annotation and an
// installation setting can carry. The same expectation text serves the
// annotation message `{K} is {V}: <expectation>` and the installation message
// `{ctx}: <knob> is {V}: <expectation>` (spec 02 §3 rule 4).
//
// The package holds the grammars as values; which knob has which grammar is
// a column of the registry table (decider/core/registry), never a lookup here.
package knob

import "github.com/dynamic-config-admission/dynamic-config/internal/redact"

// Failure is one failed value check.
type Failure struct {
	// Check is the stable check id, e.g. "watch-seconds.value".
	Check string
	// Expectation is the message tail after `{K} is {V}: `.
	Expectation string
	// Shown is the value as the message shows it: redacted and quoted
	// (redact.Quote), or a bare computed number (run-as.root shows 0).
	Shown string
}

// Message renders the failure for subject: `<subject> is <Shown>: <Expectation>`.
// For an annotation the subject is the full key; for an installation value it is
// `{ctx}: <knob>`.
func (f *Failure) Message(subject string) string {
	return subject + " is " + f.Shown + ": " + f.Expectation
}

// fail builds a failure showing value quoted.
func fail(check, expectation, value string) *Failure {
	return &Failure{Check: check, Expectation: expectation, Shown: redact.Quote(value)}
}
