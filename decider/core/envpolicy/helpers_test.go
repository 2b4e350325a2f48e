package envpolicy

import (
	"fmt"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

const testRevision = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"

// parseVariable validates the text of DYNAMIC_CONFIG_ENV_POLICY decoded as
// the loader decodes it (docparse.Text).
func parseVariable(text string) (*Policy, []string) {
	return ParseVariable(text, docparse.Text)
}

// containerKinds are the three container lists R is the union of.
var containerKinds = []string{"containers", "initContainers", "ephemeralContainers"}

// spread builds the facts of a Pod in namespace ns whose env entries are dealt
// round-robin over containers, initContainers and ephemeralContainers,
// starting with the list at offset (so each entry visits each list across
// offsets 0, 1, 2). Each list has two containers; entries go to the second.
func spread(kind decision.ResourceKind, ns string, offset int, env ...decision.EnvVar) *decision.Facts {
	f := &decision.Facts{Purpose: decision.PurposeValidate, ResourceKind: kind, Namespace: ns, Name: "app",
		Operation: decision.OperationCreate}
	lists := [3][]decision.Container{
		{{Name: "app"}, {Name: "sidecar"}},
		{{Name: "setup"}, {Name: "migrate"}},
		{{Name: "debug"}, {Name: "debug-2"}},
	}
	for i, e := range env {
		l := (i + offset) % 3
		lists[l][1].Env = append(lists[l][1].Env, e)
	}
	f.Containers, f.InitContainers, f.EphemeralContainers = lists[0], lists[1], lists[2]
	return f
}

func lit(name, value string) decision.EnvVar { return decision.EnvVar{Name: name, Value: value} }
func from(name string) decision.EnvVar       { return decision.EnvVar{Name: name, ValueFrom: true} }

func names(n ...string) []Variable {
	out := make([]Variable, len(n))
	for i, s := range n {
		out[i] = Variable{Name: s}
	}
	return out
}

func oneRule(r Rule) *Policy {
	return &Policy{Targets: []string{TargetPods, TargetWorkloads}, Rules: []Rule{r}}
}

// mark renders an outcome for failure messages.
func mark(d decision.Decision) string {
	switch d.Outcome {
	case decision.OutcomeAllow:
		return "✓"
	case decision.OutcomeRefuse:
		return "✗"
	case decision.OutcomeSkip:
		return fmt.Sprintf("skip(%d)", d.SkipReason)
	}
	return fmt.Sprintf("outcome(%d)", d.Outcome)
}

// checkShape asserts the invariants every validating decision holds.
func checkShape(t *testing.T, d decision.Decision, p *Policy) {
	t.Helper()
	if d.InstallationRevision != testRevision {
		t.Errorf("revision = %q", d.InstallationRevision)
	}
	if d.AuditAnnotations["revision"] != testRevision {
		t.Errorf("audit annotation revision = %q", d.AuditAnnotations["revision"])
	}
	if d.DecisionID != "" || d.Plan != nil || d.Renders != nil || d.Gates != nil {
		t.Errorf("validating decision carries mutating parts: %+v", d)
	}
	if (d.Outcome == decision.OutcomeSkip) != (d.SkipReason != decision.SkipUnspecified) {
		t.Errorf("outcome %d with skip reason %d", d.Outcome, d.SkipReason)
	}
	if (d.Outcome == decision.OutcomeRefuse) != (len(d.Refusals) == 1) {
		t.Errorf("outcome %d with %d refusals", d.Outcome, len(d.Refusals))
	}
	if p != nil && len(d.EnvPolicyResults) != len(p.Rules) {
		t.Errorf("%d results for %d rules", len(d.EnvPolicyResults), len(p.Rules))
	}
	for i, r := range d.EnvPolicyResults {
		if r.Index != int32(i) {
			t.Errorf("result %d has index %d", i, r.Index)
		}
	}
}
