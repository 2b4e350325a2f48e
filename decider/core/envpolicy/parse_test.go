package envpolicy

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
)

// problem is one expected problem: the path inside the policy ("" = the
// policy itself) and the text after "{P}: ".
type problem struct{ path, text string }

// asDocument renders expected problems as ParseDocument reports them under
// the document path "envPolicy".
func asDocument(ps []problem) []string {
	var out []string
	for _, p := range ps {
		path := "envPolicy"
		if p.path != "" {
			path += "." + p.path
		}
		out = append(out, path+": "+p.text)
	}
	return out
}

// asVariable renders expected problems as ParseVariable reports them.
func asVariable(ps []problem) []string {
	var out []string
	for _, p := range ps {
		path := "DYNAMIC_CONFIG_ENV_POLICY"
		if p.path != "" {
			path += ": " + p.path
		}
		out = append(out, path+": "+p.text)
	}
	return out
}

func parseDocumentText(t *testing.T, text string) (*Policy, []string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("test document does not parse: %v", err)
	}
	return ParseDocument(docparse.FromYAML(&doc), "envPolicy")
}

const okRule = `{environmentVariables: [{name: A}]}`

// TestValidationMessages covers every message of spec 05 §2.2, under the
// document path and under the variable.
func TestValidationMessages(t *testing.T) {
	cases := []struct {
		name string
		text string
		want []problem
	}{
		{"a list at the top is not a policy", `[pods]`, []problem{{"", "a map with targets and rules; this is a list"}}},
		{"a word at the top is not a policy", `pods`, []problem{{"", "a map with targets and rules; this is a word"}}},
		{"a number at the top is not a policy", `42`, []problem{{"", "a map with targets and rules; this is a number"}}},
		{"a boolean at the top is not a policy", `true`, []problem{{"", "a map with targets and rules; this is a boolean"}}},
		{"an unknown top-level key is named with the ones there are", `{target: [pods], rules: [` + okRule + `]}`,
			[]problem{{"target", `"target" is not an envPolicy setting; the ones there are: targets, rules`}}},
		{"an unknown rule key is named with the ones there are", `{rules: [{modes: warn, environmentVariables: [{name: A}]}]}`,
			[]problem{{"rules[0].modes", `"modes" is not a rule setting; the ones there are: reject, environmentVariables, namespaces, mode`}}},
		{"an unknown variable key is named with the ones there are", `{rules: [{environmentVariables: [{name: A, val: x}]}]}`,
			[]problem{{"rules[0].environmentVariables[0].val", `"val" is not a variable setting; the ones there are: name, value`}}},
		{"targets as a word", `{targets: pods, rules: [` + okRule + `]}`,
			[]problem{{"targets", `a list of "pods" and "workloads"; this is a word`}}},
		{"targets as a map", `{targets: {pods: true}, rules: [` + okRule + `]}`,
			[]problem{{"targets", `a list of "pods" and "workloads"; this is a map`}}},
		{"targets as a number", `{targets: 5, rules: [` + okRule + `]}`,
			[]problem{{"targets", `a list of "pods" and "workloads"; this is a number`}}},
		{"targets empty", `{targets: [], rules: [` + okRule + `]}`,
			[]problem{{"targets", `is empty: drop it to target both, or list "pods" and/or "workloads"`}}},
		{"a target that is not pods or workloads", `{targets: [pods, Workloads, pod], rules: [` + okRule + `]}`,
			[]problem{{"targets[1]", `"Workloads": "pods" or "workloads"`}, {"targets[2]", `"pod": "pods" or "workloads"`}}},
		{"a target that is a number", `{targets: [1], rules: [` + okRule + `]}`,
			[]problem{{"targets[0]", `"1": "pods" or "workloads"`}}},
		{"a target listed twice", `{targets: [workloads, pods, workloads], rules: [` + okRule + `]}`,
			[]problem{{"targets[2]", `"workloads" appears twice`}}},
		{"rules missing", `{targets: [pods]}`, []problem{{"rules", "is required: list at least one rule, or drop envPolicy"}}},
		{"an empty map misses rules", `{}`, []problem{{"rules", "is required: list at least one rule, or drop envPolicy"}}},
		{"rules null is missing", `{rules: null}`, []problem{{"rules", "is required: list at least one rule, or drop envPolicy"}}},
		{"rules as a map", `{rules: {reject: anyIn}}`, []problem{{"rules", "a list of rules; this is a map"}}},
		{"rules as a boolean", `{rules: true}`, []problem{{"rules", "a list of rules; this is a boolean"}}},
		{"rules empty", `{rules: []}`, []problem{{"rules", "is empty: list at least one rule, or drop envPolicy"}}},
		{"a rule that is a word", `{rules: [anyIn]}`,
			[]problem{{"rules[0]", "a rule is a map with reject, environmentVariables, namespaces and mode; this is a word"}}},
		{"a rule that is a list", `{rules: [` + okRule + `, [a]]}`,
			[]problem{{"rules[1]", "a rule is a map with reject, environmentVariables, namespaces and mode; this is a list"}}},
		{"a reject operator spelled with a capital", `{rules: [{reject: AnyIn, environmentVariables: [{name: A}]}]}`,
			[]problem{{"rules[0].reject", `"AnyIn": anyIn, anyNotIn, allAreUsed or notAllAreUsed`}}},
		{"an empty reject operator", `{rules: [{reject: "", environmentVariables: [{name: A}]}]}`,
			[]problem{{"rules[0].reject", `"": anyIn, anyNotIn, allAreUsed or notAllAreUsed`}}},
		{"environmentVariables missing", `{rules: [{reject: anyIn}]}`,
			[]problem{{"rules[0].environmentVariables", "is required and may not be empty"}}},
		{"environmentVariables empty", `{rules: [{environmentVariables: []}]}`,
			[]problem{{"rules[0].environmentVariables", "is required and may not be empty"}}},
		{"environmentVariables null", `{rules: [{environmentVariables: null}]}`,
			[]problem{{"rules[0].environmentVariables", "is required and may not be empty"}}},
		{"a null rule misses environmentVariables", `{rules: [null]}`,
			[]problem{{"rules[0].environmentVariables", "is required and may not be empty"}}},
		{"a variable that is a word", `{rules: [{environmentVariables: [HTTPS_PROXY]}]}`,
			[]problem{{"rules[0].environmentVariables[0]", "a variable is a map with name and an optional value; this is a word"}}},
		{"a variable that is a list", `{rules: [{environmentVariables: [[A]]}]}`,
			[]problem{{"rules[0].environmentVariables[0]", "a variable is a map with name and an optional value; this is a list"}}},
		{"a variable without a name", `{rules: [{environmentVariables: [{value: x}]}]}`,
			[]problem{{"rules[0].environmentVariables[0].name", "is required"}}},
		{"a variable with a null name", `{rules: [{environmentVariables: [{name: null}]}]}`,
			[]problem{{"rules[0].environmentVariables[0].name", "is required"}}},
		{"a null variable has no name", `{rules: [{environmentVariables: [null]}]}`,
			[]problem{{"rules[0].environmentVariables[0].name", "is required"}}},
		{"a name that is not a C identifier", `{rules: [{environmentVariables: [{name: HTTPS-PROXY}, {name: 1ABC}, {name: ""}]}]}`,
			[]problem{
				{"rules[0].environmentVariables[0].name", `"HTTPS-PROXY" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)`},
				{"rules[0].environmentVariables[1].name", `"1ABC" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)`},
				{"rules[0].environmentVariables[2].name", `"" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)`},
			}},
		{"a value that is a list", `{rules: [{environmentVariables: [{name: A, value: [x]}]}]}`,
			[]problem{{"rules[0].environmentVariables[0].value", "a word, a number or a boolean; this is a list"}}},
		{"a value that is a map", `{rules: [{environmentVariables: [{name: A, value: {x: y}}]}]}`,
			[]problem{{"rules[0].environmentVariables[0].value", "a word, a number or a boolean; this is a map"}}},
		{"the same name-only variable twice", `{rules: [{environmentVariables: [{name: A}, {name: B}, {name: A}]}]}`,
			[]problem{{"rules[0].environmentVariables[2]", "A is listed twice"}}},
		{"an empty value is the same as none", `{rules: [{environmentVariables: [{name: A}, {name: A, value: ""}]}]}`,
			[]problem{{"rules[0].environmentVariables[1]", "A is listed twice"}}},
		{"the same valued variable twice", `{rules: [{environmentVariables: [{name: A, value: x}, {name: A, value: x}]}]}`,
			[]problem{{"rules[0].environmentVariables[1]", "A is listed twice"}}},
		{"notAllAreUsed with one variable", `{rules: [{reject: notAllAreUsed, environmentVariables: [{name: A}]}]}`,
			[]problem{{"rules[0].environmentVariables", "notAllAreUsed with one variable can never reject; list two or more"}}},
		{"namespaces as a word", `{rules: [{environmentVariables: [{name: A}], namespaces: payments}]}`,
			[]problem{{"rules[0].namespaces", "a list of namespaces; this is a word"}}},
		{"namespaces empty", `{rules: [{environmentVariables: [{name: A}], namespaces: []}]}`,
			[]problem{{"rules[0].namespaces", "is empty: drop it to apply everywhere"}}},
		{"a namespace that is not a label", `{rules: [{environmentVariables: [{name: A}], namespaces: [Payments, "*", team_a, -x, ""]}]}`,
			[]problem{
				{"rules[0].namespaces[0]", `"Payments" is not a namespace (lowercase RFC 1123) or "*"`},
				{"rules[0].namespaces[2]", `"team_a" is not a namespace (lowercase RFC 1123) or "*"`},
				{"rules[0].namespaces[3]", `"-x" is not a namespace (lowercase RFC 1123) or "*"`},
				{"rules[0].namespaces[4]", `"" is not a namespace (lowercase RFC 1123) or "*"`},
			}},
		{"a namespace longer than 63 characters", `{rules: [{environmentVariables: [{name: A}], namespaces: [` + strings.Repeat("a", 64) + `]}]}`,
			[]problem{{"rules[0].namespaces[0]", `"` + strings.Repeat("a", 64) + `" is not a namespace (lowercase RFC 1123) or "*"`}}},
		{"a mode spelled with a capital", `{rules: [{environmentVariables: [{name: A}], mode: Enforce}]}`,
			[]problem{{"rules[0].mode", `"Enforce": enforce, warn or audit`}}},
		{"a mode that is a number", `{rules: [{environmentVariables: [{name: A}], mode: 1}]}`,
			[]problem{{"rules[0].mode", `"1": enforce, warn or audit`}}},

		// Decisions where the spec has no text.
		{"a key written twice is reported", `{rules: [` + okRule + `], rules: []}`,
			[]problem{{"rules", `"rules" appears twice`}}},
		{"environmentVariables as a map", `{rules: [{environmentVariables: {name: A}}]}`,
			[]problem{{"rules[0].environmentVariables", "a list of variables, each a map with name and an optional value; this is a map"}}},
		{"a target that is a list", `{targets: [[pods]], rules: [` + okRule + `]}`,
			[]problem{{"targets[0]", `"pods" or "workloads"; this is a list`}}},
		{"a namespace that is a map", `{rules: [{environmentVariables: [{name: A}], namespaces: [{a: b}]}]}`,
			[]problem{{"rules[0].namespaces[0]", `a namespace (lowercase RFC 1123) or "*"; this is a map`}}},
		{"a reject that is a list", `{rules: [{reject: [anyIn], environmentVariables: [{name: A}]}]}`,
			[]problem{{"rules[0].reject", "anyIn, anyNotIn, allAreUsed or notAllAreUsed; this is a list"}}},
		{"a mode that is a map", `{rules: [{environmentVariables: [{name: A}], mode: {x: 1}}]}`,
			[]problem{{"rules[0].mode", "enforce, warn or audit; this is a map"}}},
		{"a name that is a list", `{rules: [{environmentVariables: [{name: [A]}]}]}`,
			[]problem{{"rules[0].environmentVariables[0].name", "a C identifier ([A-Za-z_][A-Za-z0-9_]*); this is a list"}}},

		{"a null target reads as an empty word", `{targets: [null], rules: [` + okRule + `]}`,
			[]problem{{"targets[0]", `"": "pods" or "workloads"`}}},
		{"a null namespace reads as an empty word", `{rules: [{environmentVariables: [{name: A}], namespaces: [~]}]}`,
			[]problem{{"rules[0].namespaces[0]", `"" is not a namespace (lowercase RFC 1123) or "*"`}}},
		{"several problems are all reported, in document order",
			`{targets: [pods, pods], rules: [{reject: none, environmentVariables: [], mode: loud}, {environmentVariables: [{name: "1X", value: [a]}, {nom: B}], namespaces: [UPPER]}], extra: 1}`,
			[]problem{
				{"targets[1]", `"pods" appears twice`},
				{"rules[0].reject", `"none": anyIn, anyNotIn, allAreUsed or notAllAreUsed`},
				{"rules[0].environmentVariables", "is required and may not be empty"},
				{"rules[0].mode", `"loud": enforce, warn or audit`},
				{"rules[1].environmentVariables[0].name", `"1X" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)`},
				{"rules[1].environmentVariables[0].value", "a word, a number or a boolean; this is a list"},
				{"rules[1].environmentVariables[1].nom", `"nom" is not a variable setting; the ones there are: name, value`},
				{"rules[1].environmentVariables[1].name", "is required"},
				{"rules[1].namespaces[0]", `"UPPER" is not a namespace (lowercase RFC 1123) or "*"`},
				{"extra", `"extra" is not an envPolicy setting; the ones there are: targets, rules`},
			}},
		{"a rule with an unknown key and a missing list reports both",
			`{rules: [{rejects: anyIn}]}`,
			[]problem{
				{"rules[0].rejects", `"rejects" is not a rule setting; the ones there are: reject, environmentVariables, namespaces, mode`},
				{"rules[0].environmentVariables", "is required and may not be empty"},
			}},
	}
	for _, c := range cases {
		t.Run(c.name+" (document)", func(t *testing.T) {
			p, got := parseDocumentText(t, c.text)
			if want := asDocument(c.want); !reflect.DeepEqual(got, want) {
				t.Errorf("problems\n got %q\nwant %q", got, want)
			}
			if p != nil {
				t.Errorf("a policy with problems was returned: %+v", p)
			}
		})
		t.Run(c.name+" (variable)", func(t *testing.T) {
			p, got := parseVariable(c.text)
			if want := asVariable(c.want); !reflect.DeepEqual(got, want) {
				t.Errorf("problems\n got %q\nwant %q", got, want)
			}
			if p != nil {
				t.Errorf("a policy with problems was returned: %+v", p)
			}
		})
	}
}

// TestValidationMessagesLiterally pins both path renderings character for
// character, independent of the helpers above.
func TestValidationMessagesLiterally(t *testing.T) {
	const text = `{targets: [pod], rules: [{reject: anyin, environmentVariables: [{name: A}]}]}`
	_, doc := parseDocumentText(t, text)
	wantDoc := []string{
		`envPolicy.targets[0]: "pod": "pods" or "workloads"`,
		`envPolicy.rules[0].reject: "anyin": anyIn, anyNotIn, allAreUsed or notAllAreUsed`,
	}
	if !reflect.DeepEqual(doc, wantDoc) {
		t.Errorf("document\n got %q\nwant %q", doc, wantDoc)
	}
	_, v := parseVariable(text)
	wantVar := []string{
		`DYNAMIC_CONFIG_ENV_POLICY: targets[0]: "pod": "pods" or "workloads"`,
		`DYNAMIC_CONFIG_ENV_POLICY: rules[0].reject: "anyin": anyIn, anyNotIn, allAreUsed or notAllAreUsed`,
	}
	if !reflect.DeepEqual(v, wantVar) {
		t.Errorf("variable\n got %q\nwant %q", v, wantVar)
	}
	_, top := parseVariable(`[1]`)
	if want := []string{"DYNAMIC_CONFIG_ENV_POLICY: a map with targets and rules; this is a list"}; !reflect.DeepEqual(top, want) {
		t.Errorf("variable top level\n got %q\nwant %q", top, want)
	}
	_, unknown := parseVariable(`{rules: [{environmentVariables: [{name: A}]}], mode: warn}`)
	if want := []string{`DYNAMIC_CONFIG_ENV_POLICY: mode: "mode" is not an envPolicy setting; the ones there are: targets, rules`}; !reflect.DeepEqual(unknown, want) {
		t.Errorf("variable unknown key\n got %q\nwant %q", unknown, want)
	}
}

func TestVariableNotParseable(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"an unclosed YAML list", "rules: [", "DYNAMIC_CONFIG_ENV_POLICY: not YAML or JSON: line 1: did not find expected node content"},
		{"broken JSON", `{"rules": [}`, "DYNAMIC_CONFIG_ENV_POLICY: not YAML or JSON: did not find expected node content"},
		{"a tab indentation", "rules:\n\t- x", "DYNAMIC_CONFIG_ENV_POLICY: not YAML or JSON: line 2: found character that cannot start any token"},
		{"two YAML documents", "rules: []\n---\nrules: []", "DYNAMIC_CONFIG_ENV_POLICY: not YAML or JSON: more than one document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, got := parseVariable(c.text)
			if p != nil || !reflect.DeepEqual(got, []string{c.want}) {
				t.Errorf("got %v %q, want %q", p, got, c.want)
			}
		})
	}
}

func TestParseAcceptsValidPolicies(t *testing.T) {
	full := &Policy{
		Targets: []string{TargetWorkloads},
		Rules: []Rule{
			{Reject: RejectAnyIn, Mode: ModeEnforce, Variables: []Variable{{Name: "HTTPS_PROXY"}, {Name: "LOG_LEVEL", Value: "debug", HasValue: true}}, Namespaces: []string{"payments", "*"}},
			{Reject: RejectNotAllAreUsed, Mode: ModeAudit, Variables: []Variable{{Name: "A", Value: "8080", HasValue: true}, {Name: "B", Value: "true", HasValue: true}, {Name: "C", Value: "0640", HasValue: true}, {Name: "D", Value: "1.50", HasValue: true}}},
			{Reject: RejectAnyIn, Mode: ModeEnforce, Variables: []Variable{{Name: "E"}, {Name: "E", Value: "x", HasValue: true}}},
		},
	}
	cases := []struct {
		name string
		text string
		want *Policy
	}{
		{"the spec's shape in YAML, with numbers and booleans as literal text", `
targets: [workloads]
rules:
  - reject: anyIn
    environmentVariables:
      - name: HTTPS_PROXY
      - name: LOG_LEVEL
        value: debug
    namespaces: [payments, "*"]
    mode: enforce
  - reject: notAllAreUsed
    mode: audit
    environmentVariables:
      - {name: A, value: 8080}
      - {name: B, value: true}
      - {name: C, value: 0640}
      - {name: D, value: 1.50}
  - environmentVariables: [{name: E, value: null}, {name: E, value: x}]
`, full},
		{"the same in JSON", `{"targets":["workloads"],"rules":[
 {"reject":"anyIn","environmentVariables":[{"name":"HTTPS_PROXY"},{"name":"LOG_LEVEL","value":"debug"}],"namespaces":["payments","*"],"mode":"enforce"},
 {"reject":"notAllAreUsed","mode":"audit","environmentVariables":[{"name":"A","value":8080},{"name":"B","value":true},{"name":"C","value":0640},{"name":"D","value":1.50}]},
 {"environmentVariables":[{"name":"E","value":null},{"name":"E","value":"x"}]}]}`, full},
		{"defaults filled", `rules: [{environmentVariables: [{name: A}]}]`,
			&Policy{Targets: []string{"pods", "workloads"}, Rules: []Rule{{Reject: "anyIn", Mode: "enforce", Variables: []Variable{{Name: "A"}}}}}},
		{"null fields are absent", `{targets: null, rules: [{reject: null, mode: null, namespaces: null, environmentVariables: [{name: A, value: null}]}]}`,
			&Policy{Targets: []string{"pods", "workloads"}, Rules: []Rule{{Reject: "anyIn", Mode: "enforce", Variables: []Variable{{Name: "A"}}}}}},
		{"an empty listed value is any value", `rules: [{environmentVariables: [{name: A, value: ""}]}]`,
			&Policy{Targets: []string{"pods", "workloads"}, Rules: []Rule{{Reject: "anyIn", Mode: "enforce", Variables: []Variable{{Name: "A"}}}}}},
		{"a listed value keeps its whitespace", `rules: [{environmentVariables: [{name: A, value: " x "}]}]`,
			&Policy{Targets: []string{"pods", "workloads"}, Rules: []Rule{{Reject: "anyIn", Mode: "enforce", Variables: []Variable{{Name: "A", Value: " x ", HasValue: true}}}}}},
		{"a quoted null is a literal value", `rules: [{environmentVariables: [{name: A, value: "null"}, {name: B, value: "~"}]}]`,
			&Policy{Targets: []string{"pods", "workloads"}, Rules: []Rule{{Reject: "anyIn", Mode: "enforce", Variables: []Variable{{Name: "A", Value: "null", HasValue: true}, {Name: "B", Value: "~", HasValue: true}}}}}},
		{"aliases are followed", "rules:\n  - &r {environmentVariables: [{name: A}]}\n  - *r\n",
			&Policy{Targets: []string{"pods", "workloads"}, Rules: []Rule{
				{Reject: "anyIn", Mode: "enforce", Variables: []Variable{{Name: "A"}}},
				{Reject: "anyIn", Mode: "enforce", Variables: []Variable{{Name: "A"}}}}}},
		{"targets keep their written order", `{targets: [workloads, pods], rules: [{reject: allAreUsed, environmentVariables: [{name: a}]}]}`,
			&Policy{Targets: []string{"workloads", "pods"}, Rules: []Rule{{Reject: "allAreUsed", Mode: "enforce", Variables: []Variable{{Name: "a"}}}}}},
	}
	for _, c := range cases {
		t.Run(c.name+" (variable)", func(t *testing.T) {
			got, problems := parseVariable(c.text)
			if problems != nil {
				t.Fatalf("problems: %q", problems)
			}
			want := *c.want
			want.Source, want.Origin = "environment", "DYNAMIC_CONFIG_ENV_POLICY"
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("\n got %+v\nwant %+v", got, &want)
			}
		})
		t.Run(c.name+" (document)", func(t *testing.T) {
			got, problems := parseDocumentText(t, c.text)
			if problems != nil {
				t.Fatalf("problems: %q", problems)
			}
			want := *c.want
			want.Source, want.Origin = "document", "envPolicy"
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("\n got %+v\nwant %+v", got, &want)
			}
		})
	}
}

func TestNoPolicy(t *testing.T) {
	for _, text := range []string{"", "  \n\t", "null", "~"} {
		if p, problems := parseVariable(text); p != nil || problems != nil {
			t.Errorf("parseVariable(%q) = %+v, %q; want no policy", text, p, problems)
		}
	}
	if p, problems := ParseDocument(nil, "envPolicy"); p != nil || problems != nil {
		t.Errorf("ParseDocument(nil) = %+v, %q", p, problems)
	}
	null := &doctree.Node{Kind: doctree.Scalar, Tag: "!!null", Value: "null"}
	if p, problems := ParseDocument(null, "envPolicy"); p != nil || problems != nil {
		t.Errorf("ParseDocument(null) = %+v, %q", p, problems)
	}
}

func TestAliasBombIsBounded(t *testing.T) {
	// 1000 rules of 1000 variables from a text of a few kilobytes: without a
	// bound the walk visits a million entries and reports as many problems.
	var b strings.Builder
	b.WriteString("x-v: &v {name: A, value: [a]}\n")
	b.WriteString("x-vs: &vs [" + strings.Repeat("*v,", 999) + "*v]\n")
	b.WriteString("x-r: &r {environmentVariables: *vs}\n")
	b.WriteString("rules: [" + strings.Repeat("*r,", 999) + "*r]\n")
	_, problems := parseVariable(b.String())
	last := problems[len(problems)-1]
	if !strings.HasPrefix(last, "DYNAMIC_CONFIG_ENV_POLICY: rules[") || !strings.HasSuffix(last, "].environmentVariables: too large: more than 100000 entries once aliases are expanded") {
		t.Errorf("last problem %q of %d", last, len(problems))
	}
	if len(problems) > 100010 {
		t.Errorf("%d problems", len(problems))
	}
}
