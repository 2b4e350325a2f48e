package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/buildinfo"
)

// version is the binary version, set at build time:
// go build -ldflags "-X main.version=v1.2.3" (the Makefile does, from
// scripts/version.sh).
var version = buildinfo.Dev

// readBuildInfo is debug.ReadBuildInfo (tests replace it).
var readBuildInfo = debug.ReadBuildInfo

// currentVersion is what `version` reports (internal/buildinfo).
func currentVersion() buildinfo.Info {
	return buildinfo.Read(version, installation.BuiltInAgentImage, readBuildInfo)
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
			return usageError(stderr, "version", err)
		}
		fmt.Fprintf(stdout, "%s\n", data)
	default:
		fmt.Fprintf(stderr, "version: -o is %q: text or json\n", *output)
		return exitUsage
	}
	return exitOK
}
