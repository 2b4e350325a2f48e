package tokenfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestARotatedFileIsInForceAndABrokenOneKeepsTheLastGoodToken(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	write(t, path, "first")
	f, err := Open(path, 0, func(b []byte) string { return "Bearer " + string(b) })
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, "second-longer")
	if got := f.Fresh(); got != "Bearer second-longer" {
		t.Fatalf("after a rotation Fresh = %q", got)
	}
	write(t, path, "\n")
	if got := f.Fresh(); got != "Bearer second-longer" {
		t.Fatalf("after emptying the file Fresh = %q, want the last good token", got)
	}
	write(t, path, "third-token-value")
	f.Current() // starts the re-check off the caller's goroutine
	deadline := time.Now().Add(5 * time.Second)
	for f.Current() != "Bearer third-token-value" {
		if time.Now().After(deadline) {
			t.Fatalf("Current never saw the rotation: %q", f.Current())
		}
		time.Sleep(time.Millisecond)
	}
}
