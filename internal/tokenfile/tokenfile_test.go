package tokenfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesAMissingOrEmptyFileAndTrimsTheToken(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, text string // text "" with no file: missing
		want       string // the token, or a fragment of the error
		ok         bool
	}{
		{"a missing file is refused", "", "token file: ", false},
		{"an empty file is refused", " \n", "is empty", false},
		{"white space around the token is not part of it", "\n s3cret \n", "s3cret", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, string(rune('a'+i)))
			if tt.text != "" {
				write(t, path, tt.text)
			}
			f, err := Open(path, time.Hour, func(b []byte) string { return string(b) })
			if !tt.ok {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err %v, want it to contain %q", err, tt.want)
				}
				return
			}
			if err != nil || f.Current() != tt.want || f.Fresh() != tt.want {
				t.Fatalf("err %v, token %q", err, f.Current())
			}
		})
	}
}

// until calls get until it returns want, failing after a generous bound (a
// rotation is in force once it has settled).
func until(t *testing.T, get func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for get() != want {
		if time.Now().After(deadline) {
			t.Fatalf("never %q: %q", want, get())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestARotatedFileIsInForceAndABrokenOneKeepsTheLastGoodToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	write(t, path, "first")
	f, err := Open(path, 0, func(b []byte) string { return "Bearer " + string(b) })
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, "second-longer")
	until(t, f.Fresh, "Bearer second-longer")
	write(t, path, "\n")
	time.Sleep(3 * stablefile.DefaultSettle) // long enough to settle
	if got := f.Fresh(); got != "Bearer second-longer" {
		t.Fatalf("after emptying the file Fresh = %q, want the last good token", got)
	}
	write(t, path, "third-token-value")
	until(t, f.Current, "Bearer third-token-value") // the re-checks run off the caller's goroutine
}

// Issue 38: a token written in place is read between its writes; the half
// read is never put in force, the whole token is once it has settled.
func TestATokenWrittenInPlaceIsNeverInForceHalfWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	write(t, path, "first-token")
	f, err := Open(path, 0, func(b []byte) string { return string(b) })
	if err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.WriteString("second-"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 10 { // the writer pauses between its writes, half the settle interval
		seen[f.Fresh()] = true
		time.Sleep(stablefile.DefaultSettle / 20)
	}
	if _, err := fh.WriteString("token"); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	until(t, f.Fresh, "second-token")
	if seen["second-"] {
		t.Errorf("the half-written token was put in force (seen: %v)", seen)
	}
}

func TestAFileAboveTheLimitIsNoToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	write(t, path, strings.Repeat("t", MaxBytes+1))
	if _, err := Open(path, 0, func(b []byte) string { return string(b) }); err == nil || !strings.Contains(err.Error(), "above the limit of 65536 bytes") {
		t.Fatalf("Open: %v", err)
	}
}
