package handler

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
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
func cut(s string, n int) string { return textcut.Runes(s, n) }

// cutBytes returns the longest prefix of s of at most n bytes that ends on a
// character boundary.
func cutBytes(s string, n int) string { return textcut.Bytes(s, n) }
