package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	chart "github.com/dynamic-config-admission/dynamic-config/charts/dynamic-config"
)

func TestCheckFailsOnAStaleChartFileAndWritingMendsIt(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../charts/dynamic-config/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tpl, values, schema := read("templates/_installation.tpl"), read("values.yaml"), read("values.schema.json")
	tests := []struct {
		name      string
		file      string
		update    func([]byte) ([]byte, error)
		content   string
		wantCheck string // "" = the check passes
		wantAdded string // what writing adds
	}{
		{name: "the committed template passes", file: "_installation.tpl", update: chart.InstallationTemplate, content: tpl},
		{name: "a template key the table does not have fails", file: "_installation.tpl", update: chart.InstallationTemplate,
			content:   strings.Replace(tpl, "- [path, path]\n", "- [path, path]\n- [extra, extra]\n", 1),
			wantCheck: "the fleet keys or built-ins differ from the installation table's; run make docs and commit"},
		{name: "the committed values pass", file: "values.yaml", update: chart.FleetValues, content: values},
		{name: "values without a fleet key fail, and writing adds it unset with its documentation", file: "values.yaml", update: chart.FleetValues,
			content:   strings.Replace(values, "    cpuLimit: \"\"\n", "", 1),
			wantCheck: "a fleet key of the installation table is not under agent.defaults; run make docs and commit",
			wantAdded: "    cpuLimit: \"\"             # "},
		{name: "the committed schema passes", file: "values.schema.json", update: chart.FleetSchema, content: schema},
		{name: "a schema without a fleet key fails, and writing adds a string for it", file: "values.schema.json", update: chart.FleetSchema,
			content:   strings.Replace(schema, `"cpuLimit": {`, `"cpuLimitOld": {`, 1),
			wantCheck: "a fleet key of the installation table is not in agent.defaults' properties; run make docs and commit",
			wantAdded: "            \"cpuLimit\": {\n              \"type\": \"string\",\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.file)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := run(path, tt.update, staleText(tt.file), true)
			if tt.wantCheck == "" {
				if err != nil {
					t.Fatalf("check: %v", err)
				}
				return
			}
			if err == nil || err.Error() != path+": "+tt.wantCheck {
				t.Fatalf("check: got %v, want %q", err, tt.wantCheck)
			}
			if err := run(path, tt.update, staleText(tt.file), false); err != nil {
				t.Fatal(err)
			}
			if err := run(path, tt.update, staleText(tt.file), true); err != nil {
				t.Errorf("after writing, check: %v", err)
			}
			if tt.wantAdded != "" {
				got, _ := os.ReadFile(path)
				if !strings.Contains(string(got), tt.wantAdded) {
					t.Errorf("writing did not add %q", tt.wantAdded)
				}
			}
		})
	}
}
