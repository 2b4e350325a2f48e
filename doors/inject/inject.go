// Package inject is the inject door's work (spec 07 §1.4, issue 15): every
// Pod, and the pod template of every workload, of the -f documents goes
// through the offline engine (doors/engine) exactly as in the cluster, each
// document is patched as a whole (inject.go), and the mutated manifests,
// patches or answers are written as one stream that pipes (stream.go).
package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonout"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/jsonpatch"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
)

// Output formats of inject (-o).
const (
	OutputYAML   = "yaml"
	OutputJSON   = "json"
	OutputPatch  = "patch"
	OutputReview = "review"
)

// Outputs are inject's -o values, in the order the messages name them.
var Outputs = []string{OutputYAML, OutputJSON, OutputPatch, OutputReview}

// Admit is inject's rule for a document as it is read (see
// manifest.CheckKind; a v1 List's items are checked as they are expanded).
func Admit(doc *manifest.Document) error {
	if err := doc.DecodeHead(); err != nil {
		return fmt.Errorf("inject takes %s; %s is not an object: %w", manifest.Kinds, doc.Where(), err)
	}
	if doc.Head.APIVersion == "v1" && doc.Head.Kind == "List" {
		return nil
	}
	if _, err := manifest.CheckKind(doc.Head.APIVersion, doc.Head.Kind); err != nil {
		return fmt.Errorf("inject takes %s; %s is %w", manifest.Kinds, doc.Where(), err)
	}
	return nil
}

// Result is one document's outcome: each of its pods', and the document
// with every patch applied.
type Result struct {
	Doc     *manifest.Document
	Targets []*Target
	// Mutated is the whole document after the patches (nil when refused).
	Mutated []byte
	// Patch is the document's JSON Patch: every pod's, moved to its place.
	Patch []byte
}

// Target is one pod's outcome (Admitted is nil for an object passed
// through unchanged).
type Target struct {
	manifest.PodTarget
	*engine.Admitted
}

// Refused reports whether any pod of the document was denied: then nothing
// of the document is written (but in -o review).
func (r *Result) Refused() bool {
	for _, t := range r.Targets {
		if t.Admitted != nil && t.Refused() {
			return true
		}
	}
	return false
}

// Documents runs every pod of every document through the offline
// engine, then patches each document as a whole.
func Documents(inst *installation.Installation, cls *classes.Set, docs []*manifest.Document, namespace, cluster string) ([]*Result, error) {
	e, err := engine.New(inst, cls)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	e.ForCluster(cluster)
	results := make([]*Result, 0, len(docs))
	for _, doc := range docs {
		targets, err := manifest.PodTargets(doc, namespace)
		if err != nil {
			return nil, err
		}
		r := &Result{Doc: doc}
		var ops []jsonpatch.Op
		for _, t := range targets {
			if t.Pod == nil {
				r.Targets = append(r.Targets, &Target{PodTarget: t})
				continue
			}
			a, err := e.AdmitPod(t.Pod, t.Namespace, t.Name)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", doc.File, err)
			}
			r.Targets = append(r.Targets, &Target{PodTarget: t, Admitted: a})
			if a.Refused() {
				continue
			}
			moved, err := manifest.RebasePatch(a.Patch, t.Pointer)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", doc.Where(), err)
			}
			ops = append(ops, moved...)
		}
		switch {
		case r.Refused():
			results = append(results, r)
			continue
		case len(targets) == 1 && targets[0].Pointer == "" && targets[0].Pod != nil:
			// a Pod: the front door's own patch and pod, byte for byte
			r.Patch, r.Mutated = r.Targets[0].Patch, r.Targets[0].Mutated
			results = append(results, r)
			continue
		}
		if r.Patch, err = jsonout.Marshal(ops); err != nil {
			return nil, err
		}
		if len(ops) == 0 {
			r.Patch, r.Mutated = []byte("[]"), doc.Raw // written as it came
		} else if r.Mutated, err = jsonpatch.Apply(doc.Raw, r.Patch); err != nil {
			return nil, fmt.Errorf("%s: apply the patch to the manifest: %w", doc.Where(), err)
		}
		results = append(results, r)
	}
	return results, nil
}

// WriteLine writes one pod's stderr line and its warnings: "<file>:"
// and, for a workload's template, "<Kind>/<name>:". A document passed
// through (not a kind inject patches) is noted only when verbose.
func WriteLine(w io.Writer, file string, r *Target, verbose bool) {
	where := file
	if r.Label != "" {
		where += ": " + r.Label
	}
	if r.Admitted == nil {
		if verbose {
			fmt.Fprintf(w, "%s: passed through unchanged (inject patches %s)\n", where, manifest.Kinds)
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
		fmt.Fprintf(w, "%s: nothing to inject (%s)\n", where, engine.SkipText(r.Mutate))
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

// WriteOutput writes stdout in the chosen format (07 §1.4).
func WriteOutput(w io.Writer, results []*Result, output string) error {
	if output == OutputReview {
		var answers [][]byte
		for _, r := range results {
			for _, t := range r.Targets {
				if t.Admitted != nil {
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
	var written []*Result
	for _, r := range results {
		if !r.Refused() { // refused documents print nothing but in -o review
			written = append(written, r)
		}
	}
	if output == OutputPatch {
		return writePatches(w, written, len(results) > 1)
	}
	return writeManifestStream(w, written, streamFormat(output, written))
}

// labelledPatch is one document's patch in a stream (issue 40): which
// document it patches, then the patch.
type labelledPatch struct {
	Document  string          `json:"document"`
	Kind      string          `json:"kind,omitempty"`
	Namespace string          `json:"namespace,omitempty"`
	Name      string          `json:"name,omitempty"`
	Patch     json.RawMessage `json:"patch"`
}

// writePatches prints each document's JSON Patch on a line: one document's
// bare (kubectl patch --type json -p takes it); in a stream of several, each
// labelled with its document, one JSON object a line (jq -c 'select(.name ==
// "web") | .patch' picks one).
func writePatches(w io.Writer, written []*Result, stream bool) error {
	for _, r := range written {
		line := r.Patch
		if stream {
			var err error
			h := r.Doc.Head
			if line, err = json.Marshal(labelledPatch{Document: r.Doc.Where(), Kind: h.Kind, Namespace: h.Metadata.Namespace,
				Name: h.Metadata.Name, Patch: json.RawMessage(r.Patch)}); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "%s\n", line); err != nil {
			return err
		}
	}
	return nil
}

// WriteLines writes WriteLine's lines for every pod of the results (an
// empty List says so) and reports whether any document was refused.
func WriteLines(w io.Writer, results []*Result, verbose bool) (refused bool) {
	for _, r := range results {
		for _, t := range r.Targets {
			WriteLine(w, r.Doc.File, t, verbose)
		}
		if len(r.Targets) == 0 {
			fmt.Fprintf(w, "%s: nothing to inject (an empty List)\n", r.Doc.File)
		}
		refused = refused || r.Refused()
	}
	return refused
}

// streamFormat is the format of the whole manifest stream: -o, else the
// first document's (a stream is one format, so that it pipes).
func streamFormat(output string, written []*Result) string {
	switch {
	case output != "":
		return output
	case len(written) > 0 && written[0].Doc.JSON:
		return OutputJSON
	}
	return OutputYAML
}
