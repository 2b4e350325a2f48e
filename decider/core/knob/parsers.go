package knob

// The parsers behind the grammars: each checks and normalises one value.

import (
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

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
func fileMode(v string) (Value, *Failure) {
	digits := strings.TrimPrefix(v, "0o")
	if digits == "" {
		return Value{Text: v}, fail("file-mode.value", `octal, like "0640"`, v)
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '7' {
			return Value{Text: v}, fail("file-mode.value", `octal, like "0640"`, v)
		}
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 3 {
		return Value{Text: v}, fail("file-mode.range", `at most 0777 — permission bits only`, v)
	}
	var mode uint32
	for i := 0; i < len(digits); i++ {
		mode = mode*8 + uint32(digits[i]-'0')
	}
	if mode&0o400 == 0 {
		return Value{Text: v}, fail("file-mode.owner-read", `the owner must at least read it (0400 set)`, v)
	}
	return Value{Text: "0" + digits, Number: uint64(mode)}, nil
}
