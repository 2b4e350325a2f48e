package envpolicy

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// Values are drawn from a marker alphabet disjoint from the message
// templates, names (upper case) and namespaces: "zq" and 12 hex digits. Any
// "zq" in an output is a leaked value (spec 05 §8).
const marker = "zq"

func markerValue(r *rand.Rand) string {
	return fmt.Sprintf("%s%012x", marker, r.Uint64()&0xffffffffffff)
}

func randomName(r *rand.Rand) string {
	const first = "ABCDEFGHIJKLMNOPRSTUVWXY_" // no Q, no Z: lower-cased they could spell the marker
	const rest = first + "0123456789"
	n := 1 + r.IntN(8)
	b := []byte{first[r.IntN(len(first))]}
	for i := 1; i < n; i++ {
		b = append(b, rest[r.IntN(len(rest))])
	}
	return string(b)
}

// randomCase builds a policy and facts whose listed and found values are all
// markers, with enough overlap that rules match, fail and refuse.
func randomCase(r *rand.Rand) (*Policy, *decision.Facts) {
	pool := make([]string, 2+r.IntN(5))
	for i := range pool {
		pool[i] = randomName(r)
	}
	values := []string{markerValue(r), markerValue(r), markerValue(r)}
	modes := []string{ModeEnforce, ModeWarn, ModeAudit}
	nss := [][]string{nil, {"*"}, {"team-a"}, {"other"}, {"other", "team-a"}}
	p := &Policy{}
	switch r.IntN(3) {
	case 1:
		p.Targets = []string{TargetPods}
	case 2:
		p.Targets = []string{TargetWorkloads}
	}
	for range 1 + r.IntN(5) {
		rule := Rule{Reject: operators[r.IntN(4)], Mode: modes[r.IntN(3)], Namespaces: nss[r.IntN(len(nss))]}
		for range 1 + r.IntN(4) {
			v := Variable{Name: pool[r.IntN(len(pool))]}
			if r.IntN(2) == 0 {
				v.Value, v.HasValue = values[r.IntN(len(values))], true
			}
			rule.Variables = append(rule.Variables, v)
		}
		p.Rules = append(p.Rules, rule)
	}
	f := &decision.Facts{ResourceKind: decision.ResourceKind(1 + r.IntN(8)), Namespace: "team-a"}
	lists := []*[]decision.Container{&f.Containers, &f.InitContainers, &f.EphemeralContainers}
	for _, l := range lists {
		for range r.IntN(3) {
			c := decision.Container{Name: "c"}
			for range r.IntN(5) {
				e := decision.EnvVar{Name: pool[r.IntN(len(pool))]}
				switch r.IntN(4) {
				case 0:
					e.ValueFrom = true
				case 1:
					// "" literal
				default:
					e.Value = values[r.IntN(len(values))]
				}
				c.Env = append(c.Env, e)
			}
			*l = append(*l, c)
		}
	}
	if r.IntN(2) == 0 {
		f.WorkloadAnnotationKeys = []string{"dynamic-config.rs/inject"}
	}
	return p, f
}

// decisionTexts is every text a validating decision shows a user, an
// audit log or explain.
func decisionTexts(d decision.Decision) []string {
	var out []string
	for _, r := range d.Refusals {
		out = append(out, r.Message, r.Key, r.Check, r.Slug, r.Render)
	}
	for _, w := range d.Warnings {
		out = append(out, w.Code, w.Message)
	}
	for k, v := range d.AuditAnnotations {
		out = append(out, k, v)
	}
	for _, res := range d.EnvPolicyResults {
		out = append(out, res.Reject, res.Mode)
		out = append(out, res.MatchedNames...)
		out = append(out, res.MissingNames...)
	}
	return out
}

func checkNoValue(t *testing.T, d decision.Decision) (refused, warned, audited bool) {
	t.Helper()
	for _, s := range decisionTexts(d) {
		if strings.Contains(s, marker) {
			t.Fatalf("a value leaked: %q", s)
		}
	}
	return d.Outcome == decision.OutcomeRefuse, len(d.Warnings) > 0, len(d.AuditAnnotations) > 1
}

func TestNoDecisionTextContainsAValue(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 0))
	var refused, warned, audited int
	for i := 0; i < 5000; i++ {
		p, f := randomCase(r)
		rf, w, a := checkNoValue(t, Decide(p, testRevision, f))
		if rf {
			refused++
		}
		if w {
			warned++
		}
		if a {
			audited++
		}
	}
	// The property is only worth something if the generator reaches every kind of text.
	if refused < 100 || warned < 100 || audited < 100 {
		t.Errorf("weak generator: %d refusals, %d with warnings, %d with audit findings", refused, warned, audited)
	}
}

func FuzzDecideNeverShowsAValue(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1 << 40} {
		f.Add(s, uint64(7))
	}
	f.Fuzz(func(t *testing.T, a, b uint64) {
		p, facts := randomCase(rand.New(rand.NewPCG(a, b)))
		checkNoValue(t, Decide(p, testRevision, facts))
	})
}

// badPolicyText writes a policy in flow YAML whose every listed value is a
// marker, with mistakes sprinkled in.
func badPolicyText(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString("{rules: [")
	for i := range 1 + r.IntN(4) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("{reject: ")
		b.WriteString([]string{"anyIn", "notAllAreUsed", "bogus", "[x]"}[r.IntN(4)])
		b.WriteString(", environmentVariables: [")
		v := markerValue(r)
		for j := range 1 + r.IntN(4) {
			if j > 0 {
				b.WriteString(", ")
			}
			name := []string{"A", "A", "B", "1X", "[N]", "bad-name"}[r.IntN(6)]
			switch r.IntN(6) {
			case 0:
				fmt.Fprintf(&b, "{name: %s, value: [%s]}", name, v)
			case 1:
				fmt.Fprintf(&b, "{name: %s, value: {k: %s}}", name, v)
			case 2:
				fmt.Fprintf(&b, "{name: %s, value: %s, extra: 1}", name, v)
			case 3:
				fmt.Fprintf(&b, "{value: %s}", v)
			default:
				fmt.Fprintf(&b, "{name: %s, value: %s}", name, v)
			}
		}
		b.WriteString("]")
		if r.IntN(3) == 0 {
			b.WriteString(", namespaces: [Bad]")
		}
		b.WriteString("}")
	}
	b.WriteString("]}")
	return b.String()
}

func TestNoValidationProblemContainsAValue(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 0))
	var withProblems, broken int
	for i := 0; i < 3000; i++ {
		text := badPolicyText(r)
		if r.IntN(4) == 0 {
			// A cut text exercises the parser's own errors.
			text = text[:r.IntN(len(text))]
			broken++
		}
		_, problems := parseVariable(text)
		var doc = parseForFuzz(text)
		_, docProblems := ParseDocument(doc, "envPolicy")
		if problems != nil {
			withProblems++
		}
		for _, p := range append(problems, docProblems...) {
			if strings.Contains(p, marker) {
				t.Fatalf("a value leaked from %s:\n%s", text, p)
			}
		}
	}
	if withProblems < 2000 || broken < 500 {
		t.Errorf("weak generator: %d with problems, %d cut", withProblems, broken)
	}
}
