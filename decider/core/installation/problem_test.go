package installation

import (
	"errors"
	"testing"
)

// The typed problems carry where and what; their lines are the report's.
func TestEveryProblemCarriesItsSettingPathValueAndExpectation(t *testing.T) {
	_, err := loadYAML(t, "storeDefaults: {vault: {endpoint: '', watch-seconds: x, nope: 1}, mysql: {}}\nbogus: 1\nwatchSeconds: soon\n",
		"DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS=yes", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=5")
	var p *Problems
	if !errors.As(err, &p) {
		t.Fatalf("expected *Problems, got %v", err)
	}
	type where struct{ setting, path, hiddenBy, value, expected string }
	want := map[string]where{
		`bogus: "bogus" is not an installation setting; `: {"", "bogus", "", "bogus", "an installation setting"},
		`storeDefaults.vault.watch-seconds [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: watch-seconds is "x": whole seconds`: {
			"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS", "storeDefaults.vault.watch-seconds", "", "x", "whole seconds"},
		`storeDefaults.vault [DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (vault)]: "nope" is not a defaultable knob; `: {
			"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS", "storeDefaults.vault", "", "nope", "one of " + storeKnobList},
		`storeDefaults.mysql: "mysql" is not a store this contract knows`: {
			"DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS", "storeDefaults.mysql", "", "mysql", "a store this contract knows"},
		`DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS: allowEvents is "yes": "true" or "false"`: {
			"DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS", "", "", "yes", `"true" or "false"`},
		`(hidden by DYNAMIC_CONFIG_AGENT_WATCH_SECONDS) watchSeconds [DYNAMIC_CONFIG_AGENT_WATCH_SECONDS]: watch-seconds is "soon"`: {
			"DYNAMIC_CONFIG_AGENT_WATCH_SECONDS", "watchSeconds", "DYNAMIC_CONFIG_AGENT_WATCH_SECONDS", "soon", ""},
	}
	if len(p.Items) != len(p.Lines) {
		t.Fatalf("%d items, %d lines", len(p.Items), len(p.Lines))
	}
	found := 0
	for i, it := range p.Items {
		if it.String() != p.Lines[i] {
			t.Errorf("item %d renders %q, the report line is %q", i, it.String(), p.Lines[i])
		}
		for prefix, w := range want {
			if len(p.Lines[i]) < len(prefix) || p.Lines[i][:len(prefix)] != prefix {
				continue
			}
			found++
			got := where{it.Setting, it.Path, it.HiddenBy, it.Value, it.Expected}
			if w.expected == "" {
				got.expected = "" // the knob grammar's own words; checked by the line
			}
			if got != w {
				t.Errorf("%s:\n got %+v\nwant %+v", p.Lines[i], got, w)
			}
		}
	}
	if found != len(want) {
		t.Errorf("found %d of the %d expected problems in:\n%s", found, len(want), err)
	}
}
