package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/dynamic-config-admission/dynamic-config/decider/installation"
)

// version is the binary version, set at build time:
// go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// binaryVersion is version, or the module version when the binary was built
// by `go install module@version`.
func binaryVersion() string {
	if version != "dev" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return version
}

// runVersion is `dynamic-config version`: the binary version, the built-in
// agent image and the Go version.
func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr)
	var g globalFlags
	g.register(fs, "text")
	if _, code, done := parseArgs(fs, &g, args, stderr); done {
		return code
	}
	fmt.Fprintf(stdout, "dynamic-config %s\n", binaryVersion())
	fmt.Fprintf(stdout, "agent image: %s\n", installation.BuiltInAgentImage)
	fmt.Fprintf(stdout, "go: %s\n", runtime.Version())
	return exitOK
}
