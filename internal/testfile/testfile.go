// Package testfile writes the files a test reads into the test's own
// temporary directory (removed when the test ends).
package testfile

import (
	"os"
	"path/filepath"
	"testing"
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
