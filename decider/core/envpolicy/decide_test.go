package envpolicy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

var operators = []string{RejectAnyIn, RejectAllAreUsed, RejectAnyNotIn, RejectNotAllAreUsed}

// TestTruthTableNameOnly is spec 05 §4.1: L = [a, b], every cell, every
// operator, with the entries spread over every container kind, for a Pod and
// for a workload.
func TestTruthTableNameOnly(t *testing.T) {
	rows := []struct {
		name string
		env  []decision.EnvVar
		// admitted per operator: anyIn, allAreUsed, anyNotIn, notAllAreUsed
		admitted [4]bool
		matched  []string
	}{
		{"no env at all", nil, [4]bool{true, true, false, true}, nil},
		{"only a", []decision.EnvVar{lit("a", "1")}, [4]bool{false, true, true, false}, []string{"a"}},
		{"only b", []decision.EnvVar{lit("b", "1")}, [4]bool{false, true, true, false}, []string{"b"}},
		{"a and b", []decision.EnvVar{lit("a", "1"), lit("b", "2")}, [4]bool{false, false, true, true}, []string{"a", "b"}},
		{"a and c", []decision.EnvVar{lit("a", "1"), lit("c", "3")}, [4]bool{false, true, true, false}, []string{"a"}},
		{"only c", []decision.EnvVar{lit("c", "3")}, [4]bool{true, true, false, true}, nil},
	}
	for _, kind := range []decision.ResourceKind{decision.KindPod, decision.KindDeployment} {
		for oi, op := range operators {
			for _, row := range rows {
				for offset := range containerKinds {
					name := KindName(kind) + " " + op + " with " + row.name + " starting in " + containerKinds[offset]
					t.Run(name, func(t *testing.T) {
						p := oneRule(Rule{Reject: op, Variables: names("a", "b"), Mode: ModeEnforce})
						d := Decide(p, testRevision, spread(kind, "team-a", offset, row.env...))
						checkShape(t, d, p)
						want := decision.OutcomeRefuse
						if row.admitted[oi] {
							want = decision.OutcomeAllow
						}
						if d.Outcome != want {
							t.Fatalf("got %s, want admitted=%v", mark(d), row.admitted[oi])
						}
						res := d.EnvPolicyResults[0]
						if !res.Applies || !res.Evaluated || res.Failed == row.admitted[oi] {
							t.Errorf("result %+v", res)
						}
						if !reflect.DeepEqual(res.MatchedNames, row.matched) {
							t.Errorf("matched names %q, want %q", res.MatchedNames, row.matched)
						}
						if len(res.MatchedNames)+len(res.MissingNames) != 2 {
							t.Errorf("matched %q + missing %q do not cover L", res.MatchedNames, res.MissingNames)
						}
					})
				}
			}
		}
	}
}

// TestTruthTableValued is spec 05 §4.2: L = [LOG_LEVEL=debug, TRACE], every
// row, for every operator (the same matching feeds every operator).
func TestTruthTableValued(t *testing.T) {
	listed := []Variable{{Name: "LOG_LEVEL", Value: "debug", HasValue: true}, {Name: "TRACE"}}
	rows := []struct {
		name     string
		env      []decision.EnvVar
		matched  []string
		admitted [4]bool // anyIn, allAreUsed, anyNotIn, notAllAreUsed
	}{
		{"LOG_LEVEL=info", []decision.EnvVar{lit("LOG_LEVEL", "info")}, nil, [4]bool{true, true, false, true}},
		{"LOG_LEVEL=debug", []decision.EnvVar{lit("LOG_LEVEL", "debug")}, []string{"LOG_LEVEL"}, [4]bool{false, true, true, false}},
		{"LOG_LEVEL from a Secret", []decision.EnvVar{from("LOG_LEVEL")}, nil, [4]bool{true, true, false, true}},
		{"TRACE from a ConfigMap", []decision.EnvVar{from("TRACE")}, []string{"TRACE"}, [4]bool{false, true, true, false}},
		{"TRACE set to the empty string", []decision.EnvVar{lit("TRACE", "")}, []string{"TRACE"}, [4]bool{false, true, true, false}},
		{"only envFrom (no env entries)", nil, nil, [4]bool{true, true, false, true}},
		{"LOG_LEVEL=debug and TRACE from a ConfigMap", []decision.EnvVar{lit("LOG_LEVEL", "debug"), from("TRACE")}, []string{"LOG_LEVEL", "TRACE"}, [4]bool{false, false, true, true}},
		{"LOG_LEVEL=DEBUG (values compare exactly)", []decision.EnvVar{lit("LOG_LEVEL", "DEBUG")}, nil, [4]bool{true, true, false, true}},
		{"log_level=debug (names compare case-sensitively)", []decision.EnvVar{lit("log_level", "debug")}, nil, [4]bool{true, true, false, true}},
		{"LOG_LEVEL=info in one container and debug in another", []decision.EnvVar{lit("LOG_LEVEL", "info"), lit("LOG_LEVEL", "debug")}, []string{"LOG_LEVEL"}, [4]bool{false, true, true, false}},
		{"LOG_LEVEL=debug with a trailing space", []decision.EnvVar{lit("LOG_LEVEL", "debug ")}, nil, [4]bool{true, true, false, true}},
	}
	for oi, op := range operators {
		for _, row := range rows {
			for offset := range containerKinds {
				t.Run(op+" with "+row.name+" starting in "+containerKinds[offset], func(t *testing.T) {
					p := oneRule(Rule{Reject: op, Variables: listed, Mode: ModeEnforce})
					d := Decide(p, testRevision, spread(decision.KindPod, "default", offset, row.env...))
					checkShape(t, d, p)
					if got := d.Outcome == decision.OutcomeAllow; got != row.admitted[oi] || (!got && d.Outcome != decision.OutcomeRefuse) {
						t.Fatalf("got %s, want admitted=%v", mark(d), row.admitted[oi])
					}
					if !reflect.DeepEqual(d.EnvPolicyResults[0].MatchedNames, row.matched) {
						t.Errorf("matched names %q, want %q", d.EnvPolicyResults[0].MatchedNames, row.matched)
					}
				})
			}
		}
	}
}

func TestPodsWithoutUsableEnv(t *testing.T) {
	p := oneRule(Rule{Reject: RejectAnyIn, Variables: names("A")})
	required := oneRule(Rule{Reject: RejectAnyNotIn, Variables: names("A")})
	cases := []struct {
		name string
		f    *decision.Facts
		// admitted under anyIn [A]; anyNotIn [A] decides the opposite
		admitted bool
	}{
		{"a pod without containers has an empty R", &decision.Facts{ResourceKind: decision.KindPod}, true},
		{"a pod whose containers have no env has an empty R", spread(decision.KindPod, "default", 0), true},
		{"a pod whose containers only use envFrom has an empty R", spread(decision.KindPod, "default", 0), true},
		{"a pod with A only from valueFrom sets A", spread(decision.KindPod, "default", 0, from("A")), false},
		{"a pod with A only from valueFrom in an init container sets A", spread(decision.KindPod, "default", 1, from("A")), false},
		{"a pod with A only from valueFrom in an ephemeral container sets A", spread(decision.KindPod, "default", 2, from("A")), false},
		{"a pod with A set without a value sets A", spread(decision.KindPod, "default", 0, lit("A", "")), false},
		{"a pod with a as lowercase does not set A", spread(decision.KindPod, "default", 0, lit("a", "x")), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Decide(p, testRevision, c.f).Outcome == decision.OutcomeAllow; got != c.admitted {
				t.Errorf("anyIn: admitted = %v", got)
			}
			if got := Decide(required, testRevision, c.f).Outcome == decision.OutcomeAllow; got == c.admitted {
				t.Errorf("anyNotIn: admitted = %v", got)
			}
		})
	}
}

func TestRefusalMessages(t *testing.T) {
	cases := []struct {
		name  string
		rule  Rule
		index int
		kind  decision.ResourceKind
		ns    string
		env   []decision.EnvVar
		want  string
	}{
		{
			name: "anyIn names the matched variable (spec example)",
			rule: Rule{Reject: RejectAnyIn, Variables: names("HTTPS_PROXY", "NO_PROXY")},
			kind: decision.KindDeployment, ns: "payments",
			env:  []decision.EnvVar{lit("HTTPS_PROXY", "http://proxy:3128")},
			want: `envPolicy.rules[0] (anyIn) rejects this Deployment in namespace "payments": it sets HTTPS_PROXY, which this rule forbids`,
		},
		{
			name: "notAllAreUsed names matched and missing, a valued one marked (spec example)",
			rule: Rule{Reject: RejectNotAllAreUsed, Variables: []Variable{{Name: "DB_USER"}, {Name: "DB_PASSWORD", Value: "hunter2", HasValue: true}}},
			kind: decision.KindPod, ns: "team-a", index: 2,
			env:  []decision.EnvVar{lit("DB_USER", "admin")},
			want: `envPolicy.rules[2] (notAllAreUsed) rejects this Pod in namespace "team-a": it sets DB_USER but not DB_PASSWORD (with the listed value); set all of them or none`,
		},
		{
			name: "anyIn lists every matched variable in list order, not R's order",
			rule: Rule{Reject: RejectAnyIn, Variables: names("A", "B", "C")},
			kind: decision.KindStatefulSet, ns: "x",
			env:  []decision.EnvVar{lit("C", "1"), lit("A", "2")},
			want: `envPolicy.rules[0] (anyIn) rejects this StatefulSet in namespace "x": it sets A, C, which this rule forbids`,
		},
		{
			name: "anyIn shows a valued listing without its value",
			rule: Rule{Reject: RejectAnyIn, Variables: []Variable{{Name: "LOG_LEVEL", Value: "debug", HasValue: true}}},
			kind: decision.KindDaemonSet, ns: "ops",
			env:  []decision.EnvVar{lit("LOG_LEVEL", "debug")},
			want: `envPolicy.rules[0] (anyIn) rejects this DaemonSet in namespace "ops": it sets LOG_LEVEL (with the listed value), which this rule forbids`,
		},
		{
			name: "allAreUsed names every listed variable",
			rule: Rule{Reject: RejectAllAreUsed, Variables: names("A", "B")},
			kind: decision.KindReplicaSet, ns: "r",
			env:  []decision.EnvVar{lit("B", "1"), lit("A", "2")},
			want: `envPolicy.rules[0] (allAreUsed) rejects this ReplicaSet in namespace "r": it sets all of A, B together, which this rule forbids`,
		},
		{
			name: "anyNotIn names every listed variable",
			rule: Rule{Reject: RejectAnyNotIn, Variables: []Variable{{Name: "A"}, {Name: "B", Value: "on", HasValue: true}}},
			kind: decision.KindJob, ns: "batch",
			env:  []decision.EnvVar{lit("B", "off")},
			want: `envPolicy.rules[0] (anyNotIn) rejects this Job in namespace "batch": it sets none of A, B (with the listed value); at least one of them is required`,
		},
		{
			name: "names listed twice with different values are shown once",
			rule: Rule{Reject: RejectAnyNotIn, Variables: []Variable{{Name: "MODE", Value: "a", HasValue: true}, {Name: "MODE", Value: "b", HasValue: true}, {Name: "OTHER"}}},
			kind: decision.KindCronJob, ns: "c",
			want: `envPolicy.rules[0] (anyNotIn) rejects this CronJob in namespace "c": it sets none of MODE (with the listed value), OTHER; at least one of them is required`,
		},
		{
			name: "a ReplicationController is named by its kind",
			rule: Rule{Reject: RejectAnyIn, Variables: names("A")},
			kind: decision.KindReplicationController, ns: "legacy",
			env:  []decision.EnvVar{from("A")},
			want: `envPolicy.rules[0] (anyIn) rejects this ReplicationController in namespace "legacy": it sets A, which this rule forbids`,
		},
		{
			name: "a namespace with unusual characters is quoted with Go escapes",
			rule: Rule{Reject: RejectAnyIn, Variables: names("A")},
			kind: decision.KindPod, ns: "",
			env:  []decision.EnvVar{lit("A", "1")},
			want: `envPolicy.rules[0] (anyIn) rejects this Pod in namespace "": it sets A, which this rule forbids`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &Policy{}
			for i := 0; i < c.index; i++ {
				p.Rules = append(p.Rules, Rule{Reject: RejectAnyIn, Variables: names("NEVER_SET")})
			}
			p.Rules = append(p.Rules, c.rule)
			d := Decide(p, testRevision, spread(c.kind, c.ns, 1, c.env...))
			checkShape(t, d, p)
			if d.Outcome != decision.OutcomeRefuse {
				t.Fatalf("got %s", mark(d))
			}
			want := decision.Refusal{
				Reason: decision.ReasonEnvPolicy, Slug: "DynamicConfigEnvPolicy", HTTPCode: 403,
				Message: c.want, Check: "env-policy.rule", Key: "envPolicy.rules[" + string(rune('0'+c.index)) + "]",
			}
			if !reflect.DeepEqual(d.Refusals[0], want) {
				t.Errorf("refusal\n got %+v\nwant %+v", d.Refusals[0], want)
			}
			if len(d.Warnings) != 0 || len(d.AuditAnnotations) != 1 {
				t.Errorf("warnings %v, audit annotations %v", d.Warnings, d.AuditAnnotations)
			}
		})
	}
}

func TestModes(t *testing.T) {
	env := []decision.EnvVar{lit("A", "1"), lit("B", "2")}
	t.Run("warn and audit findings before an enforce refusal are returned with it", func(t *testing.T) {
		p := &Policy{Rules: []Rule{
			{Reject: RejectAnyIn, Variables: names("A"), Mode: ModeWarn},
			{Reject: RejectAnyIn, Variables: names("NOT_SET"), Mode: ModeEnforce},
			{Reject: RejectAllAreUsed, Variables: names("A", "B"), Mode: ModeAudit},
			{Reject: RejectAnyIn, Variables: names("B"), Mode: ModeEnforce},
			{Reject: RejectAnyIn, Variables: names("A"), Mode: ModeWarn},
			{Reject: RejectAnyIn, Variables: names("A"), Mode: ModeEnforce},
		}}
		d := Decide(p, testRevision, spread(decision.KindPod, "team-a", 0, env...))
		checkShape(t, d, p)
		if d.Outcome != decision.OutcomeRefuse {
			t.Fatalf("got %s", mark(d))
		}
		if d.Refusals[0].Key != "envPolicy.rules[3]" || d.Refusals[0].Message != `envPolicy.rules[3] (anyIn) rejects this Pod in namespace "team-a": it sets B, which this rule forbids` {
			t.Errorf("refusal %+v", d.Refusals[0])
		}
		wantWarnings := []decision.Warning{{Code: "env-policy-warn",
			Message: `envPolicy.rules[0] (anyIn, warn) would reject this Pod in namespace "team-a": it sets A, which this rule forbids`}}
		if !reflect.DeepEqual(d.Warnings, wantWarnings) {
			t.Errorf("warnings %+v", d.Warnings)
		}
		wantAudit := map[string]string{"revision": testRevision,
			"env-policy-rule-2": "would reject: it sets all of A, B together, which this rule forbids"}
		if !reflect.DeepEqual(d.AuditAnnotations, wantAudit) {
			t.Errorf("audit annotations %v", d.AuditAnnotations)
		}
		wantResults := []decision.EnvPolicyRuleResult{
			{Index: 0, Reject: "anyIn", Mode: "warn", Applies: true, Failed: true, MatchedNames: []string{"A"}, Evaluated: true},
			{Index: 1, Reject: "anyIn", Mode: "enforce", Applies: true, MissingNames: []string{"NOT_SET"}, Evaluated: true},
			{Index: 2, Reject: "allAreUsed", Mode: "audit", Applies: true, Failed: true, MatchedNames: []string{"A", "B"}, Evaluated: true},
			{Index: 3, Reject: "anyIn", Mode: "enforce", Applies: true, Failed: true, MatchedNames: []string{"B"}, Evaluated: true},
			{Index: 4, Reject: "anyIn", Mode: "warn"},
			{Index: 5, Reject: "anyIn", Mode: "enforce"},
		}
		if !reflect.DeepEqual(d.EnvPolicyResults, wantResults) {
			t.Errorf("results\n got %+v\nwant %+v", d.EnvPolicyResults, wantResults)
		}
	})
	t.Run("warn and audit failures alone allow with every finding", func(t *testing.T) {
		p := &Policy{Rules: []Rule{
			{Reject: RejectAnyIn, Variables: names("A"), Mode: ModeAudit},
			{Reject: RejectAnyIn, Variables: names("B"), Mode: ModeWarn},
			{Reject: RejectAnyNotIn, Variables: names("C"), Mode: ModeWarn},
			{Reject: RejectAnyNotIn, Variables: names("C", "D"), Mode: ModeAudit},
		}}
		d := Decide(p, testRevision, spread(decision.KindJob, "batch", 2, env...))
		checkShape(t, d, p)
		if d.Outcome != decision.OutcomeAllow {
			t.Fatalf("got %s", mark(d))
		}
		wantWarnings := []decision.Warning{
			{Code: "env-policy-warn", Message: `envPolicy.rules[1] (anyIn, warn) would reject this Job in namespace "batch": it sets B, which this rule forbids`},
			{Code: "env-policy-warn", Message: `envPolicy.rules[2] (anyNotIn, warn) would reject this Job in namespace "batch": it sets none of C; at least one of them is required`},
		}
		if !reflect.DeepEqual(d.Warnings, wantWarnings) {
			t.Errorf("warnings %+v", d.Warnings)
		}
		wantAudit := map[string]string{"revision": testRevision,
			"env-policy-rule-0": "would reject: it sets A, which this rule forbids",
			"env-policy-rule-3": "would reject: it sets none of C, D; at least one of them is required"}
		if !reflect.DeepEqual(d.AuditAnnotations, wantAudit) {
			t.Errorf("audit annotations %v", d.AuditAnnotations)
		}
	})
	t.Run("a passing rule in any mode says nothing", func(t *testing.T) {
		for _, mode := range []string{ModeEnforce, ModeWarn, ModeAudit, ""} {
			p := oneRule(Rule{Reject: RejectAnyIn, Variables: names("Z"), Mode: mode})
			d := Decide(p, testRevision, spread(decision.KindPod, "default", 0, env...))
			if d.Outcome != decision.OutcomeAllow || len(d.Warnings) != 0 || len(d.AuditAnnotations) != 1 || d.EnvPolicyResults[0].Failed {
				t.Errorf("mode %q: %s %+v", mode, mark(d), d)
			}
		}
	})
	t.Run("a rule without reject and mode is anyIn and enforce", func(t *testing.T) {
		p := &Policy{Rules: []Rule{{Variables: names("A")}}}
		d := Decide(p, testRevision, spread(decision.KindPod, "default", 0, env...))
		if d.Outcome != decision.OutcomeRefuse || d.EnvPolicyResults[0].Reject != "anyIn" || d.EnvPolicyResults[0].Mode != "enforce" {
			t.Errorf("%s %+v", mark(d), d.EnvPolicyResults)
		}
	})
}

func TestNamespaces(t *testing.T) {
	cases := []struct {
		name       string
		namespaces []string
		ns         string
		applies    bool
	}{
		{"a rule without namespaces applies everywhere", nil, "anything", true},
		{"a rule listing the namespace applies there", []string{"payments"}, "payments", true},
		{"a rule listing another namespace does not apply", []string{"payments"}, "team-a", false},
		{"a rule listing several namespaces applies in each", []string{"a", "team-a", "b"}, "team-a", true},
		{"a rule listing star applies everywhere", []string{"*"}, "team-a", true},
		{"star among namespaces applies everywhere", []string{"payments", "*"}, "kube-public", true},
		{"a namespace compares exactly", []string{"team"}, "team-a", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oneRule(Rule{Reject: RejectAnyIn, Variables: names("A"), Namespaces: c.namespaces})
			d := Decide(p, testRevision, spread(decision.KindPod, c.ns, 0, lit("A", "1")))
			checkShape(t, d, p)
			if got := d.Outcome == decision.OutcomeRefuse; got != c.applies {
				t.Errorf("refused = %v", got)
			}
			res := d.EnvPolicyResults[0]
			if res.Applies != c.applies || !res.Evaluated {
				t.Errorf("result %+v", res)
			}
			if !c.applies && (res.Failed || res.MatchedNames != nil || res.MissingNames != nil) {
				t.Errorf("a rule that does not apply reports findings: %+v", res)
			}
		})
	}
}

func TestTargetsAndSkips(t *testing.T) {
	allKinds := []decision.ResourceKind{decision.KindPod, decision.KindDeployment, decision.KindStatefulSet,
		decision.KindDaemonSet, decision.KindReplicaSet, decision.KindReplicationController, decision.KindJob, decision.KindCronJob}
	rule := Rule{Reject: RejectAnyIn, Variables: names("A")}
	t.Run("no policy skips with NO_POLICY and still carries the revision", func(t *testing.T) {
		d := Decide(nil, testRevision, spread(decision.KindPod, "default", 0, lit("A", "1")))
		checkShape(t, d, nil)
		if d.Outcome != decision.OutcomeSkip || d.SkipReason != decision.SkipNoPolicy || d.EnvPolicyResults != nil || len(d.AuditAnnotations) != 1 {
			t.Errorf("%+v", d)
		}
	})
	for _, k := range allKinds {
		target, _ := Target(k)
		other := TargetPods
		if target == TargetPods {
			other = TargetWorkloads
		}
		t.Run("a "+KindName(k)+" is judged under targets "+target, func(t *testing.T) {
			p := &Policy{Targets: []string{target}, Rules: []Rule{rule}}
			d := Decide(p, testRevision, spread(k, "default", 0, lit("A", "1")))
			checkShape(t, d, p)
			if d.Outcome != decision.OutcomeRefuse || !strings.Contains(d.Refusals[0].Message, "this "+KindName(k)+" in") {
				t.Errorf("%s %+v", mark(d), d.Refusals)
			}
		})
		t.Run("a "+KindName(k)+" is judged under the default targets", func(t *testing.T) {
			p := &Policy{Rules: []Rule{rule}}
			if d := Decide(p, testRevision, spread(k, "default", 0, lit("A", "1"))); d.Outcome != decision.OutcomeRefuse {
				t.Errorf("got %s", mark(d))
			}
		})
		t.Run("a "+KindName(k)+" is skipped under targets "+other+" only", func(t *testing.T) {
			p := &Policy{Targets: []string{other}, Rules: []Rule{rule, rule}}
			f := spread(k, "default", 0, lit("A", "1"))
			f.WorkloadAnnotationKeys = []string{"dynamic-config.rs/inject"}
			d := Decide(p, testRevision, f)
			checkShape(t, d, p)
			if d.Outcome != decision.OutcomeSkip || d.SkipReason != decision.SkipNotTargeted || len(d.Warnings) != 0 {
				t.Errorf("%+v", d)
			}
			for _, r := range d.EnvPolicyResults {
				if r.Applies || r.Failed || !r.Evaluated {
					t.Errorf("result %+v", r)
				}
			}
		})
	}
	t.Run("an unspecified kind is not targeted", func(t *testing.T) {
		p := &Policy{Rules: []Rule{rule}}
		d := Decide(p, testRevision, spread(decision.KindUnspecified, "default", 0, lit("A", "1")))
		if d.Outcome != decision.OutcomeSkip || d.SkipReason != decision.SkipNotTargeted {
			t.Errorf("%+v", d)
		}
		if d := Decide(p, testRevision, spread(decision.ResourceKind(99), "default", 0)); d.SkipReason != decision.SkipNotTargeted {
			t.Errorf("%+v", d)
		}
	})
	t.Run("nil facts are an unspecified kind", func(t *testing.T) {
		if d := Decide(&Policy{Rules: []Rule{rule}}, testRevision, nil); d.SkipReason != decision.SkipNotTargeted {
			t.Errorf("%+v", d)
		}
	})
}

func TestWorkloadAnnotationWarning(t *testing.T) {
	const text = "dynamic-config.rs annotations on a Deployment do nothing: the injection reads the pod, so put them under spec.template.metadata.annotations"
	keys := []string{"dynamic-config.rs/inject", "dynamic-config.rs/source"}
	warnRule := Rule{Reject: RejectAnyIn, Variables: names("A"), Mode: ModeWarn}
	cases := []struct {
		name    string
		kind    decision.ResourceKind
		targets []string
		keys    []string
		rules   []Rule
		want    []decision.Warning
		outcome decision.Outcome
	}{
		{"a Deployment with its own prefixed annotations is warned", decision.KindDeployment, nil, keys, nil,
			[]decision.Warning{{Code: "workload-annotations", Message: text}}, decision.OutcomeAllow},
		{"a CronJob is warned with its kind", decision.KindCronJob, []string{TargetWorkloads}, keys[:1], nil,
			[]decision.Warning{{Code: "workload-annotations", Message: strings.Replace(text, "Deployment", "CronJob", 1)}}, decision.OutcomeAllow},
		{"the warning follows the env-policy warnings", decision.KindDeployment, nil, keys, []Rule{warnRule},
			[]decision.Warning{
				{Code: "env-policy-warn", Message: `envPolicy.rules[0] (anyIn, warn) would reject this Deployment in namespace "default": it sets A, which this rule forbids`},
				{Code: "workload-annotations", Message: text}}, decision.OutcomeAllow},
		{"the warning rides along with a refusal", decision.KindDeployment, nil, keys, []Rule{{Variables: names("A")}},
			[]decision.Warning{{Code: "workload-annotations", Message: text}}, decision.OutcomeRefuse},
		{"a Deployment without prefixed annotations is not warned", decision.KindDeployment, nil, nil, nil, nil, decision.OutcomeAllow},
		{"keys without the prefix do not count", decision.KindDeployment, nil, []string{"example.com/inject"}, nil, nil, decision.OutcomeAllow},
		{"a Pod is never warned about workload annotations", decision.KindPod, nil, keys, nil, nil, decision.OutcomeAllow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules := c.rules
			if rules == nil {
				rules = []Rule{{Variables: names("NEVER_SET")}}
			}
			p := &Policy{Targets: c.targets, Rules: rules}
			f := spread(c.kind, "default", 0, lit("A", "1"))
			f.WorkloadAnnotationKeys = c.keys
			d := Decide(p, testRevision, f)
			checkShape(t, d, p)
			if d.Outcome != c.outcome || !reflect.DeepEqual(d.Warnings, c.want) {
				t.Errorf("got %s %+v, want %+v", mark(d), d.Warnings, c.want)
			}
		})
	}
}

// TestSeedExamples are the four examples of seed 004, as settings text.
func TestSeedExamples(t *testing.T) {
	cases := []struct {
		name     string
		settings string
		env      []decision.EnvVar
		admitted bool
	}{
		{"anyIn denies a resource with at least one of the variables", seedAnyIn, []decision.EnvVar{lit("envvar2", "x")}, false},
		{"anyIn admits a resource with neither variable", seedAnyIn, []decision.EnvVar{lit("envvar3", "x")}, true},
		{"anyIn with values denies a listed value", seedAnyInValued, []decision.EnvVar{lit("envvar1", "envvar1_value")}, false},
		{"anyIn with values admits another value", seedAnyInValued, []decision.EnvVar{lit("envvar1", "other")}, true},
		{"allAreUsed with one name-only variable denies it", seedAllAreUsed, []decision.EnvVar{lit("envvar2", "")}, false},
		{"allAreUsed with one variable admits its absence", seedAllAreUsed, nil, true},
		{"anyNotIn admits envvar3", seedAnyNotIn, []decision.EnvVar{lit("envvar3", "x")}, true},
		{"anyNotIn admits envvar2 with the listed value", seedAnyNotIn, []decision.EnvVar{lit("envvar2", "envvar2_value")}, true},
		{"anyNotIn denies envvar2 with another value", seedAnyNotIn, []decision.EnvVar{lit("envvar2", "other")}, false},
		{"anyNotIn denies a resource with neither", seedAnyNotIn, nil, false},
		{"notAllAreUsed admits both", seedNotAllAreUsed, []decision.EnvVar{lit("envvar3", "envvar3_value"), lit("envvar4", "envvar4_value")}, true},
		{"notAllAreUsed admits neither", seedNotAllAreUsed, nil, true},
		{"notAllAreUsed denies only one of them", seedNotAllAreUsed, []decision.EnvVar{lit("envvar4", "envvar4_value")}, false},
		{"notAllAreUsed denies one of them with the other's value wrong", seedNotAllAreUsed, []decision.EnvVar{lit("envvar3", "envvar3_value"), lit("envvar4", "x")}, false},
	}
	for _, c := range cases {
		for offset := range containerKinds {
			t.Run(c.name+" starting in "+containerKinds[offset], func(t *testing.T) {
				p, problems := parseVariable(c.settings)
				if problems != nil {
					t.Fatalf("problems: %q", problems)
				}
				d := Decide(p, testRevision, spread(decision.KindDeployment, "default", offset, c.env...))
				checkShape(t, d, p)
				if got := d.Outcome == decision.OutcomeAllow; got != c.admitted {
					t.Errorf("got %s, want admitted=%v (%+v)", mark(d), c.admitted, d.Refusals)
				}
			})
		}
	}
}

const (
	seedAnyIn = `rules:
  - reject: anyIn
    environmentVariables:
      - name: "envvar1"
      - name: "envvar2"
`
	seedAnyInValued = `rules:
  - reject: anyIn
    environmentVariables:
      - name: "envvar1"
        value: "envvar1_value"
      - name: "envvar2"
        value: "envvar2_value"
`
	seedAllAreUsed = `rules:
  - reject: allAreUsed
    environmentVariables:
      - name: "envvar2"
        value: ""
`
	seedAnyNotIn = `rules:
  - reject: anyNotIn
    environmentVariables:
      - name: "envvar2"
        value: "envvar2_value"
      - name: "envvar3"
`
	seedNotAllAreUsed = `rules:
  - reject: notAllAreUsed
    environmentVariables:
      - name: "envvar3"
        value: "envvar3_value"
      - name: "envvar4"
        value: "envvar4_value"
`
)

func TestInjectedAgentEnvCounts(t *testing.T) {
	// Pods are judged as admitted: the agent's env is part of R (05 §6).
	p := oneRule(Rule{Reject: RejectAnyIn, Variables: names("HTTPS_PROXY")})
	f := spread(decision.KindPod, "default", 0)
	f.Containers = append(f.Containers, decision.Container{Name: "dynamic-config-agent",
		Env: []decision.EnvVar{from("DYNAMIC_CONFIG_POD_NAME"), lit("HTTPS_PROXY", "http://proxy:3128")}})
	d := Decide(p, testRevision, f)
	if d.Outcome != decision.OutcomeRefuse {
		t.Fatalf("got %s", mark(d))
	}
}

func TestDecideIsDeterministic(t *testing.T) {
	p := &Policy{Rules: []Rule{
		{Reject: RejectAnyIn, Variables: names("A"), Mode: ModeAudit},
		{Reject: RejectAnyIn, Variables: names("B"), Mode: ModeWarn},
		{Reject: RejectNotAllAreUsed, Variables: names("A", "C")},
	}}
	f := spread(decision.KindPod, "default", 0, lit("A", "1"), lit("B", "2"))
	first := Decide(p, testRevision, f)
	for i := 0; i < 20; i++ {
		if again := Decide(p, testRevision, f); !reflect.DeepEqual(first, again) {
			t.Fatalf("decision %d differs:\n%+v\n%+v", i, first, again)
		}
	}
}

func TestManyListedVariables(t *testing.T) {
	// More listed entries than the on-stack match buffer holds.
	var listed []Variable
	for i := 0; i < 100; i++ {
		listed = append(listed, Variable{Name: "V" + strings.Repeat("X", i)})
	}
	p := oneRule(Rule{Reject: RejectNotAllAreUsed, Variables: listed})
	d := Decide(p, testRevision, spread(decision.KindPod, "default", 0, lit("VXXX", "1")))
	res := d.EnvPolicyResults[0]
	if d.Outcome != decision.OutcomeRefuse || len(res.MatchedNames) != 1 || len(res.MissingNames) != 99 {
		t.Errorf("%s matched %d missing %d", mark(d), len(res.MatchedNames), len(res.MissingNames))
	}
}

func TestHandBuiltPolicies(t *testing.T) {
	t.Run("an unknown operator never fails", func(t *testing.T) {
		p := oneRule(Rule{Reject: "someIn", Variables: names("A")})
		if d := Decide(p, testRevision, spread(decision.KindPod, "default", 0, lit("A", "1"))); d.Outcome != decision.OutcomeAllow {
			t.Errorf("got %s", mark(d))
		}
	})
	t.Run("a nil policy includes no target", func(t *testing.T) {
		var p *Policy
		if p.Includes(TargetPods) || p.Includes(TargetWorkloads) {
			t.Error("a nil policy targets something")
		}
	})
	t.Run("a listed empty value with HasValue matches any value", func(t *testing.T) {
		p := oneRule(Rule{Variables: []Variable{{Name: "A", HasValue: true}}})
		if d := Decide(p, testRevision, spread(decision.KindPod, "default", 0, from("A"))); d.Outcome != decision.OutcomeRefuse {
			t.Errorf("got %s", mark(d))
		}
	})
}
