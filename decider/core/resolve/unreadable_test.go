package resolve

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// The unreadable-file warning names the installation value that pins the
// knob a fix would change (issue 40): its document path, or its variable.
func TestTheUnreadableFileWarningNamesThePin(t *testing.T) {
	app := func() *decision.Facts {
		f := consulPod()
		f.Containers[0].RunAsUser = i64(1000)
		return f
	}
	cases := []struct {
		name, doc string
		env       []string
		want      string
	}{
		{"a pinned fleet file-mode, by its document path", `fileMode: "0600!"`, nil, "(file-mode is pinned by fileMode)"},
		{"a pinned fleet file-mode, by its variable", "", []string{"DYNAMIC_CONFIG_AGENT_FILE_MODE=0600!"}, "(file-mode is pinned by DYNAMIC_CONFIG_AGENT_FILE_MODE)"},
		{"a store line's pins, by the line's document path",
			"storeDefaults:\n  consul: \"overridable=false, file-mode=0400, agent-run-as-user=2000\"\n", nil,
			"(file-mode is pinned by storeDefaults.consul; agent-run-as-user is pinned by storeDefaults.consul)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(load(t, c.doc, c.env...), nil, app())
			mustInject(t, d)
			for _, w := range d.Warnings {
				if strings.HasSuffix(w.Message, c.want) {
					return
				}
			}
			t.Errorf("warnings %+v: none ends in %q", d.Warnings, c.want)
		})
	}
}
