package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/resolve"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/facts"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// targetDecidePlan is the resolver alone, in this process: what a decision
// costs once the transport is gone (issue 25). Together with the floor and
// the gRPC floor it is the limit of the two-process shape.
const targetDecidePlan = "decide-plan"

// decidePlanCaller returns a call that runs resolve.DecidePlan, the
// decider's Decide without provenance (the PLAN view the front door asks
// for), over the corpus pods that reach the decider, round robin. The facts
// are built once, the way the front door and the decider build them, so the
// call is the resolver and nothing else. Each answer is checked against the
// corpus: inject for the patched pods, refuse for the refused one.
func decidePlanCaller(installationPath string) (call, error) {
	inst, err := installationloader.Load(installationloader.Options{DocumentPath: installationPath, DocumentExplicit: true, Environ: childEnv()})
	if err != nil {
		return nil, fmt.Errorf("decide-plan: the installation: %w", err)
	}
	type asking struct {
		name  string
		facts *decision.Facts
		want  decision.Outcome
	}
	var pods []asking
	for _, p := range corpus {
		if p.want == allowedAsIs {
			continue // no dynamic-config.rs/ annotation: the front door makes no call
		}
		f, err := corpusFacts(p)
		if err != nil {
			return nil, err
		}
		want := decision.OutcomeInject
		if p.want == denied {
			want = decision.OutcomeRefuse
		}
		pods = append(pods, asking{p.name, f, want})
	}
	return func(_ context.Context, _, i int) (string, bool) {
		p := &pods[i%len(pods)]
		if d := decide(inst, p.facts); d.Outcome != p.want {
			return fmt.Sprintf("decide-plan: %s: outcome %d, want %d", p.name, d.Outcome, p.want), false
		}
		return "", false
	}, nil
}

// decide is the resolver call, apart so that profiles name it.
func decide(inst *installation.Installation, f *decision.Facts) decision.Decision {
	return resolve.DecidePlan(inst, nil, f)
}

// corpusFacts are the facts of a corpus pod as the decider sees them: the
// front door's facts.Decode, then the decider's conversion.
func corpusFacts(p corpusPod) (*decision.Facts, error) {
	req := &review.Request{
		UID:       "load-" + p.name,
		Kind:      review.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Resource:  review.GroupVersionResource{Version: "v1", Resource: "pods"},
		Operation: "CREATE",
		UserInfo:  review.UserInfo{Username: "system:serviceaccount:kube-system:replicaset-controller"},
		Object:    json.RawMessage(p.pod),
	}
	kind := facts.MutateKind(req)
	if kind == nil {
		return nil, fmt.Errorf("decide-plan: corpus pod %s: not a kind /mutate admits", p.name)
	}
	obj, err := facts.Decode(req, kind, req.Object)
	if err != nil {
		return nil, fmt.Errorf("decide-plan: corpus pod %s: %w", p.name, err)
	}
	return service.FactsFromProto(deciderv1.Purpose_PURPOSE_MUTATE, obj.Facts), nil
}

// selfCPU is this process's CPU seconds (the decide-plan cell's cost).
func selfCPU() float64 {
	s, _ := cpuSeconds(os.Getpid())
	return s
}
