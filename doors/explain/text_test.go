package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/doors/webhookscope"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

const explainRevision = "sha256:5d0c8e41a7f2aa0000000000000000000000000000000000000000000000beef"

// The text layout of spec 07 §1.5, from a hand-built decision: the renderer
// alone, independent of what the resolver decides.
func TestExplainTextLayout(t *testing.T) {
	na := deciderv1.OverrideRule_OVERRIDE_RULE_NOT_APPLICABLE
	inject := &deciderv1.DecisionResponse{Decision: &deciderv1.Decision{
		Outcome:              deciderv1.Outcome_OUTCOME_INJECT,
		InstallationRevision: explainRevision,
		Renders: []*deciderv1.Render{{
			Name: "", Source: "consul", Validated: true, AgentContainers: []string{"dynamic-config-agent"},
			Values: []*deciderv1.ResolvedValue{
				{Knob: "source", Value: "consul", Set: true, Tier: deciderv1.Tier_TIER_ANNOTATION, OverrideRule: na, AnnotationKey: "dynamic-config.rs/source"},
				{Knob: "endpoint", Value: "http://…@consul:8500", Set: true, Tier: deciderv1.Tier_TIER_ANNOTATION, OverrideRule: na, AnnotationKey: "dynamic-config.rs/endpoint"},
				{Knob: "watch-seconds", Value: "10", Set: true, Tier: deciderv1.Tier_TIER_STORE_DEFAULT, Variable: "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS", Store: "consul"},
				{Knob: "file-mode", Value: "0640", Set: true, Tier: deciderv1.Tier_TIER_FLEET_DEFAULT, Pinned: true, DocumentPath: "fileMode", Variable: "DYNAMIC_CONFIG_AGENT_FILE_MODE"},
				{Knob: "agent-cpu-limit", Tier: deciderv1.Tier_TIER_NONE, OverrideRule: na},
				{Knob: "template", Value: "a b", Set: true, Tier: deciderv1.Tier_TIER_ANNOTATION, AnnotationKey: "dynamic-config.rs/template"},
				{Knob: "agent-run-as-user", Value: "1000", Set: true, Tier: deciderv1.Tier_TIER_POD_SPEC, Note: "inherited from spec.securityContext.runAsUser"},
			},
		}, {
			Name: "cache", Source: "redis", Validated: true, AgentContainers: []string{"dynamic-config-agent-cache"},
			Values: []*deciderv1.ResolvedValue{
				{Knob: "a-knob-name-longer-than-twenty", Value: "x", Set: true, Tier: deciderv1.Tier_TIER_BUILT_IN},
			},
		}},
		Gates: []*deciderv1.GateRuling{
			{Gate: "sourceDeny", Subject: "consul", Passed: true, Namespace: "default"},
			{Gate: "sourceAllow", Subject: "consul", Passed: true, Namespace: "default", Listing: []string{"consul", "vault"}},
			{Gate: "sourceDeny", Subject: "redis", Render: "cache", Passed: true, Namespace: "default"},
		},
		Plan: &deciderv1.MutationPlan{
			Volumes:   []*deciderv1.Volume{{Name: "dynamic-config"}},
			AppMounts: []*deciderv1.AppMount{{ContainerName: "app"}, {ContainerName: "worker"}},
			Agents: []*deciderv1.AgentPlacement{
				{List: deciderv1.ContainerList_CONTAINER_LIST_CONTAINERS, Container: &deciderv1.AgentContainer{Name: "dynamic-config-agent"}},
				{List: deciderv1.ContainerList_CONTAINER_LIST_INIT_CONTAINERS, Container: &deciderv1.AgentContainer{Name: "dynamic-config-agent-cache", RestartPolicy: "Always"}},
			},
		},
		Warnings: []*deciderv1.Warning{{Code: "watch-seconds-low", Message: "watch-seconds is 2 — every replica polls the store that often; mind the store's load and its bill"}},
	}}
	validate := &deciderv1.DecisionResponse{Decision: &deciderv1.Decision{
		Outcome: deciderv1.Outcome_OUTCOME_ALLOW,
		EnvPolicyResults: []*deciderv1.EnvPolicyRuleResult{
			{Index: 0, Reject: "anyIn", Mode: "enforce", Evaluated: true},
			{Index: 1, Reject: "anyIn", Mode: "warn", Evaluated: true, Applies: true, Failed: true, MatchedNames: []string{"HTTPS_PROXY"}},
			{Index: 2, Reject: "allAreUsed", Mode: "audit", Evaluated: true, Applies: true},
		},
		Warnings: []*deciderv1.Warning{{Code: "env-policy-warn", Message: "policy warning"}},
	}}
	x := &Explanation{
		Kind: "Pod", Namespace: "default",
		Facts:  &deciderv1.PodFacts{Name: "app"},
		Policy: &envpolicy.Policy{Targets: []string{"pods"}},
		Mutate: inject, Validate: validate,
		All: true, // --all: the unset knob (agent-cpu-limit) is shown
	}
	var out bytes.Buffer
	WriteText(&out, x, "installation.yaml")
	want := `pod default/app   outcome: inject   revision: sha256:5d0c8e41a7f2…
render (default)  source consul   agents: dynamic-config-agent
  KNOB                VALUE                   TIER            PIN  FROM
  source              consul                  annotation           dynamic-config.rs/source
  endpoint            http://…@consul:8500    annotation           dynamic-config.rs/endpoint
  watch-seconds       10                      store default        DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (consul)
  file-mode           0640                    fleet default   pin  installation.yaml: fileMode
  agent-cpu-limit     —                       none
  template            "a b"                   annotation           dynamic-config.rs/template
  agent-run-as-user   1000                    pod spec             inherited from spec.securityContext.runAsUser
render "cache"  source redis   agents: dynamic-config-agent-cache
  KNOB                            VALUE                   TIER            PIN  FROM
  a-knob-name-longer-than-twenty  x                       built-in
gates (namespace "default"): sourceDeny passed; sourceAllow passed (allowed here: consul, vault); sourceDeny (render "cache") passed
env policy: rule 0 (anyIn, enforce) does not apply here; rule 1 (anyIn, warn) rejects this pod (matched: HTTPS_PROXY); rule 2 (allAreUsed, audit) passes
plan: 1 volume, mount into app and worker, dynamic-config-agent → containers, dynamic-config-agent-cache → initContainers (native sidecar)
warnings:
  watch-seconds is 2 — every replica polls the store that often; mind the store's load and its bill
  policy warning
`
	if got := out.String(); got != want {
		t.Errorf("text layout differs:\n--- got\n%s--- want\n%s", got, want)
	}

	t.Run("compact by default: the unset knob is hidden and counted, the reach line follows the header", func(t *testing.T) {
		compact := *x
		compact.All = false
		compact.Reach = &webhookscope.Reach{Path: "/mutate", Reached: true}
		var out bytes.Buffer
		WriteText(&out, &compact, "installation.yaml")
		// the full layout but: the reach line, no agent-cpu-limit row, the count
		want := strings.Replace(want, "pod default/app   outcome: inject   revision: sha256:5d0c8e41a7f2…\n",
			"pod default/app   outcome: inject   revision: sha256:5d0c8e41a7f2…\nwebhook /mutate: called\n", 1)
		want = strings.Replace(want, "  agent-cpu-limit     —                       none\n", "", 1)
		want = strings.Replace(want, "inherited from spec.securityContext.runAsUser\n",
			"inherited from spec.securityContext.runAsUser\n  (1 unset knob hidden; --all shows it)\n", 1)
		if got := out.String(); got != want {
			t.Errorf("compact layout differs:\n--- got\n%s--- want\n%s", got, want)
		}
	})

	t.Run("a refusal ends with the refused line and shows unvalidated renders", func(t *testing.T) {
		refused := &Explanation{Kind: "Pod", Namespace: "team-a", Facts: &deciderv1.PodFacts{GenerateName: "web-"},
			Mutate: &deciderv1.DecisionResponse{Decision: &deciderv1.Decision{
				Outcome: deciderv1.Outcome_OUTCOME_REFUSE, InstallationRevision: explainRevision,
				Renders: []*deciderv1.Render{{Source: "consul"}},
				Refusals: []*deciderv1.Refusal{{ReasonSlug: "DynamicConfigMalformed", HttpCode: 400, Check: "watch-seconds.value",
					Message: `dynamic-config.rs/watch-seconds is "x": whole seconds`}},
			}}}
		var out bytes.Buffer
		WriteText(&out, refused, "installation.yaml")
		want := `pod team-a/web-…   outcome: refuse   revision: sha256:5d0c8e41a7f2…
render (default)  source consul   agents: none   (not validated: the values are the raw tier lookups)
  KNOB                VALUE                   TIER            PIN  FROM
gates: none consulted
env policy: none
plan: none
warnings: none
refused (DynamicConfigMalformed 400) at watch-seconds.value: dynamic-config.rs/watch-seconds is "x": whole seconds
`
		if got := out.String(); got != want {
			t.Errorf("refusal layout differs:\n--- got\n%s--- want\n%s", got, want)
		}
	})
}
