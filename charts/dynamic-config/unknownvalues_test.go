package chart

import (
	"errors"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// --values names a value the chart's schema refuses by its path, with the
// value it may mean within two edits (issue 40 item 9), as helm install
// would refuse it; the schema's open maps take any key.
func TestAValueTheSchemaDoesNotNameIsNamedByItsPath(t *testing.T) {
	cases := []struct {
		name, values string
		want         []string // the problem lines of ours, in document order
	}{
		{"a misspelt fleet default is told its name", "agent:\n  defaults:\n    fileMod: \"0640\"\n",
			[]string{"agent.defaults.fileMod is not a chart value: did you mean agent.defaults.fileMode?"}},
		{"a misspelt top-level key is told its name", "webhok:\n  excludeNamespaces: [x]\n",
			[]string{"webhok is not a chart value: did you mean webhook?"}},
		{"a nested key far from every value says the schema refuses it", "frontdoor:\n  replicaCount: 2\n",
			[]string{"frontdoor.replicaCount is not a chart value (the chart's values.schema.json refuses it; its values are in values.yaml)"}},
		{"every one is named at once", "agent:\n  tga: v1\ntls:\n  mdoe: selfSigned\n",
			[]string{"agent.tga is not a chart value: did you mean agent.tag?", "tls.mdoe is not a chart value: did you mean tls.mode?"}},
		{"an open map (an objectSelector's labels) takes any key", "webhook:\n  objectSelector:\n    matchLabels: {anything: goes}\n", nil},
		{"known values pass", "agent:\n  defaults:\n    fileMode: \"0640\"\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadValuesText(t, tc.values)
			var got []string
			if p := (*installation.Problems)(nil); errors.As(err, &p) {
				for _, l := range p.Lines {
					if strings.Contains(l, "is not a chart value") {
						got = append(got, l)
					}
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s\n(all: %v)", strings.Join(got, "\n"), strings.Join(tc.want, "\n"), err)
			}
		})
	}
}
