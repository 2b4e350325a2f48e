package envpolicy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

var fuzzSeeds = []string{
	seedAnyIn, seedAnyInValued, seedAllAreUsed, seedAnyNotIn, seedNotAllAreUsed,
	`{"targets":["pods"],"rules":[{"reject":"anyNotIn","environmentVariables":[{"name":"A","value":1}],"namespaces":["*"],"mode":"warn"}]}`,
	`{targets: [pods, pods], rules: [{reject: x, environmentVariables: [{name: 1}, {name: A, value: [b]}], mode: y, namespaces: []}], z: 1}`,
	"rules:\n  - &r {environmentVariables: [{name: A}]}\n  - *r\n",
	"rules: [",
	"[]",
	"\"a\\nb\": 1",
	"",
}

// parseForFuzz decodes text as the installation loader hands a node over;
// nil when the text is not YAML.
func parseForFuzz(text string) *doctree.Node {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		return nil
	}
	return docparse.FromYAML(&n)
}

// checkParsed asserts what holds for every parse: a policy or problems,
// never both; every problem one line under its prefix; a policy's canonical
// form is JSON and itself a valid policy; deciding never panics.
func checkParsed(t *testing.T, p *Policy, problems []string, prefix string) {
	t.Helper()
	if p != nil && problems != nil {
		t.Fatalf("both a policy and problems: %q", problems)
	}
	for _, line := range problems {
		if !strings.HasPrefix(line, prefix) || strings.ContainsAny(line, "\n\r") {
			t.Fatalf("problem %q", line)
		}
	}
	if p == nil {
		return
	}
	if len(p.Rules) == 0 || len(p.Targets) == 0 {
		t.Fatalf("an accepted policy without rules or targets: %+v", p)
	}
	c := Canonical(p)
	if !json.Valid(c) {
		t.Fatalf("canonical form is not JSON: %s", c)
	}
	if _, again := parseVariable(string(c)); again != nil {
		t.Fatalf("canonical form %s does not parse: %q", c, again)
	}
	for k := decision.KindPod; k <= decision.KindCronJob; k++ {
		f := spread(k, "default", int(k)%3, lit("A", "1"), from("B"), lit("envvar2", ""))
		d := Decide(p, testRevision, f)
		if d.Outcome != decision.OutcomeAllow && d.Outcome != decision.OutcomeRefuse && d.Outcome != decision.OutcomeSkip {
			t.Fatalf("outcome %d", d.Outcome)
		}
	}
}

func FuzzParseVariable(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, problems := parseVariable(text)
		checkParsed(t, p, problems, "DYNAMIC_CONFIG_ENV_POLICY")
		p2, problems2 := parseVariable(text)
		if !reflect.DeepEqual(p, p2) || !reflect.DeepEqual(problems, problems2) {
			t.Fatalf("two parses differ")
		}
	})
}

func FuzzParseDocument(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		n := parseForFuzz(text)
		if n == nil {
			return
		}
		p, problems := ParseDocument(n, "envPolicy")
		checkParsed(t, p, problems, "envPolicy")
	})
}

func TestOddKeysStayOnOneLine(t *testing.T) {
	_, problems := parseVariable("{\"a\\nb\": 1, rules: [{environmentVariables: [{name: A}]}]}")
	want := []string{`DYNAMIC_CONFIG_ENV_POLICY: "a\nb": "a\nb" is not an envPolicy setting; the ones there are: targets, rules`}
	if !reflect.DeepEqual(problems, want) {
		t.Errorf("got %q", problems)
	}
}
