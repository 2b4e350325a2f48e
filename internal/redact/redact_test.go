package redact

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

func TestURL(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"userinfo with a password is hidden", "https://user:pw@vault.example:8200/v1", "https://…@vault.example:8200/v1"},
		{"a password-only userinfo is hidden", "redis://:s3cret@redis:6379/0", "redis://…@redis:6379/0"},
		{"everything up to the last at sign is hidden", "https://a@b@host", "https://…@host"},
		{"an at sign in the path is kept", "https://host/path@x", "https://host/path@x"},
		{"a string without a scheme is unchanged", "git@github.com:acme/config.git", "git@github.com:acme/config.git"},
		{"each URL in a list is redacted", "HTTPS_PROXY=http://u:p@proxy:3128, RUST_LOG=info", "HTTPS_PROXY=http://…@proxy:3128, RUST_LOG=info"},
		{"two URLs are both redacted", "a://x@h b://y@i", "a://…@h b://…@i"},
		{"an authority ending the string is redacted", "s3://key:secret@", "s3://…@"},
		{"a query ends the authority", "http://h?u@x", "http://h?u@x"},
		{"an empty string stays empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := URL(tt.in); got != tt.want {
				t.Fatalf("URL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestQuoteRedactsBeforeQuoting(t *testing.T) {
	if got, want := Quote(`http://u:p@h/"x"`), `"http://…@h/\"x\""`; got != want {
		t.Fatalf("Quote = %s, want %s", got, want)
	}
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{"https://user:pw@vault.example:8200/v1", "a://@", "://", "x://a@b@c/d@e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := URL(s)
		if URL(out) != out {
			t.Fatalf("redaction is not idempotent: %q -> %q -> %q", s, out, URL(out))
		}
	})
}

func TestMessagesQuoteAtMostTheMessageLimit(t *testing.T) {
	long := strings.Repeat("a", 1<<20)
	tests := []struct {
		name, got, want string
	}{
		{"a short value is quoted whole", QuoteCut("apps/"), `"apps/"`},
		{"a 1 MiB value is cut, marked with an ellipsis", QuoteCut(long), `"` + strings.Repeat("a", textcut.MessageLimit) + `"…`},
		{"a cut value is still redacted", QuoteCut("https://u:p@h/" + long)[:len(`"https://…@h/`)], `"https://…@h/`},
		{"a short list is joined whole", List([]string{"apps/a/", "shared/"}), "apps/a/, shared/"},
		{"a list above the limit says how many items it left out", List([]string{strings.Repeat("x", 150), strings.Repeat("y", 100), "z", "w"}),
			strings.Repeat("x", 150) + ", " + strings.Repeat("y", 48) + "… (2 more)"},
		{"a single item above the limit is cut", List([]string{long}), strings.Repeat("a", textcut.MessageLimit) + "…"},
		{"a withheld value shows its length only", Withheld("frontdoor.west.example"), "<withheld, 22 characters>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
