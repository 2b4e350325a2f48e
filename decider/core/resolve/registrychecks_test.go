package resolve

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// emittedChecks decides every refusal case of this package — the checks of
// spec 01 §8 (checkCases), the class refusals, the class key guard and a pin
// of every store-shaped knob — and returns the check ids the refusals carry.
func emittedChecks(t *testing.T) map[string]bool {
	t.Helper()
	emitted := map[string]bool{}
	add := func(d decision.Decision) {
		for _, r := range d.Refusals {
			emitted[r.Check] = true
		}
	}
	for _, c := range checkCases {
		add(Decide(load(t, c.doc, c.env...), nil, c.pod))
	}
	for _, c := range classRefusalCases {
		add(Decide(installation.Empty(), c.cls, c.pod))
	}
	for _, c := range keyGuardCases {
		add(Decide(installation.Empty(), guardSet, c.pod))
	}
	for _, c := range storeShapedPins {
		add(Decide(load(t, c.doc()), nil, c.pod(c.other)))
	}
	return emitted
}

// TestEveryRegistryCheckIDIsEmitted holds the registry's Checks — each row's
// and each other key's, the check column of docs/annotations.md — to the
// resolver: every id named there is the check of a refusal that a case of
// this package produces. A misspelt or stale id, or a new check without a
// case, fails here.
func TestEveryRegistryCheckIDIsEmitted(t *testing.T) {
	emitted := emittedChecks(t)
	named := 0
	for _, r := range registry.Rows() {
		for _, id := range r.Checks {
			named++
			if !emitted[id] {
				t.Errorf("row %s names check %s, which no refusal case emits: add a case that refuses with it, or correct the row", r.Name, id)
			}
		}
	}
	for _, o := range registry.OtherKeys() {
		for _, id := range o.Checks {
			named++
			if !emitted[id] {
				t.Errorf("key %s names check %s, which no refusal case emits: add a case that refuses with it, or correct the entry", o.Form, id)
			}
		}
	}
	if named == 0 || len(emitted) == 0 {
		t.Fatalf("%d check ids named, %d emitted: the walk saw nothing", named, len(emitted))
	}
}
