package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// injectUsage is the synopsis of spec 07 §1.4.
const injectUsage = "usage: dynamic-config inject -f FILE [-f FILE…] [--installation FILE | --values FILE] [--no-env] [--classes-file FILE] [-n|--namespace NS] [-o yaml|json|patch|review]"

// Output formats of inject.
const (
	outputYAML   = "yaml"
	outputJSON   = "json"
	outputPatch  = "patch"
	outputReview = "review"
)

// injectCommand is inject's command line (spec 07 §1.4).
var injectCommand = offlineCommand{
	admit:      injectTakesWorkloads,
	name:       "inject",
	synopsis:   injectUsage,
	fileHelp:   "manifests of Pods, workloads (Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job, CronJob) or Lists: a file (YAML documents or JSON), a directory (its .yaml, .yml and .json files) or - for stdin; repeatable",
	outputs:    []string{outputYAML, outputJSON, outputPatch, outputReview},
	outputNote: " (default: the first document's format; several objects in JSON are one v1 List)",
}

// runInject is `dynamic-config inject` (spec 07 §1.4, issue 15): every Pod,
// and the pod template of every workload (inject_workloads.go), goes through the front door handler to an in-process decider, exactly as
// in the cluster; the mutated manifests (or the patches, or the answers) go
// to stdout and one line per document to stderr. Exit 0 when every document
// was admitted, 1 when any was refused, 2 when the command could not run.
func runInject(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in, code, done := readOfflineInput(injectCommand, args, stdin, stderr)
	if done {
		return code
	}
	results, err := injectDocuments(in.installation, in.classes, in.docs, in.namespace, in.cluster)
	if err != nil {
		fmt.Fprintf(stderr, "inject: %v\n", err)
		return exitUsage
	}

	code = exitOK
	for _, r := range results {
		for _, t := range r.targets {
			writeInjectLine(stderr, r.doc.file, t, in.verbose)
		}
		if len(r.targets) == 0 {
			fmt.Fprintf(stderr, "%s: nothing to inject (an empty List)\n", r.doc.file)
		}
		if r.Refused() {
			code = exitRefused
		}
	}
	if code == exitRefused && in.noDocument {
		fmt.Fprintln(stderr, noInstallationHint("inject"))
	}
	if err := writeInjectOutput(stdout, results, in.output); err != nil {
		fmt.Fprintf(stderr, "inject: %v\n", err)
		return exitUsage
	}
	return code
}

// injectResult is one document's outcome: each of its pods', and the
// document with every patch applied.
type injectResult struct {
	doc     *manifestDocument
	targets []*targetResult
	// Mutated is the whole document after the patches (nil when refused).
	Mutated []byte
	// Patch is the document's JSON Patch: every pod's, moved to its place.
	Patch []byte
}

// targetResult is one pod's outcome.
type targetResult struct {
	podTarget
	*admitted
}

// Refused reports whether any pod of the document was denied: then nothing
// of the document is written (but in -o review).
func (r *injectResult) Refused() bool {
	for _, t := range r.targets {
		if t.admitted != nil && t.Refused() {
			return true
		}
	}
	return false
}

// injectDocuments runs every pod of every document through the offline
// engine, then patches each document as a whole.
func injectDocuments(inst *installation.Installation, cls *classes.Set, docs []*manifestDocument, namespace, cluster string) ([]*injectResult, error) {
	engine, err := newOfflineEngine(inst, cls)
	if err != nil {
		return nil, err
	}
	defer engine.Close()
	engine.forCluster(cluster)
	results := make([]*injectResult, 0, len(docs))
	for _, doc := range docs {
		targets, err := podTargets(doc, namespace)
		if err != nil {
			return nil, err
		}
		r := &injectResult{doc: doc}
		var ops []jsonpatch.Op
		for _, t := range targets {
			if t.pod == nil {
				r.targets = append(r.targets, &targetResult{podTarget: t})
				continue
			}
			a, err := engine.admitPod(t.pod, t.namespace, t.name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", doc.file, err)
			}
			r.targets = append(r.targets, &targetResult{podTarget: t, admitted: a})
			if a.Refused() {
				continue
			}
			moved, err := rebasePatch(a.Patch, t.pointer)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", doc.where(), err)
			}
			ops = append(ops, moved...)
		}
		switch {
		case r.Refused():
			results = append(results, r)
			continue
		case len(targets) == 1 && targets[0].pointer == "" && targets[0].pod != nil:
			// a Pod: the front door's own patch and pod, byte for byte
			r.Patch, r.Mutated = r.targets[0].Patch, r.targets[0].Mutated
			results = append(results, r)
			continue
		}
		if r.Patch, err = jsonout.Marshal(ops); err != nil {
			return nil, err
		}
		if len(ops) == 0 {
			r.Patch, r.Mutated = []byte("[]"), doc.raw // written as it came
		} else if r.Mutated, err = jsonpatch.Apply(doc.raw, r.Patch); err != nil {
			return nil, fmt.Errorf("%s: apply the patch to the manifest: %w", doc.where(), err)
		}
		results = append(results, r)
	}
	return results, nil
}

// skipReasonTexts are the texts of the skip reasons (spec 07 §1.4) but
// NOT_TARGETED's, which names its target (see skipReasonText).
var skipReasonTexts = map[deciderv1.SkipReason]string{
	deciderv1.SkipReason_SKIP_REASON_NO_ANNOTATIONS:   "no dynamic-config.rs/ annotation",
	deciderv1.SkipReason_SKIP_REASON_NOT_CREATE:       "the operation is not CREATE",
	deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED: "already injected",
	deciderv1.SkipReason_SKIP_REASON_NOT_REQUESTED:    `inject is not "true"`,
	deciderv1.SkipReason_SKIP_REASON_NO_POLICY:        "no environment-variable policy",
}

// skipReasonText is a skip reason as inject and explain print it (spec 07
// §1.4); target (pods or workloads) is what NOT_TARGETED names. ok is false
// for a reason without a text.
func skipReasonText(reason deciderv1.SkipReason, target string) (text string, ok bool) {
	if reason == deciderv1.SkipReason_SKIP_REASON_NOT_TARGETED {
		return "the environment-variable policy does not target " + target, true
	}
	text, ok = skipReasonTexts[reason]
	return text, ok
}

// skipText names why nothing was injected: the decider's skip reason, or
// the front door's allow without an RPC (step A3).
func skipText(d *deciderv1.Decision) string {
	if d == nil {
		return skipReasonTexts[deciderv1.SkipReason_SKIP_REASON_NO_ANNOTATIONS]
	}
	if text, ok := skipReasonText(d.GetSkipReason(), envpolicy.TargetPods); ok {
		return text
	}
	return strings.ToLower(d.GetOutcome().String())
}

// writeInjectLine writes one pod's stderr line and its warnings: "<file>:"
// and, for a workload's template, "<Kind>/<name>:". A document passed
// through (not a kind inject patches) is noted only when verbose.
func writeInjectLine(w io.Writer, file string, r *targetResult, verbose bool) {
	where := file
	if r.label != "" {
		where += ": " + r.label
	}
	if r.admitted == nil {
		if verbose {
			fmt.Fprintf(w, "%s: passed through unchanged (inject patches %s)\n", where, injectKinds)
		}
		return
	}
	a := r.Answer
	switch {
	case !a.Allowed && a.Status != nil:
		fmt.Fprintf(w, "%s: refused (%s %d): %s\n", where, a.Status.Reason, a.Status.Code, a.Status.Message)
	case a.Patch != "":
		fmt.Fprintf(w, "%s: injected (%d agent container(s))\n", where, agentCount(r.Patch))
	default:
		fmt.Fprintf(w, "%s: nothing to inject (%s)\n", where, skipText(r.Mutate))
	}
	for _, text := range a.Warnings {
		fmt.Fprintf(w, "warning: %s\n", text)
	}
}

// agentCount counts the containers a patch adds: every op adding one element
// to spec.containers or spec.initContainers is an agent.
func agentCount(patch []byte) int {
	var ops []jsonpatch.Op
	if json.Unmarshal(patch, &ops) != nil {
		return 0
	}
	n := 0
	for _, op := range ops {
		if op.Op != "add" {
			continue
		}
		switch op.Path {
		case "/spec/containers/-", "/spec/initContainers/-", "/spec/initContainers/0":
			n++
		}
	}
	return n
}

// writeInjectOutput writes stdout in the chosen format (07 §1.4).
func writeInjectOutput(w io.Writer, results []*injectResult, output string) error {
	if output == outputReview {
		var answers [][]byte
		for _, r := range results {
			for _, t := range r.targets {
				if t.admitted != nil {
					answers = append(answers, review.Encode(t.Answer))
				}
			}
		}
		if len(answers) == 1 {
			_, err := fmt.Fprintf(w, "%s\n", answers[0])
			return err
		}
		_, err := fmt.Fprintf(w, "[%s]\n", bytes.Join(answers, []byte(",")))
		return err
	}
	var written []*injectResult
	for _, r := range results {
		if !r.Refused() { // refused documents print nothing but in -o review
			written = append(written, r)
		}
	}
	if output == outputPatch {
		for _, r := range written {
			if _, err := fmt.Fprintf(w, "%s\n", r.Patch); err != nil {
				return err
			}
		}
		return nil
	}
	return writeManifestStream(w, written, streamFormat(output, written))
}

// streamFormat is the format of the whole manifest stream: -o, else the
// first document's (a stream is one format, so that it pipes).
func streamFormat(output string, written []*injectResult) string {
	switch {
	case output != "":
		return output
	case len(written) > 0 && written[0].doc.json:
		return outputJSON
	}
	return outputYAML
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
