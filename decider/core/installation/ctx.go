package installation

import "strings"

// ctx names where a value came from in messages (spec 02 §3 {ctx}): the
// environment form alone, or `<document path> [<environment form>]`.
type ctx struct {
	doc string // document path; "" for the environment
	env string // environment form: VAR, or "VAR (<store>)"
}

func envCtx(variable string) ctx       { return ctx{env: variable} }
func docCtx(path, variable string) ctx { return ctx{doc: path, env: variable} }
func (c ctx) fromDocument() bool       { return c.doc != "" }
func (c ctx) child(key string) ctx     { return ctx{doc: c.doc + "." + key, env: c.env} }
func (c ctx) store(store string) ctx   { return ctx{doc: c.doc, env: c.env + " (" + store + ")"} }
func (c ctx) String() string {
	if c.doc == "" {
		return c.env
	}
	return c.doc + " [" + c.env + "]"
}

// asciiSpace is the whitespace the value rules trim (spec 02 §3 rule 1).
const asciiSpace = " \t\n\r\v\f"

// Trim removes the whitespace the value rules trim (spec 02 §3 rule 1).
func Trim(s string) string { return trim(s) }

func trim(s string) string      { return strings.Trim(s, asciiSpace) }
func trimRight(s string) string { return strings.TrimRight(s, asciiSpace) }

// splitMarker removes a trailing "!" or "?" (spec 02 §3 rule 3) and
// right-trims what is left.
func splitMarker(s string) (string, Marker) {
	if n := len(s); n > 0 {
		switch s[n-1] {
		case '!':
			return trimRight(s[:n-1]), MarkerPinned
		case '?':
			return trimRight(s[:n-1]), MarkerOverridable
		}
	}
	return s, MarkerNone
}

// markerSuffix is the marker as written in the canonical form.
func markerSuffix(m Marker) string {
	switch m {
	case MarkerPinned:
		return "!"
	case MarkerOverridable:
		return "?"
	}
	return ""
}
