package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// version is the binary version, set at build time:
// go build -ldflags "-X main.version=v1.2.3" (the Makefile does, from
// scripts/version.sh).
var version = "dev"

// readBuildInfo is debug.ReadBuildInfo (tests replace it).
var readBuildInfo = debug.ReadBuildInfo

// buildVersion is what `version` reports.
type buildVersion struct {
	Version    string `json:"version"`
	Revision   string `json:"revision,omitempty"` // the VCS revision, when the build recorded it
	Modified   bool   `json:"modified,omitempty"` // the checkout had uncommitted changes
	AgentImage string `json:"agentImage"`
	Go         string `json:"go"`
}

// currentVersion reads the version, and the VCS revision Go records in a
// build from a checkout (-buildvcs, on by default).
func currentVersion() buildVersion {
	v := buildVersion{Version: version, AgentImage: installation.BuiltInAgentImage, Go: runtime.Version()}
	info, ok := readBuildInfo()
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
	if v.Version != "dev" {
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

// binaryVersion is the version --version and the logs report.
func binaryVersion() string { return currentVersion().Version }

// runVersion is `dynamic-config version`: the binary version, the built-in
// agent image and the Go version; -o json adds the VCS revision.
func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr)
	var g globalFlags
	g.register(fs, "text")
	output := fs.String("o", "text", "output: text or json (with the VCS revision)")
	fs.completeValues("o", "text", "json")
	if _, code, done := parseArgs(fs, &g, args, stderr); done {
		return code
	}
	v := currentVersion()
	switch *output {
	case "text":
		fmt.Fprintf(stdout, "dynamic-config %s\n", v.Version)
		fmt.Fprintf(stdout, "agent image: %s\n", v.AgentImage)
		fmt.Fprintf(stdout, "go: %s\n", v.Go)
	case "json":
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "version: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stdout, "%s\n", data)
	default:
		fmt.Fprintf(stderr, "version: -o is %q: text or json\n", *output)
		return exitUsage
	}
	return exitOK
}

// deciderBuild is the build a decider announces to the front doors'
// decision caches (issue 43): the version, with the VCS revision when the
// build recorded one ("dev" builds differ by it).
func deciderBuild() string {
	v := currentVersion()
	build := v.Version
	if v.Revision != "" {
		build += "+" + v.Revision
		if v.Modified {
			build += ".modified"
		}
	}
	return build
}
