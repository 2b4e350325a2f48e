package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/dynamic-config-admission/dynamic-config/doors/explain"
	"github.com/dynamic-config-admission/dynamic-config/doors/installationsource"
	"github.com/dynamic-config-admission/dynamic-config/doors/webhookscope"
)

// explainUsage is the synopsis of spec 07 §1.5.
const explainUsage = "usage: dynamic-config explain -f FILE [-R] [--installation FILE | --values FILE] [--no-env] [--classes-file FILE] [-n|--namespace NS] [--all] [--release-namespace NS] [-o text|json|yaml]"

// explainCommand is explain's command line (spec 07 §1.5).
var explainCommand = offlineCommand{
	name:          "explain",
	synopsis:      explainUsage,
	fileHelp:      "Pod or workload manifests: a file (YAML documents or JSON), a directory (its .yaml, .yml and .json files) or - for stdin; repeatable",
	outputs:       explain.Outputs,
	outputDefault: explain.OutputText,
	flags: func(fs *flagSet, f *offlineFlags) {
		fs.BoolVar(&f.all, "all", false, "show every knob, the unset ones too (default: only the knobs that have a value)")
		fs.StringVar(&f.releaseNamespace, "release-namespace", webhookscope.DefaultReleaseNamespace,
			"the namespace the chart is installed in: the webhooks never see pods there")
	},
	// no admit: explain's kind rule (a Pod or one of the seven workload
	// kinds, facts.ValidateKind) is applied as each document is decided,
	// from the request it is decided with.
}

// runExplain prints every render's knobs with their provenance, the gates,
// the env policy, the plan, the warnings and the outcome of each document
// (spec 07 §1.5). Pods go through the mutating path (and the validating path
// on the mutated pod when a pods-targeting envPolicy exists); workloads
// through the validating path only.
func runExplain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in, code, done := readOfflineInput(explainCommand, args, stdin, stderr)
	if done {
		return code
	}
	scope, err := webhookscope.Load(in.inst.values, in.releaseNamespace)
	if err != nil {
		return usageError(stderr, "explain", err)
	}
	results, err := explain.Documents(in.installation, in.classes, in.docs, in.namespace, in.cluster, scope, in.all)
	if err != nil {
		return usageError(stderr, "explain", err)
	}

	docFile := "installation"
	if in.installation.DocumentPath != "" {
		docFile = filepath.Base(in.installation.DocumentPath)
	}
	if err := explain.Write(stdout, results, in.output, docFile); err != nil {
		return usageError(stderr, "explain", err)
	}
	for _, x := range results {
		if x.Refused() {
			if in.noDocument {
				fmt.Fprintln(stderr, installationsource.NoDocumentHint("explain"))
			}
			return exitRefused
		}
	}
	return exitOK
}
