package review

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The API server's limits on admission warnings (k8s.io/apiserver's warning
// recorder): it truncates each warning beyond 256 characters once the
// warnings of a request pass 4096 characters, and drops what comes after.
// The front door keeps inside both, counting bytes (never fewer than
// characters), so what it says reaches the client whole or shortened by it,
// never by the API server.
const (
	MaxWarningBytes  = 256
	MaxWarningsBytes = 4096
)

// ellipsis marks a warning shortened by FitWarnings.
const ellipsis = "…"

// FitWarnings returns ws fitted to the API server's limits, deterministically:
// control characters become spaces and invalid UTF-8 is replaced; a warning
// longer than MaxWarningBytes is cut on a character boundary and ends with
// "…"; when all of them pass MaxWarningsBytes, the longest prefix that fits
// is kept and the last warning says how many more there were. Warnings that
// already fit come back unchanged (the same slice when none changed).
func FitWarnings(ws []string) []string {
	if len(ws) == 0 {
		return ws
	}
	out := ws
	total := 0
	for i, w := range ws {
		fitted := FitWarning(w)
		if fitted != w {
			if &out[0] == &ws[0] {
				out = append([]string(nil), ws...)
			}
			out[i] = fitted
		}
		total += len(fitted)
	}
	if total <= MaxWarningsBytes {
		return out
	}
	kept, used := 0, 0
	for kept < len(out) {
		note := moreWarnings(len(out) - kept - 1)
		if used+len(out[kept])+len(note) > MaxWarningsBytes {
			break
		}
		used += len(out[kept])
		kept++
	}
	return append(append([]string(nil), out[:kept]...), moreWarnings(len(out)-kept))
}

// FitWarning returns one warning within MaxWarningBytes (see FitWarnings).
func FitWarning(w string) string {
	w = strings.ToValidUTF8(w, "\uFFFD")
	if strings.IndexFunc(w, unicode.IsControl) >= 0 {
		w = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, w)
	}
	if len(w) <= MaxWarningBytes {
		return w
	}
	cut := MaxWarningBytes - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return strings.TrimRight(w[:cut], " ") + ellipsis
}

// moreWarnings is the last warning of a list cut to MaxWarningsBytes.
func moreWarnings(n int) string {
	noun := "warnings"
	if n == 1 {
		noun = "warning"
	}
	return "dynamic-config.rs: " + strconv.Itoa(n) + " more " + noun +
		" not shown (the API server keeps 4096 bytes of warnings); `dynamic-config explain` lists them all"
}
