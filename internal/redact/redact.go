// Package redact hides URL userinfo (spec 04 §3.2) and quotes values for
// messages. Every refusal, warning, log line, installation error,
// GetInstallation value and explain line of the decider passes through it,
// and every detail of the front door's answers and log lines (URL); the
// patch and the agent arguments never do. Both processes import it.
package redact

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
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

// QuoteCut is Quote of s cut to textcut.MessageLimit characters, "…" marking
// a cut: for values of operator files (a class, a callers file), which may be
// any length.
func QuoteCut(s string) string {
	s = URL(s)
	if cut := textcut.Runes(s, textcut.MessageLimit); cut != s {
		return strconv.Quote(cut) + "…"
	}
	return strconv.Quote(s)
}

// List joins items with ", " (each redacted) and cuts the listing to
// textcut.MessageLimit characters: the item that does not fit is cut with
// "…", and " (N more)" counts the items left out. A list quoted in a message
// stays within the message limit.
func List(items []string) string {
	var b strings.Builder
	used := 0
	for i, it := range items {
		next := URL(it)
		if i > 0 {
			next = ", " + next
		}
		n := utf8.RuneCountInString(next)
		if used+n > textcut.MessageLimit {
			b.WriteString(textcut.Runes(next, textcut.MessageLimit-used) + "…")
			if rest := len(items) - i - 1; rest > 0 {
				b.WriteString(" (" + strconv.Itoa(rest) + " more)")
			}
			return b.String()
		}
		used += n
		b.WriteString(next)
	}
	return b.String()
}

// Withheld stands for a value a message must not show (an identity of a
// credential): its length only.
func Withheld(s string) string {
	return "<withheld, " + strconv.Itoa(utf8.RuneCountInString(s)) + " characters>"
}
