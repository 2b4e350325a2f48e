package handler

import (
	"strings"
	"unicode/utf8"
)

// redactURL hides URL userinfo (spec 04 §3.2) in details that reach an
// answer or a log line: for every "://", the authority runs to the first
// "/", "?", "#", "," or whitespace (or the end), and everything in it before
// its last "@" becomes "…". (The front door imports nothing of the decider,
// so it carries its own copy of the rule.)
func redactURL(s string) string {
	const sep = "://"
	if !strings.Contains(s, sep) {
		return s
	}
	var out strings.Builder
	out.Grow(len(s))
	for {
		i := strings.Index(s, sep)
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		out.WriteString(s[:i+len(sep)])
		s = s[i+len(sep):]
		end := strings.IndexAny(s, "/?#, \t\n\r\v\f")
		if end < 0 {
			end = len(s)
		}
		host := s[:end]
		if at := strings.LastIndex(host, "@"); at >= 0 {
			out.WriteString("…")
			host = host[at:]
		}
		out.WriteString(host)
		s = s[end:]
	}
}

// cut shortens s to at most n characters (runes).
func cut(s string, n int) string {
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

// cutBytes returns the longest prefix of s of at most n bytes that ends on a
// character boundary.
func cutBytes(s string, n int) string {
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
