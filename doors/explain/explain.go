// Package explain is the explain door's work (spec 07 §1.5): each document
// decided with the offline engine (doors/engine) — a Pod's mutating
// decision, a workload's validating one and the decision on the pods it
// creates (explain.go) — and written as text (text.go) or as JSON or YAML
// (json.go).
package explain

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
	"github.com/dynamic-config-admission/dynamic-config/doors/manifest"
	"github.com/dynamic-config-admission/dynamic-config/doors/webhookscope"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Outputs are explain's -o values, in the order the messages name them;
// OutputText is the default.
var Outputs = []string{OutputText, "json", "yaml"}

// OutputText is explain's default output.
const OutputText = "text"

// structured are explain's machine outputs (-o).
var structured = map[string]func(io.Writer, []*Explanation) error{
	"json": WriteJSON,
	"yaml": WriteYAML,
}

// Write writes the explanations in the output format: text (docFile names
// the installation document in the FROM cells), json or yaml.
func Write(w io.Writer, results []*Explanation, output, docFile string) error {
	if write, ok := structured[output]; ok {
		return write(w, results)
	}
	for i, x := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		WriteText(w, x, docFile)
	}
	return nil
}

// Explanation is the outcome of one document: the mutating decision of a
// Pod and/or the validating decision.
type Explanation struct {
	Kind      string // Pod, Deployment, …
	Facts     *deciderv1.PodFacts
	Policy    *envpolicy.Policy
	Mutate    *deciderv1.DecisionResponse
	Validate  *deciderv1.DecisionResponse
	Namespace string
	// Reach says whether the API server would call the webhook at all
	// (nil: not shown).
	Reach *webhookscope.Reach
	// All shows the unset knobs too (--all).
	All bool
	// Denial is the front door's own denial when no decision refused (an
	// unusable answer, 04 §5); nil otherwise.
	Denial *review.Status
	// Template is a workload's pod template pointer ("" for a Pod): Mutate
	// is then the decision on the pods the workload creates.
	Template string
	// Injected is set for a running pod, one already injected: the
	// revision that injected it against the one deciding now.
	Injected *Injected
	// TemplateReach says whether /mutate sees the pods a workload creates
	// (nil: a Pod, or not shown): when it does not, no pod gets the plan.
	TemplateReach *webhookscope.Reach
	// PassedOver is the note of a document explain does not decide (a
	// Service, a Namespace…: not a Pod or a workload); the rest is unset.
	PassedOver string
	// pod and podFacts are the Pod, or a workload's pod template, as
	// /mutate meets it.
	pod      []byte
	podFacts *deciderv1.PodFacts
}

// templateFacts are the facts of a workload's template decided as a Pod.
func templateFacts(pod []byte, namespace string) (*deciderv1.PodFacts, error) {
	req := &review.Request{UID: engine.UID, Kind: review.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Namespace: namespace, Operation: "CREATE", Object: pod}
	obj, err := facts.Decode(req, facts.ValidateKind(req), pod)
	if err != nil {
		return nil, fmt.Errorf("the pod template: %w", err)
	}
	return obj.Facts, nil
}

// Refused reports whether the document was denied.
func (x *Explanation) Refused() bool {
	return x.Denial != nil ||
		x.Mutate.GetDecision().GetOutcome() == deciderv1.Outcome_OUTCOME_REFUSE ||
		x.Validate.GetDecision().GetOutcome() == deciderv1.Outcome_OUTCOME_REFUSE
}

// Documents explains every document of docs with one offline engine
// holding inst and the class set cls (nil: classes off), asking as a front
// door with --cluster-name cluster does ("" = the decider's own), each with
// whether scope's webhooks would see it at all and, with all, the unset
// knobs too.
func Documents(inst *installation.Installation, cls *classes.Set, docs []*manifest.Document, namespace, cluster string,
	scope *webhookscope.Scope, all bool) ([]*Explanation, error) {
	e, err := engine.New(inst, cls)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	e.ForCluster(cluster)
	results := make([]*Explanation, 0, len(docs))
	for _, doc := range docs {
		x, err := Document(context.Background(), e, doc, namespace)
		if err != nil {
			return nil, err
		}
		results = append(results, x)
		if x.PassedOver != "" {
			continue
		}
		reach := scope.Reach(x.Kind == "Pod", x.Namespace, x.Facts.GetLabels(), doc.Raw)
		if x.Template != "" {
			// /validate on a workload only when the release renders it;
			// /mutate on the pods it creates by the Pod's rules (issue 40)
			reach = reach.ValidateRendered(inst.EnvPolicy)
			tr := scope.Reach(true, x.Namespace, x.podFacts.GetLabels(), x.pod)
			x.TemplateReach = &tr
		}
		x.Reach, x.All = &reach, all
	}
	return results, nil
}

// Document decides one document with the offline engine (doors/engine): the
// front door handler before an in-process decider reached over real gRPC
// (bufconn), so explain decides exactly as the cluster does.
func Document(ctx context.Context, e *engine.Engine, doc *manifest.Document, namespace string) (*Explanation, error) {
	if err := doc.DecodeHead(); err != nil {
		return nil, fmt.Errorf("%s is not an object: %w", doc.Where(), err)
	}
	namespace = doc.NamespaceFrom(namespace)
	group, version := "", doc.Head.APIVersion
	if i := strings.LastIndexByte(doc.Head.APIVersion, '/'); i >= 0 {
		group, version = doc.Head.APIVersion[:i], doc.Head.APIVersion[i+1:]
	}
	req := &review.Request{
		UID:       engine.UID,
		Kind:      review.GroupVersionKind{Group: group, Version: version, Kind: doc.Head.Kind},
		Namespace: namespace,
		Operation: "CREATE",
		Object:    doc.Raw,
	}
	kind := facts.ValidateKind(req)
	if kind == nil || version != "v1" {
		// passed over with a note, as inject passes it through (issue 40)
		what := doc.Head.APIVersion + " " + doc.Head.Kind + " " + doc.Head.Metadata.Name
		if doc.Head.Kind == "" {
			what = "a document without a kind"
		}
		return &Explanation{Kind: doc.Head.Kind, PassedOver: doc.Where() + ": " + strings.TrimSpace(what) +
			": passed over (explain decides Pods and the v1 workloads that create them)"}, nil
	}
	obj, err := facts.Decode(req, kind, doc.Raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.Where(), err)
	}
	x := &Explanation{Kind: kind.Name, Facts: obj.Facts, Policy: e.Installation().EnvPolicy, Namespace: namespace}
	pod, podFacts := doc.Raw, obj.Facts
	if !kind.IsPod() {
		// workloads: /validate on the workload (07 §1.5), and /mutate on
		// its template as the pods it creates meet it — what inject adds
		// to the same file (issue 20)
		if x.Validate, err = e.Decide(ctx, deciderv1.Purpose_PURPOSE_VALIDATE, obj.Facts); err != nil {
			return nil, err
		}
		t, err := manifest.ObjectPodTarget(doc.Raw, "", namespace, "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc.Where(), err)
		}
		x.Template = t.Pointer
		pod = t.Pod
		if podFacts, err = templateFacts(pod, namespace); err != nil {
			return nil, fmt.Errorf("%s: %w", doc.Where(), err)
		}
	}

	// pods and templates: /mutate, then (a Pod) /validate on the mutated pod
	// when a pods-targeting envPolicy exists — inject's path exactly
	a, err := e.AdmitPod(pod, namespace, doc.Head.Metadata.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.Where(), err)
	}
	if a.Mutate != nil {
		x.Mutate = &deciderv1.DecisionResponse{Decision: a.Mutate}
	} else if x.Mutate, err = e.Decide(ctx, deciderv1.Purpose_PURPOSE_MUTATE, podFacts); err != nil {
		// the front door allowed without an RPC (step A3); the decider's
		// own answer shows the skip with the revision
		return nil, err
	}
	if kind.IsPod() {
		x.Injected = injectedOf(obj.Facts, x.Mutate.GetDecision())
	}
	if a.Validate != nil && kind.IsPod() {
		x.Validate = &deciderv1.DecisionResponse{Decision: a.Validate}
	}
	x.pod, x.podFacts = pod, podFacts
	if a.Refused() && !x.Refused() {
		x.Denial = a.Answer.Status
		if x.Denial == nil {
			x.Denial = &review.Status{Message: "the front door denied the pod"}
		}
	}
	return x, nil
}
