package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// explainUsage is the synopsis of spec 07 §1.5.
const explainUsage = "usage: dynamic-config explain -f FILE [--installation FILE | --values FILE] [--no-env] [--classes-file FILE] [-n|--namespace NS] [--all] [--release-namespace NS] [-o text|json|yaml]"

// explainCommand is explain's command line (spec 07 §1.5).
var explainCommand = offlineCommand{
	name:          "explain",
	synopsis:      explainUsage,
	fileHelp:      "Pod or workload manifests: a file (YAML documents or JSON), a directory (its .yaml, .yml and .json files) or - for stdin; repeatable",
	outputs:       []string{"text", "json", "yaml"},
	outputDefault: "text",
	flags: func(fs *flagSet, f *offlineFlags) {
		fs.BoolVar(&f.all, "all", false, "show every knob, the unset ones too (default: only the knobs that have a value)")
		fs.StringVar(&f.releaseNamespace, "release-namespace", defaultReleaseNamespace,
			"the namespace the chart is installed in: the webhooks never see pods there")
	},
	// no admit: explain's kind rule (a Pod or one of the seven workload
	// kinds, facts.ValidateKind) is applied as each document is decided,
	// from the request it is decided with.
}

// explainStructured are explain's machine outputs (-o).
var explainStructured = map[string]func(io.Writer, []*explanation) error{
	"json": explainWriteJSON,
	"yaml": explainWriteYAML,
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
	engine, err := newOfflineEngine(in.installation, in.classes)
	if err != nil {
		fmt.Fprintf(stderr, "explain: %v\n", err)
		return exitUsage
	}
	defer engine.Close()
	engine.forCluster(in.cluster)

	scope, err := loadWebhookScope(in.inst.values, in.releaseNamespace)
	if err != nil {
		fmt.Fprintf(stderr, "explain: %v\n", err)
		return exitUsage
	}
	results := make([]*explanation, 0, len(in.docs))
	for _, doc := range in.docs {
		x, err := explain(context.Background(), engine, doc, in.namespace)
		if err != nil {
			fmt.Fprintf(stderr, "explain: %v\n", err)
			return exitUsage
		}
		reach := scope.reach(x.kind == "Pod", x.namespace, x.facts.GetLabels(), doc.raw)
		x.reach, x.all = &reach, in.all
		results = append(results, x)
	}

	if write, ok := explainStructured[in.output]; ok {
		if err := write(stdout, results); err != nil {
			fmt.Fprintf(stderr, "explain: %v\n", err)
			return exitUsage
		}
	} else {
		docFile := "installation"
		if in.installation.DocumentPath != "" {
			docFile = filepath.Base(in.installation.DocumentPath)
		}
		for i, x := range results {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			explainWriteText(stdout, x, docFile)
		}
	}
	for _, x := range results {
		if x.refused() {
			if in.noDocument {
				fmt.Fprintln(stderr, noInstallationHint("explain"))
			}
			return exitRefused
		}
	}
	return exitOK
}

// explanation is the outcome of one document: the mutating decision of a Pod
// and/or the validating decision.
type explanation struct {
	kind      string // Pod, Deployment, …
	facts     *deciderv1.PodFacts
	policy    *envpolicy.Policy
	mutate    *deciderv1.DecisionResponse
	validate  *deciderv1.DecisionResponse
	namespace string
	// reach says whether the API server would call the webhook at all
	// (nil: not shown).
	reach *webhookReach
	// all shows the unset knobs too (--all).
	all bool
	// denial is the front door's own denial when no decision refused (an
	// unusable answer, 04 §5); nil otherwise.
	denial *review.Status
	// template is a workload's pod template pointer ("" for a Pod): mutate
	// is then the decision on the pods the workload creates.
	template string
}

// templateFacts are the facts of a workload's template decided as a Pod.
func templateFacts(pod []byte, namespace string) (*deciderv1.PodFacts, error) {
	req := &review.Request{UID: offlineUID, Kind: review.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Namespace: namespace, Operation: "CREATE", Object: pod}
	obj, err := facts.Decode(req, facts.ValidateKind(req), pod)
	if err != nil {
		return nil, fmt.Errorf("the pod template: %w", err)
	}
	return obj.Facts, nil
}

// refused reports whether the document was denied.
func (x *explanation) refused() bool {
	return x.denial != nil ||
		x.mutate.GetDecision().GetOutcome() == deciderv1.Outcome_OUTCOME_REFUSE ||
		x.validate.GetDecision().GetOutcome() == deciderv1.Outcome_OUTCOME_REFUSE
}

// explain decides one document with the offline engine (offline.go): the
// front door handler before an in-process decider reached over real gRPC
// (bufconn), so explain decides exactly as the cluster does.
func explain(ctx context.Context, e *offlineEngine, doc *manifestDocument, namespace string) (*explanation, error) {
	if err := doc.decodeHead(); err != nil {
		return nil, fmt.Errorf("%s is not an object: %w", doc.where(), err)
	}
	namespace = doc.namespaceFrom(namespace)
	group, version := "", doc.head.APIVersion
	if i := strings.LastIndexByte(doc.head.APIVersion, '/'); i >= 0 {
		group, version = doc.head.APIVersion[:i], doc.head.APIVersion[i+1:]
	}
	req := &review.Request{
		UID:       offlineUID,
		Kind:      review.GroupVersionKind{Group: group, Version: version, Kind: doc.head.Kind},
		Namespace: namespace,
		Operation: "CREATE",
		Object:    doc.raw,
	}
	kind := facts.ValidateKind(req)
	if kind == nil || version != "v1" {
		k := doc.head.Kind
		if k == "" {
			k = "document without a kind"
		}
		return nil, fmt.Errorf("explain takes Pods and workloads; %s is a %s", doc.where(), k)
	}
	obj, err := facts.Decode(req, kind, doc.raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.where(), err)
	}
	x := &explanation{kind: kind.Name, facts: obj.Facts, policy: e.Installation().EnvPolicy, namespace: namespace}
	pod, podFacts := doc.raw, obj.Facts
	if !kind.IsPod() {
		// workloads: /validate on the workload (07 §1.5), and /mutate on
		// its template as the pods it creates meet it — what inject adds
		// to the same file (issue 20)
		if x.validate, err = e.decide(ctx, deciderv1.Purpose_PURPOSE_VALIDATE, obj.Facts); err != nil {
			return nil, err
		}
		t, err := objectPodTarget(doc.raw, "", namespace, "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", doc.where(), err)
		}
		x.template = t.pointer
		pod = t.pod
		if podFacts, err = templateFacts(pod, namespace); err != nil {
			return nil, fmt.Errorf("%s: %w", doc.where(), err)
		}
	}

	// pods and templates: /mutate, then (a Pod) /validate on the mutated pod
	// when a pods-targeting envPolicy exists — inject's path exactly
	a, err := e.admitPod(pod, namespace, doc.head.Metadata.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", doc.where(), err)
	}
	if a.Mutate != nil {
		x.mutate = &deciderv1.DecisionResponse{Decision: a.Mutate}
	} else if x.mutate, err = e.decide(ctx, deciderv1.Purpose_PURPOSE_MUTATE, podFacts); err != nil {
		// the front door allowed without an RPC (step A3); the decider's
		// own answer shows the skip with the revision
		return nil, err
	}
	if a.Validate != nil && kind.IsPod() {
		x.validate = &deciderv1.DecisionResponse{Decision: a.Validate}
	}
	if a.Refused() && !x.refused() {
		x.denial = a.Answer.Status
		if x.denial == nil {
			x.denial = &review.Status{Message: "the front door denied the pod"}
		}
	}
	return x, nil
}
