package testfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteLeavesTheContentUnderTheNameInAFreshDirectory(t *testing.T) {
	tests := []struct{ name, content string }{
		{"values.yaml", "agent:\n  tag: v1\n"},
		{"empty.json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Write(t, tt.name, tt.content)
			if filepath.Base(p) != tt.name {
				t.Errorf("path %s, want the name %s", p, tt.name)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != tt.content {
				t.Errorf("got %q, %v; want %q", got, err, tt.content)
			}
		})
	}
}
