package plan

import (
	"slices"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// agentRowValues are the changes to everyDefaultKnob (dflt) and
// everyNamedKnob (named) a row's argument needs to show: an argument sent
// only for a value those maps do not hold, or one its pair's other half
// stands in for ("" deletes a knob).
var agentRowValues = map[string]struct{ dflt, named map[string]string }{
	"revoke-on-shutdown": {dflt: map[string]string{"revoke-on-shutdown": "false"}}, // --no-revoke-on-shutdown
	"template":           {dflt: map[string]string{"template-configmap": "", "template": "{{ .x }}"}},
	"endpoint":           {named: map[string]string{"endpoint-secret": "", "endpoint": "https://git.local"}},
}

// TestEveryAgentRowIsExercised holds the registry's agent sides to the plan:
// every row with an Agent sends its flag, with the knobs that feed the
// arguments set (everyDefaultKnob, everyNamedKnob), to exactly the agents
// its Kinds and Scope name — the default render's for every row, a named
// render's for a row of scope each. A new agent row fails here until those
// maps (or agentRowValues) give it a value.
func TestEveryAgentRowIsExercised(t *testing.T) {
	agents := []struct {
		name  string
		kind  registry.AgentKinds
		named bool
	}{
		{"dynamic-config-agent", registry.AgentWatching, false},
		{"dynamic-config-init", registry.AgentInit, false},
		{"dynamic-config-agent-cache", registry.AgentWatching, true},
		{"dynamic-config-init-cache", registry.AgentInit, true},
	}
	rows := 0
	for _, id := range registry.All {
		r := id.Row()
		if r.Agent == nil {
			continue
		}
		rows++
		t.Run(r.Name, func(t *testing.T) {
			extra := agentRowValues[r.Name]
			dflt, named := with(everyDefaultKnob, extra.dflt), with(everyNamedKnob, extra.named)
			if _, ok := dflt[r.Name]; !ok {
				t.Fatalf("everyDefaultKnob holds no %s: give it a value that sends %s", r.Name, r.Agent.Flag)
			}
			if _, ok := named[r.Name]; !ok && r.Scope == registry.ScopeEach {
				t.Fatalf("everyNamedKnob holds no %s: give it a value that sends %s", r.Name, r.Agent.Flag)
			}
			in := input(dflt, Render{Name: "cache", Values: values(named)})
			in.Default.Values.Set(registry.Mode, "both")
			in.Named[0].Values.Set(registry.Mode, "both")
			p := Build(in)
			for _, a := range agents {
				want := r.Agent.Kinds&a.kind != 0 && (!a.named || r.Scope == registry.ScopeEach)
				if got := slices.Contains(agent(t, p, a.name).Args, r.Agent.Flag); got != want {
					t.Errorf("%s sends %s: %v, want %v (kinds %d, scope %s)", a.name, r.Agent.Flag, got, want, r.Agent.Kinds, r.Scope)
				}
			}
		})
	}
	if rows == 0 {
		t.Fatal("no registry row has an agent side")
	}
}
