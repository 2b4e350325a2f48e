package resolve

import (
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

func TestADeprecatedKeyIsAdmittedWithAWarningBeforeTheNamedRendersWarnings(t *testing.T) {
	// No key is deprecated in this version: deprecate one for the test.
	i := registry.Timeout
	saved, savedAny := rows[i], anyDeprecated
	rows[i].DeprecatedSince, rows[i].Replacement, anyDeprecated = "v0.4.0", "watch-seconds", true
	defer func() { rows[i], anyDeprecated = saved, savedAny }()

	pod := cachePod("timeout", "30", "watch-seconds", "3", "watch-seconds.cache", "2")
	d := Decide(installation.Empty(), nil, pod)
	mustInject(t, d)
	var codes []string
	for _, w := range d.Warnings {
		codes = append(codes, w.Code+": "+w.Message)
	}
	want := []string{
		"watch-seconds-low: watch-seconds is 3 — every replica polls the store that often; mind the store's load and its bill",
		"deprecated-key: dynamic-config.rs/timeout is deprecated since v0.4.0; use dynamic-config.rs/watch-seconds",
		`watch-seconds-low: render "cache": watch-seconds is 2 — every replica polls the store that often; mind the store's load and its bill`,
	}
	if len(codes) != len(want) {
		t.Fatalf("warnings %q", codes)
	}
	for k := range want {
		if codes[k] != want[k] {
			t.Errorf("warning %d\n got %s\nwant %s", k, codes[k], want[k])
		}
	}
}
