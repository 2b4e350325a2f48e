package main

import (
	"fmt"
	"io"

	"github.com/dynamic-config-admission/dynamic-config/doors/rolloutpromote"
)

const rolloutPromoteSynopsis = "usage: dynamic-config rollout promote (--values FILE | --rollout FILE) [--no-env] [-o yaml]"

var rolloutPromoteExamples = []example{
	{"the chart values with rollout.candidate moved into place and rollout emptied (the file is rewritten)", "dynamic-config rollout promote --values values.yaml"},
	{"a rollout document's candidate as the installation document", "dynamic-config rollout promote --rollout rollout.yaml -o yaml > installation.yaml"},
}

// runRolloutPromote is `dynamic-config rollout promote` (spec 10 §5; package
// rolloutpromote): exit 0 promoted, 2 usage or a rollout that is invalid.
func runRolloutPromote(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("rollout promote", stderr)
	var global globalFlags
	global.register(fs, "text")
	var r rolloutpromote.Request
	fs.StringVar(&r.Values, "values", "", "chart values file: rollout.candidate moves into place and rollout is removed (the file is rewritten; -o yaml: to stdout)")
	fs.StringVar(&r.Rollout, "rollout", "", "rollout document: its candidate is written to stdout as an installation document")
	noEnv := fs.Bool("no-env", false, "validate the rollout without the process environment (DYNAMIC_CONFIG_* variables)")
	output := fs.String("o", "", "yaml: write the result to stdout (default: rewrite --values in place)")
	fs.completeValues("o", "yaml")
	if _, code, done := parseArgs(fs, &global, args, stderr); done {
		return code
	}
	if r.Output = *output; !*noEnv {
		r.Environ = processEnviron()
	}
	out, done, err := rolloutpromote.Promote(r)
	if err != nil {
		return usageError(stderr, "rollout promote", err)
	}
	stdout.Write(out) //nolint:errcheck // a closed stdout shows in the shell
	fmt.Fprintln(stderr, "rollout promote: "+done)
	return exitOK
}
