// Package textcut shortens text for messages: the one cutting rule of the
// front door's answers (spec 04 §5: a detail is cut to 200 characters) and
// of the decider's messages that quote operator input (issue 23). Both ends
// import it; neither imports the other.
package textcut

import "unicode/utf8"

// MessageLimit is the most characters of one quoted value or list a message
// carries (spec 04 §5's detail limit).
const MessageLimit = 200

// Runes shortens s to at most n characters (runes).
func Runes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}

// Bytes returns the longest prefix of s of at most n bytes that ends on a
// character boundary.
func Bytes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
