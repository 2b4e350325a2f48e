package buildinfo

import "testing"

func TestBuildNamesTheVersionAndTheRevisionItWasBuiltFrom(t *testing.T) {
	for _, c := range []struct {
		name string
		info Info
		want string
	}{
		{"a stamped release without VCS information is its version", Info{Version: "v1.2.3"}, "v1.2.3"},
		{"a build from a checkout carries the revision", Info{Version: "v1.2.3", Revision: "abc"}, "v1.2.3+abc"},
		{"a build from a modified checkout says so", Info{Version: Dev, Revision: "abc", Modified: true}, "dev+abc.modified"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.info.Build(); got != c.want {
				t.Errorf("Build() = %q, want %q", got, c.want)
			}
		})
	}
}
