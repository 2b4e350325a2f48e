package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/dynamic-config-admission/dynamic-config/decider/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/installation"
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
	admit:      injectTakesPods,
	name:       "inject",
	synopsis:   injectUsage,
	fileHelp:   "a Pod manifest (YAML documents or one JSON object); - reads stdin; repeatable",
	outputs:    []string{outputYAML, outputJSON, outputPatch, outputReview},
	outputNote: " (default: the input's format)",
}

// runInject is `dynamic-config inject` (spec 07 §1.4): every Pod document
// goes through the front door handler to an in-process decider, exactly as
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
		writeInjectLine(stderr, r)
		if r.Refused() {
			code = exitRefused
		}
	}
	if err := writeInjectOutput(stdout, results, in.output); err != nil {
		fmt.Fprintf(stderr, "inject: %v\n", err)
		return exitUsage
	}
	return code
}

// injectTakesPods is inject's kind rule: every document is a v1 Pod.
func injectTakesPods(doc *manifestDocument) error {
	if err := doc.decodeHead(); err != nil {
		return fmt.Errorf("inject takes Pods; %s is not an object: %w", doc.where(), err)
	}
	if doc.head.APIVersion != "v1" || doc.head.Kind != "Pod" {
		return fmt.Errorf("inject takes Pods; %s is a %s", doc.where(), describeKind(doc.head.APIVersion, doc.head.Kind))
	}
	return nil
}

// describeKind names what a document that is not a v1 Pod is.
func describeKind(apiVersion, kind string) string {
	switch {
	case kind == "":
		return "document without a kind"
	case kind == "Pod":
		return fmt.Sprintf("Pod of apiVersion %q (want v1)", apiVersion)
	default:
		return kind
	}
}

// injectResult is one document's outcome.
type injectResult struct {
	*admitted
	doc *manifestDocument
}

// injectDocuments runs every document through the offline engine.
func injectDocuments(inst *installation.Installation, cls *classes.Set, docs []*manifestDocument, namespace, cluster string) ([]*injectResult, error) {
	engine, err := newOfflineEngine(inst, cls)
	if err != nil {
		return nil, err
	}
	defer engine.Close()
	engine.forCluster(cluster)
	results := make([]*injectResult, 0, len(docs))
	for _, doc := range docs {
		a, err := engine.admitPod(doc.raw, doc.namespaceFrom(namespace), doc.head.Metadata.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc.file, err)
		}
		results = append(results, &injectResult{admitted: a, doc: doc})
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

// writeInjectLine writes the document's stderr line and its warnings.
func writeInjectLine(w io.Writer, r *injectResult) {
	a := r.Answer
	switch {
	case !a.Allowed && a.Status != nil:
		fmt.Fprintf(w, "%s: refused (%s %d): %s\n", r.doc.file, a.Status.Reason, a.Status.Code, a.Status.Message)
	case a.Patch != "":
		fmt.Fprintf(w, "%s: injected (%d agent container(s))\n", r.doc.file, agentCount(r.Patch))
	default:
		fmt.Fprintf(w, "%s: nothing to inject (%s)\n", r.doc.file, skipText(r.Mutate))
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
			answers = append(answers, review.Encode(r.Answer))
		}
		if len(answers) == 1 {
			_, err := fmt.Fprintf(w, "%s\n", answers[0])
			return err
		}
		_, err := fmt.Fprintf(w, "[%s]\n", bytes.Join(answers, []byte(",")))
		return err
	}
	first := true
	for _, r := range results {
		if r.Refused() {
			continue // refused documents print nothing but in -o review
		}
		var out []byte
		switch format := documentFormat(output, r.doc); format {
		case outputPatch:
			out = append(bytes.Clone(r.Patch), '\n')
		case outputJSON:
			var buf bytes.Buffer
			if err := json.Indent(&buf, r.Mutated, "", "  "); err != nil {
				return err
			}
			buf.WriteByte('\n')
			out = buf.Bytes()
		default:
			y, err := yaml.JSONToYAML(r.Mutated)
			if err != nil {
				return fmt.Errorf("%s: write YAML: %w", r.doc.file, err)
			}
			out = y
		}
		if !first && output != outputPatch {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		first = false
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

// documentFormat is the output format of one document: -o, else the input's.
func documentFormat(output string, doc *manifestDocument) string {
	if output != "" {
		return output
	}
	if doc.json {
		return outputJSON
	}
	return outputYAML
}

func decodeBase64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
