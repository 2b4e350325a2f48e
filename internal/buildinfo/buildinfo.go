// Package buildinfo reads what a build of the binary says of itself: the
// version the Makefile stamped (-ldflags -X main.version, from
// scripts/version.sh), else the module version of `go install
// module@version`, else the untagged form of a plain `go build` in a
// checkout from the VCS revision Go records (-buildvcs, on by default).
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Dev is the version of a build nobody stamped.
const Dev = "dev"

// Info is what `dynamic-config version` reports.
type Info struct {
	Version    string `json:"version"`
	Revision   string `json:"revision,omitempty"` // the VCS revision, when the build recorded it
	Modified   bool   `json:"modified,omitempty"` // the checkout had uncommitted changes
	AgentImage string `json:"agentImage"`
	Go         string `json:"go"`
}

// Read is the build's Info: stamped is the -X version (Dev when not set),
// agentImage the built-in agent image, read debug.ReadBuildInfo (tests
// replace it).
func Read(stamped, agentImage string, read func() (*debug.BuildInfo, bool)) Info {
	v := Info{Version: stamped, AgentImage: agentImage, Go: runtime.Version()}
	info, ok := read()
	if !ok {
		return v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	if v.Version != Dev {
		return v
	}
	switch {
	case info.Main.Version != "" && info.Main.Version != "(devel)":
		// go install module@version
		v.Version = info.Main.Version
	case v.Revision != "":
		// a plain go build in a checkout: scripts/version.sh's form
		// without a release tag
		v.Version = "v0.0.0-dev+" + shortRevision(v.Revision)
		if v.Modified {
			v.Version += ".dirty"
		}
	}
	return v
}

func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// Build names the build to a front door's decision cache (issue 43: a
// decider announces it on its revision watch, and an upgraded decider may
// answer the same question differently): the version, with the VCS revision
// when the build recorded one, so two unstamped builds of different
// checkouts differ.
func (v Info) Build() string {
	build := v.Version
	if v.Revision != "" {
		build += "+" + v.Revision
		if v.Modified {
			build += ".modified"
		}
	}
	return build
}
