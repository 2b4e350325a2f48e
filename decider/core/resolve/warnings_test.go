package resolve

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// TestANamedRendersWarningsNameItsRender: every warning of a named render —
// rules 2–4 again (spec 03 §6.1 rule 8) and the silent cases of issue 20 (a
// store default not applied, kubernetes auth without a token) — names the
// render in its Render field as well as in its message's prefix; the default
// render's and the pod-wide warnings name none.
func TestANamedRendersWarningsNameItsRender(t *testing.T) {
	inst := load(t, "storeDefaults:\n  redis: \"agent-cpu-request=100m\"\n", "DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY=true")
	pod := cachePod("volume-medium", "disk", "tls-skip-verify", "true", "auth", "kubernetes",
		"file-mode.cache", "0o604", "watch-seconds.cache", "1", "tls-skip-verify.cache", "true", "auth.cache", "kubernetes")
	automount := false
	pod.AutomountServiceAccountToken = &automount
	d := Decide(inst, nil, pod)
	mustInject(t, d)
	want := []struct{ code, render string }{
		{"volume-disk", ""}, {"tls-skip-verify", ""},
		{"file-mode-world-readable", "cache"}, {"watch-seconds-low", "cache"}, {"tls-skip-verify", "cache"},
		{"store-default-not-applied", "cache"},
		{"no-service-account-token", ""}, {"no-service-account-token", "cache"},
	}
	if len(d.Warnings) != len(want) {
		t.Fatalf("warnings %+v, want codes and renders %v", d.Warnings, want)
	}
	for i, w := range d.Warnings {
		prefixed := strings.HasPrefix(w.Message, `render "cache": `)
		if w.Code != want[i].code || w.Render != want[i].render || prefixed != (want[i].render != "") {
			t.Errorf("warning %d: %s render %q %q; want %s render %q", i, w.Code, w.Render, w.Message, want[i].code, want[i].render)
		}
	}
}

func TestTheFirstNamedRenderWarningIsFoundByItsRender(t *testing.T) {
	tests := []struct {
		name     string
		warnings []decision.Warning
		want     int
	}{
		{name: "no warnings", want: 0},
		{name: "the default render's only", warnings: []decision.Warning{{Code: "volume-disk"}, {Code: "tls-skip-verify"}}, want: 2},
		{name: "the first with a render", warnings: []decision.Warning{{Code: "volume-disk"}, {Code: "tls-skip-verify", Render: "a"}, {Code: "tls-skip-verify", Render: "b"}}, want: 1},
		{name: "a message that reads like a named render's is not one", warnings: []decision.Warning{{Code: "x", Message: `render "a": looks named`}, {Code: "y", Render: "a"}}, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := firstNamedRenderWarning(tt.warnings); got != tt.want {
				t.Fatalf("firstNamedRenderWarning() = %d, want %d", got, tt.want)
			}
		})
	}
}
