// Package redact hides URL userinfo (spec 04 §3.2) and quotes values for
// messages. Every refusal, warning, log line, installation error,
// GetInstallation value and explain line passes through it; the patch and the
// agent arguments never do.
package redact

import (
	"strconv"
	"strings"
)

// URL replaces, for every "://" in s, the userinfo of the authority that
// follows (everything up to its last "@") with "…".
func URL(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		start := i + len("://")
		b.WriteString(rest[:start])
		rest = rest[start:]
		end := strings.IndexFunc(rest, authorityEnd)
		if end < 0 {
			end = len(rest)
		}
		authority := rest[:end]
		if at := strings.LastIndexByte(authority, '@'); at >= 0 {
			b.WriteString("…")
			b.WriteString(authority[at:])
		} else {
			b.WriteString(authority)
		}
		rest = rest[end:]
	}
}

func authorityEnd(r rune) bool {
	switch r {
	case '/', '?', '#', ',', ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

// Quote redacts s and quotes it with strconv.Quote: the {V} of the message templates.
func Quote(s string) string { return strconv.Quote(URL(s)) }
