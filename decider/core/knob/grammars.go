package knob

import (
	"path"
	"strings"
)

// Comparison is how a pin compares two values of a knob (spec 02 §4).
type Comparison int

// Comparisons.
const (
	// ByRaw compares the strings as written (store-shaped strings, source,
	// path, quantities).
	ByRaw Comparison = iota
	// ByParsed compares the normalised values (enumerations, booleans,
	// numbers, file-mode), so "030" equals "30".
	ByParsed
)

// Grammar is one knob's value grammar: the parser that checks and normalises
// a value (returning the refusal when it does not parse) and the comparison a
// pin uses. The zero Grammar is Unchecked.
type Grammar struct {
	check func(value string) (string, *Failure)
	// parse, when set, replaces check for the grammars whose value is a
	// number (the Number grammars, file-mode).
	parse   func(value string) (Value, *Failure)
	compare Comparison
}

// Value is a value the grammar accepted, as it parsed it: the normalised
// text and, for a number grammar and file-mode, the number itself — so a
// reader never parses the text again.
type Value struct {
	// Text is the normalised value (numbers in plain decimal, file-mode as
	// "0<oct>", everything else as written).
	Text string
	// Number is the value of a Number grammar (file-mode: the mode bits);
	// 0 for every other grammar.
	Number uint64
}

// Parse validates value and returns it parsed (Value), or the refusal.
func (g Grammar) Parse(value string) (Value, *Failure) {
	switch {
	case g.parse != nil:
		return g.parse(value)
	case g.check != nil:
		n, f := g.check(value)
		return Value{Text: n}, f
	}
	return Value{Text: value}, nil
}

// Check validates value and returns the normalised value (numbers in plain
// decimal, file-mode as "0<oct>", everything else as written).
func (g Grammar) Check(value string) (normalised string, f *Failure) {
	p, f := g.Parse(value)
	return p.Text, f
}

// Compare is the grammar's comparison mode.
func (g Grammar) Compare() Comparison { return g.compare }

// Checked reports whether the grammar judges values (false for Unchecked).
func (g Grammar) Checked() bool { return g.check != nil || g.parse != nil }

// Equal compares two values the way a pin does (spec 02 §4): raw strings
// unless the grammar compares parsed values; a side that does not parse
// compares raw.
func (g Grammar) Equal(a, b string) bool {
	if a == b {
		return true
	}
	if !g.Checked() || g.compare != ByParsed {
		return false
	}
	na, fa := g.Check(a)
	nb, fb := g.Check(b)
	if fa != nil || fb != nil {
		return false
	}
	return na == nb
}

// Expectation texts shared by several knobs (spec 01 §3).
const (
	expectBool         = `"true" or "false"`
	expectQuantity     = `a Kubernetes quantity, like "50m" or "64Mi"`
	expectSecretRef    = `the form is <secret-name>/<key>`
	expectConfigMapRef = `the form is <configmap-name> or <configmap-name>/<key>`
	expectSecretObject = `the form is <secret-name> or <secret-name>/<key>`
	expectSecretName   = `a Secret name, without "/"`
	expectPathShape    = `an absolute file path in a directory of its own, like "/config/app.toml"`
	expectPathReserved = `/etc/dynamic-config and everything under it is where the agent mounts its own files — choose another directory`
	expectEmpty        = `give it a value or drop it`
	expectNotifyHTTP   = `an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`
)

// ReservedDir is the agent's own mount tree; no rendered file may live in it.
const ReservedDir = "/etc/dynamic-config"

// Stores are the nine stores, in the order every list prints them: the one
// store list of the decider.
var Stores = []string{"consul", "vault", "config-server", "firestore", "git", "redis", "etcd", "nats", "s3"}

// The grammars a registry row can name (spec 01 §3).
var (
	// Unchecked accepts any value unchanged: the knob is judged by its own
	// evaluation steps (class, inject-containers, agent-env).
	Unchecked = Grammar{}
	// Plain is any non-empty string (store-shaped strings, the agent's own grammars).
	Plain = Grammar{check: plainString}
	// SecretRef is secret-ref.form: <secret-name>/<key>.
	SecretRef = Grammar{check: secretRef}
	// ConfigMapRef is object-ref.form: <configmap-name> or <configmap-name>/<key>.
	ConfigMapRef = Grammar{check: objectRef(expectConfigMapRef)}
	// SecretObject is object-ref.form: <secret-name> or <secret-name>/<key>.
	SecretObject = Grammar{check: objectRef(expectSecretObject)}
	// SecretName is secret-name.form: a Secret name without "/".
	SecretName = Grammar{check: secretName}
	// Quantity is quantity.value: a Kubernetes quantity, compared raw.
	Quantity = Grammar{check: quantity}
	// FilePath is path.shape then path.reserved.
	FilePath = Grammar{check: filePath}
	// FileMode is octal, at most 0777, owner-read set; compared normalised.
	FileMode = Grammar{parse: fileMode, compare: ByParsed}
	// NotifyHTTP is notify-http.url: an http URL on the pod itself.
	NotifyHTTP = Grammar{check: notifyHTTP}
	// Bool is bool.value: "true" or "false".
	Bool = Enum("bool.value", expectBool, "true", "false")
	// Source is source.value: one of the nine stores, compared raw.
	Source = Grammar{check: enum("source.value", "one of "+strings.Join(Stores, ", "), Stores...)}
)

// Enum accepts exactly one of words (case-sensitive), refusing with check and
// expectation; two values compare parsed.
func Enum(check, expectation string, words ...string) Grammar {
	return Grammar{check: enum(check, expectation, words...), compare: ByParsed}
}

// QuantityShaped reports whether v starts with a digit and holds only [A-Za-z0-9.].
func QuantityShaped(v string) bool {
	if v == "" || v[0] < '0' || v[0] > '9' {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.') {
			return false
		}
	}
	return true
}

// PathShaped is the path.shape rule: starts with "/", does not end with "/",
// equals its path.Clean form, and its parent directory is not "/".
func PathShaped(v string) bool {
	if len(v) < 2 || v[0] != '/' || v[len(v)-1] == '/' {
		return false
	}
	if path.Clean(v) != v {
		return false
	}
	return path.Dir(v) != "/"
}

// Reserved is the path.reserved rule: /etc/dynamic-config or anything under it.
func Reserved(v string) bool {
	return v == ReservedDir || strings.HasPrefix(v, ReservedDir+"/")
}

// ReservedFailure is the path.reserved failure for v, for callers that judge
// shape with another expectation (also.<name>).
func ReservedFailure(v string) *Failure {
	return fail("path.reserved", expectPathReserved, v)
}
