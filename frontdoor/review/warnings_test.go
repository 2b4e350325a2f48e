package review

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// withinLimits fails t when ws break the API server's warning limits.
func withinLimits(t *testing.T, ws []string) {
	t.Helper()
	total := 0
	for i, w := range ws {
		if len(w) > MaxWarningBytes || utf8.RuneCountInString(w) > 256 {
			t.Errorf("warning %d is %d bytes: %q", i, len(w), w)
		}
		if !utf8.ValidString(w) {
			t.Errorf("warning %d is not valid UTF-8: %q", i, w)
		}
		total += len(w)
	}
	if total > MaxWarningsBytes {
		t.Errorf("the warnings total %d bytes, above %d", total, MaxWarningsBytes)
	}
}

func TestFitWarnings(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes, 200 characters
	cases := []struct {
		name  string
		in    []string
		check func(t *testing.T, out []string)
	}{
		{"warnings that fit come back unchanged", []string{"a", "b"}, func(t *testing.T, out []string) {
			if strings.Join(out, "|") != "a|b" {
				t.Errorf("got %q", out)
			}
		}},
		{"a warning of exactly 256 bytes is kept whole", []string{strings.Repeat("x", 256)}, func(t *testing.T, out []string) {
			if out[0] != strings.Repeat("x", 256) {
				t.Errorf("got %q", out[0])
			}
		}},
		{"a warning of 257 bytes is cut and ends with an ellipsis", []string{strings.Repeat("x", 257)}, func(t *testing.T, out []string) {
			if !strings.HasSuffix(out[0], "…") || len(out[0]) != 256 {
				t.Errorf("got %d bytes %q", len(out[0]), out[0])
			}
		}},
		{"a long multi-byte warning is cut on a character boundary", []string{long}, func(t *testing.T, out []string) {
			if !strings.HasPrefix(long, strings.TrimSuffix(out[0], "…")) {
				t.Errorf("got %q", out[0])
			}
		}},
		{"control characters and invalid UTF-8 are made printable", []string{"a\nb\tc\xff"}, func(t *testing.T, out []string) {
			if out[0] != "a b c\uFFFD" {
				t.Errorf("got %q", out[0])
			}
		}},
		{"too many warnings keep a prefix and say how many more there were", func() []string {
			ws := make([]string, 40)
			for i := range ws {
				ws[i] = strings.Repeat(string(rune('a'+i%26)), 300)
			}
			return ws
		}(), func(t *testing.T, out []string) {
			last := out[len(out)-1]
			kept := len(out) - 1
			if !strings.Contains(last, " more warnings not shown") || !strings.Contains(last, strconv.Itoa(40-kept)+" more") {
				t.Errorf("last warning %q after %d kept", last, kept)
			}
			if kept < 14 {
				t.Errorf("only %d warnings kept; the budget holds 15 of 256 bytes", kept)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := FitWarnings(c.in)
			withinLimits(t, out)
			c.check(t, out)
			again := FitWarnings(c.in)
			if strings.Join(again, "\x00") != strings.Join(out, "\x00") {
				t.Error("fitting the same warnings twice differs")
			}
			if refit := FitWarnings(out); strings.Join(refit, "\x00") != strings.Join(out, "\x00") {
				t.Errorf("fitted warnings are fitted again differently: %q", refit)
			}
		})
	}
}
