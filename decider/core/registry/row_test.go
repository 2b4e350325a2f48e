package registry

import (
	"slices"
	"testing"
)

func TestTheGeneratedIDsNameTheTableRowsInOrder(t *testing.T) {
	if len(rows) != Count {
		t.Fatalf("the table has %d rows, ids.go was generated for %d: run make knobs", len(rows), Count)
	}
	for i := range rows {
		if generatedNames[i] != rows[i].Name {
			t.Fatalf("ID %d was generated for %q, the row is %q: run make knobs", i, generatedNames[i], rows[i].Name)
		}
	}
	if Source.Name() != "source" || TemplateConfigMap.Name() != "template-configmap" {
		t.Fatalf("Source is %q, TemplateConfigMap is %q", Source.Name(), TemplateConfigMap.Name())
	}
}

func TestEveryKnobHasAGrammarExceptThoseItsStepsJudge(t *testing.T) {
	judgedBySteps := []string{"class", "agent-env", "inject-containers"}
	for i := range rows {
		r := &rows[i]
		if got, want := r.Grammar.Checked(), !slices.Contains(judgedBySteps, r.Name); got != want {
			t.Errorf("%s: grammar checked %v, want %v", r.Name, got, want)
		}
	}
}

func TestAKnobHasAnInstallationSettingExactlyWhenItHasAFleetTier(t *testing.T) {
	seen := map[int]string{}
	for i := range rows {
		r := &rows[i]
		fleet := slices.Contains(r.Tiers, TierFleet)
		if (r.Setting != nil) != fleet {
			t.Errorf("%s: setting %v, fleet tier %v", r.Name, r.Setting != nil, fleet)
			continue
		}
		if r.Setting == nil {
			continue
		}
		if other, twice := seen[r.Setting.Row]; twice {
			t.Errorf("%s and %s both claim spec 02 §2.1 row %d", r.Name, other, r.Setting.Row)
		}
		seen[r.Setting.Row] = r.Name
	}
	for row := 1; row <= len(seen); row++ {
		if seen[row] == "" {
			t.Errorf("no knob owns spec 02 §2.1 row %d: the fleet defaults are rows 1–%d", row, len(seen))
		}
	}
	if got := Fleet(); len(got) != len(seen) || got[0].Row().Setting.Row != 1 || got[len(got)-1].Row().Setting.Row != len(seen) {
		t.Errorf("Fleet() = %v, not the %d fleet defaults in row order", got, len(seen))
	}
}

func TestOnlyTheClassKeyIsRefusedAsForbidden(t *testing.T) {
	for i := range rows {
		want := RefuseMalformed
		if rows[i].Name == "class" {
			want = RefuseForbidden
		}
		if rows[i].Refusal != want {
			t.Errorf("%s: refusal class %d, want %d", rows[i].Name, rows[i].Refusal, want)
		}
	}
}

func TestValuesHoldWhatWasSetAndNothingElse(t *testing.T) {
	var v Values
	v.Set(Path, "/config/a.json")
	if text, ok := v.Get(Path); !ok || text != "/config/a.json" {
		t.Fatalf("Get(Path) = %q, %v", text, ok)
	}
	if v.Has(Key) || v.Text(Key) != "" {
		t.Fatalf("Key is set in %+v", v)
	}
	v.Unset(Path)
	if v.Has(Path) {
		t.Fatal("Path is still set after Unset")
	}
}

func TestOnlyPerRenderKeysHaveANamedStepAndNoTwoShareOne(t *testing.T) {
	seen := map[Step]string{}
	for i := range rows {
		r := &rows[i]
		if r.Named == (Step{}) {
			continue
		}
		if !r.PerRender || r.Named.N < 1 || r.Named.Seq < 1 {
			t.Errorf("%s: named step %+v on a per-render=%v key", r.Name, r.Named, r.PerRender)
		}
		if other, twice := seen[r.Named]; twice {
			t.Errorf("%s and %s share named step %+v", r.Name, other, r.Named)
		}
		seen[r.Named] = r.Name
	}
}
