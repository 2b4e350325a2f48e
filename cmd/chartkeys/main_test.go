package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFailsOnAStaleTemplateAndWritingMendsIt(t *testing.T) {
	committed, err := os.ReadFile("../../charts/dynamic-config/templates/_installation.tpl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		tpl       string
		wantCheck string // "" = the check passes
	}{
		{"the committed template passes", string(committed), ""},
		{"a key the table does not have fails", strings.Replace(string(committed), "- [path, path]\n", "- [path, path]\n- [extra, extra]\n", 1),
			"the fleet keys or built-ins differ from the installation table's; run make docs and commit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "_installation.tpl")
			if err := os.WriteFile(path, []byte(tt.tpl), 0o600); err != nil {
				t.Fatal(err)
			}
			err := run(path, true)
			if tt.wantCheck == "" {
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				return
			}
			if err == nil || err.Error() != path+": "+tt.wantCheck {
				t.Fatalf("check: got %v, want %q", err, tt.wantCheck)
			}
			if err := run(path, false); err != nil {
				t.Fatal(err)
			}
			if err := run(path, true); err != nil {
				t.Errorf("after writing, check: %v", err)
			}
		})
	}
}
