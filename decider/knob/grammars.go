package knob

import (
	"net/url"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// comparison is how a pin compares two values of a knob (spec 02 §4).
type comparison int

const (
	byRaw comparison = iota
	byParsed
)

// grammar is one knob's value grammar.
type grammar struct {
	check   func(value string) (string, *Failure)
	compare comparison
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
	expectRunAs        = `a numeric UID/GID`
	expectNonRoot      = `the agent stays nonroot in every configuration`
	expectSource       = `one of consul, vault, config-server, firestore, git, redis, etcd, nats, s3`
	expectNotifyHTTP   = `an http:// URL on the pod itself — host localhost, 127.0.0.1 or [::1]`
)

// ReservedDir is the agent's own mount tree; no rendered file may live in it.
const ReservedDir = "/etc/dynamic-config"

// Stores are the nine stores, in the order every list prints them.
var Stores = []string{"consul", "vault", "config-server", "firestore", "git", "redis", "etcd", "nats", "s3"}

var grammars = map[string]grammar{}

func init() {
	plain := grammar{check: plainString}
	for _, k := range []string{
		"endpoint", "key", "section", "auth", "auth-mount", "auth-role", "auth-username",
		"auth-token-path", "namespace", "ref", "api-url", "template", "agent-image",
		"tls-server-name", "max-staleness", "env-inject",
	} {
		grammars[k] = plain
	}
	for _, k := range []string{"endpoint-secret", "token-secret", "password-secret"} {
		grammars[k] = grammar{check: secretRef}
	}
	for _, k := range []string{"ca-configmap", "template-configmap", "schema-configmap", "canary-configmap"} {
		grammars[k] = grammar{check: objectRef(expectConfigMapRef)}
	}
	grammars["ssh-secret"] = grammar{check: objectRef(expectSecretObject)}
	for _, k := range []string{"tls-secret", "extra-secret", "aws-secret"} {
		grammars[k] = grammar{check: secretName}
	}
	for _, k := range []string{"agent-cpu-request", "agent-memory-request", "agent-cpu-limit",
		"agent-memory-limit", "agent-ephemeral-request", "agent-ephemeral-limit"} {
		grammars[k] = grammar{check: quantity}
	}
	grammars["path"] = grammar{check: filePath}
	grammars["file-mode"] = grammar{check: fileMode, compare: byParsed}
	grammars["notify-http"] = grammar{check: notifyHTTP}

	grammars["inject"] = grammar{check: enum("inject.value", expectBool, "true", "false"), compare: byParsed}
	for _, k := range []string{"native-sidecar", "init-first", "env-restart", "readiness", "tls-reload",
		"require-ack", "events", "agent-run-as-same-user", "tls-skip-verify", "meta", "dynamic",
		"revoke-on-shutdown"} {
		grammars[k] = grammar{check: enum("bool.value", expectBool, "true", "false"), compare: byParsed}
	}
	grammars["source"] = grammar{check: enum("source.value", expectSource, Stores...)}
	grammars["mode"] = grammar{check: enum("mode.value", `init, sidecar or both`, "init", "sidecar", "both"), compare: byParsed}
	grammars["volume-medium"] = grammar{check: enum("volume-medium.value", `memory (default) or disk`, "memory", "disk"), compare: byParsed}
	grammars["on-drift"] = grammar{check: enum("on-drift.value", `"warn", "repair" or "fail"`, "warn", "repair", "fail"), compare: byParsed}
	grammars["startup-policy"] = grammar{check: enum("startup-policy.value", `"allow-cached", "require-fresh" or "best-effort"`, "allow-cached", "require-fresh", "best-effort"), compare: byParsed}
	grammars["on-delete"] = grammar{check: enum("on-delete.value", `"retain", "remove" or "fail"`, "retain", "remove", "fail"), compare: byParsed}

	grammars["watch-seconds"] = number{check: "watch-seconds.value", expect: "whole seconds", max: maxUint64}.grammar()
	grammars["timeout"] = number{check: "timeout.value", expect: `whole seconds, like "30"`, max: maxUint64,
		zeroCheck: "timeout.zero", zeroExpect: `a zero timeout is no deadline at all; give whole seconds above 0, like "30"`}.grammar()
	grammars["metrics-port"] = number{check: "metrics-port.value", expect: "a port number", max: 65535}.grammar()
	for _, k := range []string{"agent-run-as-user", "agent-run-as-group"} {
		grammars[k] = number{check: "run-as.value", expect: expectRunAs, max: 2147483647,
			zeroCheck: "run-as.root", zeroExpect: expectNonRoot, zeroBare: true}.grammar()
	}
	grammars["history"] = number{check: "history.value", expect: `a count, like "3"`, max: 10,
		zeroCheck: "history.zero", zeroExpect: `a count of at least 1 — drop the annotation to keep no history`,
		aboveCheck: "history.max", aboveExpect: "at most 10"}.grammar()
	grammars["revoke-grace"] = number{check: "revoke-grace.value", expect: `whole seconds, like "10s"`, max: maxUint64,
		zeroCheck: "revoke-grace.zero", zeroExpect: `zero leaves no time to revoke anything; give whole seconds above 0, like "10s"`,
		suffixS: true}.grammar()
	grammars["max-document-bytes"] = number{check: "max-document-bytes.value", expect: `a byte count above 0, like "8388608"`,
		max: maxUint64, zeroCheck: "max-document-bytes.value", zeroExpect: `a byte count above 0, like "8388608"`}.grammar()
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

// number is a strict decimal with a per-key range (spec 01 §1.2).
type number struct {
	check, expect           string
	max                     uint64
	zeroCheck, zeroExpect   string // when 0 is refused with its own check
	zeroBare                bool   // the zero message shows the value as a bare 0
	aboveCheck, aboveExpect string // when a value above max has its own check
	suffixS                 bool   // an optional trailing "s" (revoke-grace)
}

func (n number) grammar() grammar {
	return grammar{check: n.validate, compare: byParsed}
}

func (n number) validate(v string) (string, *Failure) {
	digits := v
	if n.suffixS && strings.HasSuffix(digits, "s") {
		digits = digits[:len(digits)-1]
	}
	if !IsDigits(digits) {
		return v, fail(n.check, n.expect, v)
	}
	value, fits := parseDecimal(digits)
	if !fits || value > n.max {
		if n.aboveCheck != "" {
			return v, fail(n.aboveCheck, n.aboveExpect, v)
		}
		return v, fail(n.check, n.expect, v)
	}
	if value == 0 && n.zeroCheck != "" {
		f := fail(n.zeroCheck, n.zeroExpect, v)
		if n.zeroBare {
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
