package knob

import (
	"net/url"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
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
	check   func(value string) (string, *Failure)
	compare Comparison
}

// Check validates value and returns the normalised value (numbers in plain
// decimal, file-mode as "0<oct>", everything else as written).
func (g Grammar) Check(value string) (normalised string, f *Failure) {
	if g.check == nil {
		return value, nil
	}
	return g.check(value)
}

// Compare is the grammar's comparison mode.
func (g Grammar) Compare() Comparison { return g.compare }

// Checked reports whether the grammar judges values (false for Unchecked).
func (g Grammar) Checked() bool { return g.check != nil }

// Equal compares two values the way a pin does (spec 02 §4): raw strings
// unless the grammar compares parsed values; a side that does not parse
// compares raw.
func (g Grammar) Equal(a, b string) bool {
	if a == b {
		return true
	}
	if g.check == nil || g.compare != ByParsed {
		return false
	}
	na, fa := g.check(a)
	nb, fb := g.check(b)
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
	FileMode = Grammar{check: fileMode, compare: ByParsed}
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

// plainString accepts any non-empty value (store-shaped strings, the agent's own grammars).
func plainString(v string) (string, *Failure) {
	if v == "" {
		return v, emptyFailure()
	}
	return v, nil
}

func emptyFailure() *Failure {
	return &Failure{Check: "value.empty", Expectation: expectEmpty, Shown: "empty"}
}

// secretRef is secret-ref.form: `<secret-name>/<key>`, split at the first "/", both halves non-empty.
func secretRef(v string) (string, *Failure) {
	if v == "" {
		return v, emptyFailure()
	}
	name, key, ok := strings.Cut(v, "/")
	if !ok || name == "" || key == "" {
		return v, fail("secret-ref.form", expectSecretRef, v)
	}
	return v, nil
}

// objectRef is object-ref.form: `<name>` or `<name>/<key>`, both halves non-empty.
func objectRef(expectation string) func(string) (string, *Failure) {
	return func(v string) (string, *Failure) {
		if v == "" {
			return v, emptyFailure()
		}
		name, key, ok := strings.Cut(v, "/")
		if name == "" || (ok && key == "") {
			return v, fail("object-ref.form", expectation, v)
		}
		return v, nil
	}
}

// secretName is secret-name.form: a plain Secret name without "/".
func secretName(v string) (string, *Failure) {
	if v == "" {
		return v, emptyFailure()
	}
	if strings.IndexByte(v, '/') >= 0 {
		return v, fail("secret-name.form", expectSecretName, v)
	}
	return v, nil
}

// quantity is quantity.value: a leading digit, only [A-Za-z0-9.], and a Kubernetes quantity.
func quantity(v string) (string, *Failure) {
	if v == "" {
		return v, emptyFailure()
	}
	if !QuantityShaped(v) {
		return v, fail("quantity.value", expectQuantity, v)
	}
	if _, err := resource.ParseQuantity(v); err != nil {
		return v, fail("quantity.value", expectQuantity, v)
	}
	return v, nil
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

// filePath is path.shape then path.reserved.
func filePath(v string) (string, *Failure) {
	if v == "" {
		return v, emptyFailure()
	}
	if !PathShaped(v) {
		return v, fail("path.shape", expectPathShape, v)
	}
	if Reserved(v) {
		return v, fail("path.reserved", expectPathReserved, v)
	}
	return v, nil
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

// notifyHTTP is notify-http.url: an http URL on localhost, 127.0.0.1 or [::1].
func notifyHTTP(v string) (string, *Failure) {
	if v == "" {
		return v, emptyFailure()
	}
	if !localHTTPURL(v) {
		return v, fail("notify-http.url", expectNotifyHTTP, v)
	}
	return v, nil
}

func localHTTPURL(v string) bool {
	// net/url lower-cases the scheme it parses; the rule wants it written
	// exactly "http" (spec 01 §3.7), so the raw text is checked first.
	if !strings.HasPrefix(v, "http://") {
		return false
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "http" || u.User != nil || u.Opaque != "" {
		return false
	}
	host := u.Host
	switch {
	case strings.HasPrefix(host, "[::1]"):
		host = host[len("[::1]"):]
	case len(host) >= len("localhost") && strings.EqualFold(host[:len("localhost")], "localhost"):
		host = host[len("localhost"):]
	case strings.HasPrefix(host, "127.0.0.1"):
		host = host[len("127.0.0.1"):]
	default:
		return false
	}
	if host == "" {
		return true
	}
	if host[0] != ':' {
		return false
	}
	n, ok := parseDecimal(host[1:])
	return ok && n >= 1 && n <= 65535
}

// enum accepts exactly one of words (case-sensitive).
func enum(check, expectation string, words ...string) func(string) (string, *Failure) {
	return func(v string) (string, *Failure) {
		for _, w := range words {
			if v == w {
				return w, nil
			}
		}
		return v, fail(check, expectation, v)
	}
}

// fileMode is octal with an optional lowercase "0o" prefix, at most 0777, owner-read set.
func fileMode(v string) (string, *Failure) {
	digits := strings.TrimPrefix(v, "0o")
	if digits == "" {
		return v, fail("file-mode.value", `octal, like "0640"`, v)
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '7' {
			return v, fail("file-mode.value", `octal, like "0640"`, v)
		}
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 3 {
		return v, fail("file-mode.range", `at most 0777 — permission bits only`, v)
	}
	var mode uint32
	for i := 0; i < len(digits); i++ {
		mode = mode*8 + uint32(digits[i]-'0')
	}
	if mode&0o400 == 0 {
		return v, fail("file-mode.owner-read", `the owner must at least read it (0400 set)`, v)
	}
	return "0" + digits, nil
}

const maxUint64 = ^uint64(0)

// MaxUint64 is the largest number a Number grammar can hold.
const MaxUint64 = maxUint64

// Number is a strict decimal grammar with a per-key range (spec 01 §1.2).
type Number struct {
	Check, Expect           string
	Max                     uint64
	ZeroCheck, ZeroExpect   string // when 0 is refused with its own check
	ZeroBare                bool   // the zero message shows the value as a bare 0
	AboveCheck, AboveExpect string // when a value above Max has its own check
	SuffixS                 bool   // an optional trailing "s" (revoke-grace)
}

// Grammar is the number's grammar; two values compare parsed.
func (n Number) Grammar() Grammar {
	return Grammar{check: n.validate, compare: ByParsed}
}

func (n Number) validate(v string) (string, *Failure) {
	digits := v
	if n.SuffixS && strings.HasSuffix(digits, "s") {
		digits = digits[:len(digits)-1]
	}
	if !IsDigits(digits) {
		return v, fail(n.Check, n.Expect, v)
	}
	value, fits := parseDecimal(digits)
	if !fits || value > n.Max {
		if n.AboveCheck != "" {
			return v, fail(n.AboveCheck, n.AboveExpect, v)
		}
		return v, fail(n.Check, n.Expect, v)
	}
	if value == 0 && n.ZeroCheck != "" {
		f := fail(n.ZeroCheck, n.ZeroExpect, v)
		if n.ZeroBare {
			f.Shown = "0"
		}
		return v, f
	}
	return canonicalDecimal(digits), nil
}

// IsDigits reports whether s is one or more ASCII decimal digits (0-9) —
// no sign, no space, no other Unicode digit.
func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseDecimal parses a strict decimal; fits is false when it is not one or
// does not fit in 64 bits.
func parseDecimal(s string) (value uint64, fits bool) {
	if !IsDigits(s) {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		d := uint64(s[i] - '0')
		if value > (maxUint64-d)/10 {
			return 0, false
		}
		value = value*10 + d
	}
	return value, true
}

// canonicalDecimal drops leading zeros without allocating ("015" → "15", "0" stays).
func canonicalDecimal(digits string) string {
	i := 0
	for i < len(digits)-1 && digits[i] == '0' {
		i++
	}
	return digits[i:]
}

// ParseUint parses a strict decimal (leading zeros allowed); ok is false for
// anything else or a value above 64 bits. Callers use it on values Check accepted.
func ParseUint(s string) (uint64, bool) { return parseDecimal(s) }
