package main

import (
	"fmt"
	"io"

	"github.com/dynamic-config-admission/dynamic-config/doors/inject"
	"github.com/dynamic-config-admission/dynamic-config/doors/installationsource"
)

// injectUsage is the synopsis of spec 07 §1.4.
const injectUsage = "usage: dynamic-config inject -f FILE [-f FILE…] [-R] [--installation FILE | --values FILE] [--no-env] [--classes-file FILE] [-n|--namespace NS] [-o yaml|json|patch|review]"

// injectCommand is inject's command line (spec 07 §1.4).
var injectCommand = offlineCommand{
	admit:      inject.Admit,
	name:       "inject",
	synopsis:   injectUsage,
	fileHelp:   "manifests of Pods, workloads (Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob) or Lists: a file (YAML documents or JSON), a directory (its .yaml, .yml and .json files) or - for stdin; repeatable",
	outputs:    inject.Outputs,
	outputNote: " (default: the first document's format; several objects in JSON are one v1 List)",
}

// runInject is `dynamic-config inject` (spec 07 §1.4, issue 15): every Pod,
// and the pod template of every workload, goes through the front door
// handler to an in-process decider, exactly as in the cluster (doors/inject); the mutated manifests (or the patches, or the answers) go
// to stdout and one line per document to stderr. Exit 0 when every document
// was admitted, 1 when any was refused, 2 when the command could not run.
func runInject(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in, code, done := readOfflineInput(injectCommand, args, stdin, stderr)
	if done {
		return code
	}
	results, err := inject.Documents(in.installation, in.classes, in.docs, in.namespace, in.cluster)
	if err != nil {
		return usageError(stderr, "inject", err)
	}

	code = exitOK
	if inject.WriteLines(stderr, results, in.verbose) {
		code = exitRefused
		if in.noDocument {
			fmt.Fprintln(stderr, installationsource.NoDocumentHint("inject"))
		}
	}
	if err := inject.WriteOutput(stdout, results, in.output); err != nil {
		return usageError(stderr, "inject", err)
	}
	return code
}
