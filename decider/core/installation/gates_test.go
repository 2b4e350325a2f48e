package installation

import (
	"reflect"
	"strings"
	"testing"
)

func TestGateGrammarAcceptedForms(t *testing.T) {
	tests := []struct {
		name   string
		gate   string
		text   string
		groups []GateGroup
	}{
		{"a headless group applies to every namespace", "sourceAllow", "consul",
			[]GateGroup{{"*", []string{"consul"}}}},
		{"the seed's allowlist", "agentEnvAllow", "payments: HTTPS_PROXY, AWS_*; *: RUST_LOG",
			[]GateGroup{{"payments", []string{"HTTPS_PROXY", "AWS_*"}}, {"*", []string{"RUST_LOG"}}}},
		{"a bare star opens everything", "agentEnvAllow", "*", []GateGroup{{"*", []string{"*"}}}},
		{"empty groups and names are skipped", "sourceDeny", " ; sandbox: git,, ;", []GateGroup{{"sandbox", []string{"git"}}}},
		{"groups of one namespace add up in order", "sourceAllow", "a: vault; b: s3; a: consul",
			[]GateGroup{{"a", []string{"vault"}}, {"b", []string{"s3"}}, {"a", []string{"consul"}}}},
		{"a prefix glob with digits", "agentEnvAllow", "ns-1: AWS_2*, _X", []GateGroup{{"ns-1", []string{"AWS_2*", "_X"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			groups, problems := ParseGate(tt.gate, "CTX", tt.text)
			if len(problems) > 0 {
				t.Fatalf("unexpected problems %q", problems)
			}
			if !reflect.DeepEqual(groups, tt.groups) {
				t.Errorf("got %+v, want %+v", groups, tt.groups)
			}
		})
	}
}

func TestGateGrammarRefusals(t *testing.T) {
	tests := []struct {
		name string
		gate string
		text string
		want []string
	}{
		{"a value that names no group, agentEnvAllow", "agentEnvAllow", ";", []string{"CTX: names nothing; leave it empty to allow no agent-env name"}},
		{"a value that names no group, sourceAllow", "sourceAllow", " , ", []string{"CTX: names nothing; leave it empty to allow every store"}},
		{"a value that names no group, sourceDeny", "sourceDeny", ";;", []string{"CTX: names nothing; leave it empty to deny no store"}},
		{"a namespace that is not a label", "sourceDeny", "Sandbox: git", []string{`CTX: "Sandbox" is not a namespace (lowercase RFC 1123) or "*"`}},
		{"an empty head is not a namespace", "sourceDeny", ": git", []string{`CTX: "" is not a namespace (lowercase RFC 1123) or "*"`}},
		{"a head with no names", "sourceDeny", "sandbox: ,", []string{`CTX: the group for "sandbox" names nothing`}},
		{"a typo in a store fails instead of gating nothing", "sourceDeny", "sandbox: got", []string{`CTX: "got" is not a store this contract knows`}},
		{"store names are case-sensitive", "sourceAllow", "VAULT", []string{`CTX: "VAULT" is not a store this contract knows`}},
		{"store names take no prefix glob", "sourceAllow", "va*", []string{`CTX: "va*" is not a store this contract knows`}},
		{"a lower-case variable name", "agentEnvAllow", "rust_log", []string{`CTX: "rust_log" is not a variable name (UPPER_SNAKE, an optional trailing "*")`}},
		{"a star inside a name", "agentEnvAllow", "A*B", []string{`CTX: "A*B" is not a variable name (UPPER_SNAKE, an optional trailing "*")`}},
		{"a name starting with a digit", "agentEnvAllow", "1A", []string{`CTX: "1A" is not a variable name (UPPER_SNAKE, an optional trailing "*")`}},
		{"every bad namespace, group and name is reported", "sourceDeny", "Bad: got, VAULT; ok: ; x_y: git",
			[]string{
				`CTX: "Bad" is not a namespace (lowercase RFC 1123) or "*"`,
				`CTX: "got" is not a store this contract knows`,
				`CTX: "VAULT" is not a store this contract knows`,
				`CTX: the group for "ok" names nothing`,
				`CTX: "x_y" is not a namespace (lowercase RFC 1123) or "*"`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := ParseGate(tt.gate, "CTX", tt.text)
			if !reflect.DeepEqual(problems, tt.want) {
				t.Errorf("got  %q\nwant %q", problems, tt.want)
			}
		})
	}
}

func TestGateDocumentForms(t *testing.T) {
	t.Run("the string and the map form give one revision", func(t *testing.T) {
		env := mustLoad(t, "", "DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW=payments: HTTPS_PROXY, AWS_*; *: RUST_LOG")
		for _, doc := range []string{
			"agentEnvAllow: \"payments: HTTPS_PROXY, AWS_*; *: RUST_LOG\"\n",
			"agentEnvAllow:\n  payments: [HTTPS_PROXY, \"AWS_*\"]\n  \"*\": RUST_LOG\n",
			"agentEnvAllow:\n  payments: \"HTTPS_PROXY, AWS_*\"\n  \"*\": [RUST_LOG]\n",
		} {
			if inst := mustLoad(t, doc); inst.Revision != env.Revision {
				t.Errorf("%q: %s\n%s", doc, inst.Canonical, env.Canonical)
			}
		}
	})
	t.Run("the map form keeps the document's key order", func(t *testing.T) {
		inst := mustLoad(t, "sourceAllow:\n  team-b: [s3]\n  \"*\": consul\n  team-a: [vault]\n")
		want := []GateGroup{{"team-b", []string{"s3"}}, {"*", []string{"consul"}}, {"team-a", []string{"vault"}}}
		if !reflect.DeepEqual(inst.SourceAllow.Groups, want) {
			t.Errorf("got %+v", inst.SourceAllow.Groups)
		}
	})
	t.Run("a blank group is unset, a null group is refused, an empty list names nothing", func(t *testing.T) {
		if inst := mustLoad(t, "sourceDeny:\n  sandbox: \"\"\n"); inst.SourceDeny.Set() {
			t.Errorf("got %+v", inst.SourceDeny)
		}
		assertLines(t, problemLines(t, "sourceDeny:\n  dev: null\n"),
			[]string{"sourceDeny.dev: is empty (null); write [] or remove the key"})
		assertLines(t, problemLines(t, "sourceDeny:\n  sandbox: []\n"),
			[]string{`sourceDeny.sandbox [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: the group for "sandbox" names nothing`})
	})
	t.Run("wrong kinds and bad entries name their document path", func(t *testing.T) {
		assertLines(t, problemLines(t, "sourceDeny:\n  sandbox: {git: true}\n  Team: [git]\n  dev: [got]\nsourceAllow: [consul]\n"),
			[]string{
				"sourceAllow: a map of namespace to names, or that grammar as one string; this is a list",
				"sourceDeny.sandbox: a list of names, or one comma-separated string; this is a map",
				`sourceDeny.Team [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: "Team" is not a namespace (lowercase RFC 1123) or "*"`,
				`sourceDeny.dev [DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY]: "got" is not a store this contract knows`,
			})
	})
}

func TestGateMatchingAndListing(t *testing.T) {
	g := Gate{Groups: []GateGroup{
		{"payments", []string{"HTTPS_PROXY", "AWS_*"}},
		{"*", []string{"RUST_LOG"}},
		{"payments", []string{"RUST_LOG", "NO_PROXY"}},
	}}
	tests := []struct {
		name    string
		ns, env string
		match   bool
	}{
		{"an exact name matches in its namespace", "payments", "HTTPS_PROXY", true},
		{"a prefix glob matches", "payments", "AWS_REGION", true},
		{"a headless group applies everywhere", "default", "RUST_LOG", true},
		{"another namespace's names do not apply", "default", "HTTPS_PROXY", false},
		{"a glob is a prefix, not a substring", "payments", "MY_AWS_X", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.Matches(tt.ns, tt.env); got != tt.match {
				t.Errorf("Matches(%q, %q) = %v", tt.ns, tt.env, got)
			}
		})
	}
	t.Run("the listing keeps declaration order and the first occurrence", func(t *testing.T) {
		if got := strings.Join(g.Listing("payments"), ", "); got != "HTTPS_PROXY, AWS_*, RUST_LOG, NO_PROXY" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("the listing never names another namespace's entries", func(t *testing.T) {
		if got := strings.Join(g.Listing("default"), ", "); got != "RUST_LOG" {
			t.Errorf("got %q", got)
		}
	})
}
