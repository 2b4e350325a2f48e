package main

import (
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/doors/installationreport"
)

// runCheckInstallation is `dynamic-config check-installation` (spec 07 §1.6):
// load and validate an installation exactly as the decider does; print every
// problem and exit 2, or print the effective installation and exit 0.
func runCheckInstallation(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("check-installation", stderr)
	var global globalFlags
	global.register(fs, "text")
	var inst installationFlags
	inst.register(fs.FlagSet)
	output := fs.String("o", "text", "output format: text or json (GetInstallationResponse protojson)")
	fs.completeValues("o", "text", "json")
	if _, code, done := parseArgs(fs, &global, args, stderr); done {
		return code
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(stderr, "check-installation: -o is %q: text or json\n", *output)
		return exitUsage
	}
	if err := inst.usageError(); err != nil {
		fmt.Fprintln(stderr, "check-installation: "+err.Error())
		return exitUsage
	}
	loaded, err := inst.load()
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	resp := service.InstallationToProto(loaded, nil)
	for _, w := range resp.GetWarnings() {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	if *output == "json" {
		b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(resp)
		if err != nil {
			fmt.Fprintln(stderr, "check-installation: "+err.Error())
			return exitUsage
		}
		fmt.Fprintln(stdout, string(b))
		return exitOK
	}
	fmt.Fprintln(stdout, "installation is valid: "+resp.GetRevision())
	installationreport.WriteText(stdout, resp)
	return exitOK
}
