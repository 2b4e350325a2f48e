package chart

import (
	"os"
	"strings"
	"testing"
)

// The chart's template lists the fleet keys and built-ins the installation
// table gives (make check-docs runs the same check through cmd/chartkeys).
func TestInstallationTemplateListsTheTablesFleetKeys(t *testing.T) {
	committed, err := os.ReadFile("templates/_installation.tpl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		tpl     string
		want    string
		wantErr string
	}{
		{name: "the committed template is the table's", tpl: string(committed), want: string(committed)},
		{name: "a stale key list is rewritten",
			tpl:  strings.Replace(string(committed), "- [metricsPort, metricsPort]\n", "- [metricsPort, port]\n- [stale, stale]\n", 1),
			want: string(committed)},
		{name: "a stale built-in is rewritten",
			tpl:  strings.Replace(string(committed), "memoryLimit: 64Mi\n", "memoryLimit: 128Mi\n", 1),
			want: string(committed)},
		{name: "a template without the fleet key list is refused",
			tpl:     strings.Replace(string(committed), fleetKeysDefine, "", 1),
			wantErr: "no " + fleetKeysDefine + " line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := InstallationTemplate([]byte(tt.tpl))
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case string(got) != tt.want:
				t.Errorf("template differs from the table's:\n%s", got)
			}
		})
	}
}

// A fleet key is left out of the document at its chart default only when
// that default is the key's built-in.
func TestBuiltInsAreTheChartDefaultsThatEqualTheBuiltIn(t *testing.T) {
	builtIns := BuiltIns()
	for _, k := range FleetKeys() {
		want, ok := builtIns[k.Key]
		if ok && want != k.BuiltIn {
			t.Errorf("%s: built-in %q, the table's %q", k.Key, want, k.BuiltIn)
		}
	}
	for _, key := range []string{"cpuRequest", "memoryRequest", "memoryLimit"} {
		if _, ok := builtIns[key]; !ok {
			t.Errorf("%s: the chart's default is its built-in, yet it is not listed", key)
		}
	}
	if _, ok := builtIns["metricsPort"]; ok {
		t.Error("metricsPort: the chart's 9110 is no built-in, yet it is listed")
	}
}

// Every fleet key of the table is a chart value: values.yaml carries it under
// agent.defaults and the strict schema admits it there, so a knob given a
// fleet default in the registry cannot ship without its chart side (make
// check-docs runs the same check through cmd/chartkeys, whose test shows a
// missing key fail and `make docs` add it).
func TestEveryFleetKeyIsAChartValueAndInTheSchema(t *testing.T) {
	for _, f := range []struct {
		name   string
		update func([]byte) ([]byte, error)
	}{
		{"values.yaml", FleetValues},
		{"values.schema.json", FleetSchema},
	} {
		t.Run(f.name+" has every fleet key", func(t *testing.T) {
			committed, err := os.ReadFile(f.name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.update(committed)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(committed) {
				t.Errorf("%s lacks a fleet key of the table: run make docs", f.name)
			}
		})
	}
}
