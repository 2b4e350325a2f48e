package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/doors/installationreport"
)

// runCheckInstallation is `dynamic-config check-installation` (spec 07 §1.6):
// load and validate an installation exactly as the decider does, and the
// rollout beside it (spec 10 §2); print every problem of both and exit 2, or
// print the effective installation (and rollout) and exit 0.
func runCheckInstallation(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("check-installation", stderr)
	var global globalFlags
	global.register(fs, "text")
	var inst installationFlags
	inst.register(fs.FlagSet)
	rollout := fs.String("rollout", "", "also validate this rollout document (spec 10 §2) over the installation's environment (with --values: the values' rollout.* without it)")
	output := fs.String("o", "text", "output format: text or json (GetInstallationResponse protojson)")
	fs.completeValues("o", installationreport.Outputs...)
	if _, code, done := parseArgs(fs, &global, args, stderr); done {
		return code
	}
	if !slices.Contains(installationreport.Outputs, *output) {
		fmt.Fprintf(stderr, "check-installation: -o is %q: text or json\n", *output)
		return exitUsage
	}
	src := inst.source()
	src.Rollout = *rollout
	if err := src.Check(); err != nil {
		return usageError(stderr, "check-installation", err)
	}
	loaded, r, err := src.LoadWithRollout()
	if err != nil {
		return usageError(stderr, "", err)
	}
	if err := installationreport.Write(stdout, stderr, installationreport.New(loaded, r), *output); err != nil {
		return usageError(stderr, "check-installation", err)
	}
	return exitOK
}
