package envpolicy

import (
	"encoding/json"
	"strings"
	"testing"
)

// sha256("debug")
const debugHash = "0b8e9e995d8d77f1e4770f0f79665aee6f3f70247b3735422daba73df4c3096f"

func TestCanonical(t *testing.T) {
	cases := []struct {
		name string
		p    *Policy
		want string
	}{
		{
			name: "a full policy is compact, sorted and hashes the listed value",
			p: &Policy{Targets: []string{"workloads", "pods"}, Rules: []Rule{{
				Reject: "anyIn", Mode: "enforce", Namespaces: []string{"payments", "*"},
				Variables: []Variable{{Name: "HTTPS_PROXY"}, {Name: "LOG_LEVEL", Value: "debug", HasValue: true}},
			}}, Source: "document", Origin: "envPolicy"},
			want: `{"rules":[{"environmentVariables":[{"name":"HTTPS_PROXY"},{"name":"LOG_LEVEL","value":"` + debugHash + `"}],"mode":"enforce","namespaces":["payments","*"],"reject":"anyIn"}],"targets":["pods","workloads"]}`,
		},
		{
			name: "defaults are filled for a policy built without them",
			p:    &Policy{Rules: []Rule{{Variables: []Variable{{Name: "A"}}}}},
			want: `{"rules":[{"environmentVariables":[{"name":"A"}],"mode":"enforce","reject":"anyIn"}],"targets":["pods","workloads"]}`,
		},
		{
			name: "an empty listed value is written like an absent one",
			p:    &Policy{Targets: []string{"pods"}, Rules: []Rule{{Reject: "allAreUsed", Mode: "warn", Variables: []Variable{{Name: "A", HasValue: true}}}}},
			want: `{"rules":[{"environmentVariables":[{"name":"A"}],"mode":"warn","reject":"allAreUsed"}],"targets":["pods"]}`,
		},
		{
			name: "nothing is HTML-escaped",
			p:    &Policy{Targets: []string{"pods"}, Rules: []Rule{{Reject: "anyIn", Mode: "audit", Namespaces: []string{"<a&b>"}, Variables: []Variable{{Name: "A"}}}}},
			want: `{"rules":[{"environmentVariables":[{"name":"A"}],"mode":"audit","namespaces":["<a&b>"],"reject":"anyIn"}],"targets":["pods"]}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(Canonical(c.p)); got != c.want {
				t.Errorf("\n got %s\nwant %s", got, c.want)
			}
		})
	}
	t.Run("no policy has no canonical form", func(t *testing.T) {
		if got := Canonical(nil); got != nil {
			t.Errorf("got %s", got)
		}
	})
}

func TestCanonicalIsStable(t *testing.T) {
	texts := []string{
		`{targets: [pods, workloads], rules: [{reject: anyIn, mode: enforce, environmentVariables: [{name: LOG_LEVEL, value: debug}, {name: TRACE}]}]}`,
		"rules:\n  - environmentVariables:\n      - value: debug\n        name: LOG_LEVEL\n      - name: TRACE\n        value: \"\"\n",
		`{"rules":[{"environmentVariables":[{"name":"LOG_LEVEL","value":"debug"},{"name":"TRACE","value":null}],"mode":"enforce"}],"targets":["workloads","pods"]}`,
	}
	var first string
	for i, text := range texts {
		p, problems := parseVariable(text)
		if problems != nil {
			t.Fatalf("text %d: %q", i, problems)
		}
		got := string(Canonical(p))
		d, problems := parseDocumentText(t, text)
		if problems != nil {
			t.Fatalf("text %d as a document: %q", i, problems)
		}
		if doc := string(Canonical(d)); doc != got {
			t.Errorf("text %d: the document gives %s, the variable %s", i, doc, got)
		}
		if i == 0 {
			first = got
			continue
		}
		if got != first {
			t.Errorf("text %d gives\n%s\nnot\n%s", i, got, first)
		}
	}
	if strings.Contains(first, `"debug"`) || !strings.Contains(first, debugHash) {
		t.Errorf("the listed value is not hashed: %s", first)
	}
}

func TestCanonicalDiffersWithContent(t *testing.T) {
	base := `{rules: [{environmentVariables: [{name: A, value: x}]}]}`
	variants := []string{
		`{rules: [{environmentVariables: [{name: A, value: y}]}]}`,
		`{rules: [{environmentVariables: [{name: A}]}]}`,
		`{rules: [{environmentVariables: [{name: B, value: x}]}]}`,
		`{rules: [{mode: warn, environmentVariables: [{name: A, value: x}]}]}`,
		`{rules: [{reject: anyNotIn, environmentVariables: [{name: A, value: x}]}]}`,
		`{rules: [{namespaces: ["*"], environmentVariables: [{name: A, value: x}]}]}`,
		`{targets: [pods], rules: [{environmentVariables: [{name: A, value: x}]}]}`,
		`{rules: [{environmentVariables: [{name: A, value: x}]}, {environmentVariables: [{name: A, value: x}]}]}`,
	}
	bp, _ := parseVariable(base)
	b := string(Canonical(bp))
	for _, v := range variants {
		p, problems := parseVariable(v)
		if problems != nil {
			t.Fatalf("%s: %q", v, problems)
		}
		if string(Canonical(p)) == b {
			t.Errorf("%s has the same canonical form as %s", v, base)
		}
	}
}

func TestCanonicalIsItselfAValidPolicy(t *testing.T) {
	p, _ := parseVariable(`{targets: [workloads], rules: [{reject: notAllAreUsed, mode: audit, namespaces: [a], environmentVariables: [{name: A, value: x}, {name: B}]}]}`)
	c := Canonical(p)
	if !json.Valid(c) {
		t.Fatalf("not JSON: %s", c)
	}
	if _, problems := parseVariable(string(c)); problems != nil {
		t.Errorf("the canonical form does not parse: %q", problems)
	}
}
