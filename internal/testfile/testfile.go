// Package testfile writes the files a test reads into the test's own
// temporary directory (removed when the test ends).
package testfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Write writes content to a file named name in a fresh temporary directory
// of t and returns its path.
func Write(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// RewriteInPlace rewrites the file at path with content the way a careless
// writer does (issue 38): truncated, then written in chunks of at most chunk
// bytes, each ending at a line's end where it holds one (a writer that
// flushes lines), with pause between them, so that a reader can catch a
// prefix of whole lines. It returns when the whole content is written.
func RewriteInPlace(t testing.TB, path string, content []byte, chunk int, pause time.Duration) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for len(content) > 0 {
		n := min(chunk, len(content))
		if i := bytes.LastIndexByte(content[:n], '\n'); i >= 0 && n < len(content) {
			n = i + 1
		}
		if _, err := f.Write(content[:n]); err != nil {
			t.Fatal(err)
		}
		content = content[n:]
		time.Sleep(pause)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
