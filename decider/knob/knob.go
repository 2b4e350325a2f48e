// Package knob validates and compares knob values: the value grammars of the
// annotation contract (spec 01 §3) that both a pod annotation and an
// installation setting can carry. The same expectation text serves the
// annotation message `{K} is {V}: <expectation>` and the installation message
// `{ctx}: <knob> is {V}: <expectation>` (spec 02 §3 rule 4).
//
// A knob is spelled as its annotation, without prefix or render suffix
// ("watch-seconds", "endpoint-secret").
package knob

import "github.com/dynamic-config-admission/dynamic-config/decider/redact"

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

// Check validates value as knob's grammar and returns the normalised value
// (numbers in plain decimal, file-mode as "0<oct>", everything else as
// written). A knob this package does not know accepts any value unchanged.
func Check(knob, value string) (normalised string, f *Failure) {
	g, ok := grammars[knob]
	if !ok {
		return value, nil
	}
	return g.check(value)
}

// Known reports whether knob has a value grammar here.
func Known(knob string) bool {
	_, ok := grammars[knob]
	return ok
}

// Equal compares two values of knob the way a pin does (spec 02 §4): raw
// strings for store-shaped knobs, source, path and quantities; parsed values
// for enumerations, booleans and numbers (so "030" equals "30"); normalised
// octal for file-mode. A side that does not parse compares raw.
func Equal(knob, a, b string) bool {
	if a == b {
		return true
	}
	g, ok := grammars[knob]
	if !ok || g.compare != byParsed {
		return false
	}
	na, fa := g.check(a)
	nb, fb := g.check(b)
	if fa != nil || fb != nil {
		return false
	}
	return na == nb
}

// fail builds a failure showing value quoted.
func fail(check, expectation, value string) *Failure {
	return &Failure{Check: check, Expectation: expectation, Shown: redact.Quote(value)}
}
