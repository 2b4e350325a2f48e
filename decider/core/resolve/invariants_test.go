package resolve

import (
	"regexp"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

func TestARefusalInOneNamespaceNeverMentionsAnotherNamespacesRules(t *testing.T) {
	inst := load(t, `
sourceAllow: "team-b: git, etcd; *: consul"
sourceDeny: "team-b: redis; team-a: nats"
agentEnvAllow: "team-b: SECRET_B_NAME, OTHER_*; *: RUST_LOG"
`)
	pods := []*decision.Facts{
		in("team-a", storePod("git")),
		in("team-a", storePod("nats")),
		in("team-a", consulPod("agent-env", "SECRET_B_NAME=1")),
		in("team-a", cachePod()),
	}
	for _, pod := range pods {
		d := Decide(inst, nil, pod)
		r := mustRefuse(t, d)
		if !strings.HasPrefix(r.Check, "gate.") && !strings.Contains(r.Message, "the store default") {
			t.Fatalf("refusal %+v", r)
		}
		texts := []string{r.Message}
		for _, g := range d.Gates {
			texts = append(texts, g.Namespace)
			texts = append(texts, g.Listing...)
		}
		for _, text := range texts {
			for _, foreign := range []string{"team-b", "etcd", "OTHER_", `"redis"` + ", and"} {
				if strings.Contains(text, foreign) {
					t.Errorf("%s: %q mentions %q", r.Check, text, foreign)
				}
			}
		}
	}
}

var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// refusalsOfAllCases decides every check case once.
func refusalsOfAllCases(t *testing.T) []decision.Refusal {
	var out []decision.Refusal
	for _, c := range checkCases {
		out = append(out, mustRefuse(t, Decide(load(t, c.doc, c.env...), nil, c.pod)))
	}
	return out
}

func TestAMessageSaysTheInstallationPinsIfAndOnlyIfItIsPinned(t *testing.T) {
	refusals := refusalsOfAllCases(t)
	// quoted user input may carry the phrase in any message
	refusals = append(refusals, mustRefuse(t, Decide(load(t, ""), nil, consulPod("mode", "the installation pins"))))
	for _, r := range refusals {
		template := quoted.ReplaceAllString(r.Message, "{V}")
		says := strings.Contains(template, "the installation pins")
		if says != (r.Slug == SlugPinned) {
			t.Errorf("%s (%s): %q", r.Check, r.Slug, r.Message)
		}
		advised := strings.HasSuffix(r.Message, advice)
		wantAdvice := r.Slug == SlugPinned && r.Render == "" && strings.HasPrefix(r.Check, "pin.") && r.Check != "pin.agent-run-as-same-user"
		if advised != wantAdvice {
			t.Errorf("%s render %q: advice %v, want %v: %q", r.Check, r.Render, advised, wantAdvice, r.Message)
		}
	}
}

func TestEveryMessageFollowsTheStyleRules(t *testing.T) {
	for _, r := range refusalsOfAllCases(t) {
		if strings.HasSuffix(r.Message, ".") {
			t.Errorf("%s ends with a period: %q", r.Check, r.Message)
		}
		if r.Key != "" && !strings.Contains(r.Message, r.Key) && !strings.HasPrefix(r.Check, "gate.") && !strings.Contains(r.Message, "the store default") {
			t.Errorf("%s does not name its key %s: %q", r.Check, r.Key, r.Message)
		}
	}
}

// decisionTexts are the user-visible strings of a decision (the plan, which
// carries the agent's real arguments, is never redacted).
func decisionTexts(d decision.Decision) []string {
	var out []string
	for _, r := range d.Refusals {
		out = append(out, r.Message, r.Key)
	}
	for _, w := range d.Warnings {
		out = append(out, w.Message)
	}
	for _, r := range d.Renders {
		out = append(out, r.Source)
		for _, v := range r.Values {
			out = append(out, v.Value, v.Note)
		}
	}
	for _, g := range d.Gates {
		out = append(out, g.Subject)
		out = append(out, g.Listing...)
	}
	return out
}

func TestURLUserinfoIsRedactedInEveryMessageAndValue(t *testing.T) {
	const secret = "hunter2"
	url := "http://user:" + secret + "@host.example:8500/x"
	inst := load(t, "storeDefaults:\n  consul: \"endpoint=http://svc:"+secret+"@consul:8500!\"\n  redis: \"endpoint=redis://:"+secret+"@redis:6379\"\n")
	var pods []*decision.Facts
	for _, r := range registry.Rows() {
		pods = append(pods, consulPod(r.Name, url))
		if r.PerRender {
			pods = append(pods, cachePod(r.Name+".cache", url))
		}
	}
	pods = append(pods, consulPod("also.x", url), consulPod("also-section.x", url), facts("inject", "true", "source", "redis", "key", "k", "path", "/config/a.json"))
	refused := 0
	for _, pod := range pods {
		d := Decide(inst, nil, pod)
		if d.Outcome == decision.OutcomeRefuse {
			refused++
		}
		for _, text := range decisionTexts(d) {
			if strings.Contains(text, secret) {
				t.Errorf("%v leaks userinfo: %q", pod.Annotations, text)
			}
		}
	}
	if refused < 40 {
		t.Fatalf("only %d of %d pods refused: the test exercises too few messages", refused, len(pods))
	}
}
