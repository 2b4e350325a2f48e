package resolve

import (
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/plan"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// overrideRules maps the installation's override rung to the decision's.
var overrideRules = map[installation.OverrideRule]decision.OverrideRule{
	installation.OverrideNotApplicable: decision.OverrideNotApplicable,
	installation.OverrideMarker:        decision.OverrideMarker,
	installation.OverrideStoreFlag:     decision.OverrideStoreFlag,
	installation.OverrideFleetFlag:     decision.OverrideFleetFlag,
}

// output is Decision.renders: the default render first (every registry key),
// then the named renders sorted (their per-render keys), values in registry
// order including unset ones. validated=false keeps the raw tier lookups.
func (s *state) output(validated bool) []decision.Render {
	out := make([]decision.Render, 0, 1+len(s.named))
	out = append(out, s.renderOutput(&s.def, registry.All, validated))
	for _, r := range s.named {
		out = append(out, s.renderOutput(r, registry.PerRender, validated))
	}
	return out
}

func (s *state) renderOutput(r *render, keys []registry.ID, validated bool) decision.Render {
	out := decision.Render{Name: r.name, Source: redact.URL(r.source), Validated: validated}
	if s.withValues {
		out.Values = make([]decision.ResolvedValue, len(keys))
		for j, i := range keys {
			out.Values[j] = s.provenance(r, i, validated)
		}
	}
	return out
}

// provenance is one knob's ResolvedValue: value, tier, pin, override rung,
// annotation key, variable, document path, store and note.
func (s *state) provenance(r *render, i registry.ID, validated bool) decision.ResolvedValue {
	v := &r.vals[i]
	text := v.text
	if validated && v.set {
		text = v.p.Text
	}
	rv := decision.ResolvedValue{Knob: rows[i].Name, Value: redact.URL(text), Set: v.set, Tier: v.tier,
		OverrideRule: decision.OverrideNotApplicable, Store: v.store, Note: v.note}
	switch {
	case v.tier == decision.TierAnnotation:
		rv.AnnotationKey = r.ann[i].key
	case v.tier == decision.TierClass:
		rv.Class = r.ann[i].class
	case v.fromInst:
		iv := s.supplier(r, i)
		rv.Pinned = iv.Pinned
		rv.OverrideRule = overrideRules[iv.Rule]
		rv.Variable = iv.Variable
		rv.DocumentPath = iv.DocumentPath
	case i == registry.AgentImage && v.tier == decision.TierBuiltIn && text != installation.BuiltInAgentImage:
		rv.Variable = "DYNAMIC_CONFIG_AGENT_IMAGE"
	}
	return rv
}

// planInput hands the validated, normalised values to the plan builder.
func (s *state) planInput(in *plan.Input) {
	in.Facts = s.f
	in.Installation = s.inst
	s.effective(&in.Default.Values, &s.def, registry.All)
	in.AgentEnv = s.mergedAgentEnv()
	// native-sidecar chosen by the pod or pinned (issue 20)
	in.PlacementExplicit = s.chosen(&s.def, registry.NativeSidecar)
	in.RunAsUserPin = s.pinName(&s.def, registry.AgentRunAsUser)
	in.Default.FileModePin = s.pinName(&s.def, registry.FileMode)
	if len(s.named) > 0 {
		in.Named = make([]plan.Render, len(s.named))
		for j, r := range s.named {
			in.Named[j].Name = r.name
			in.Named[j].FileModePin = s.pinName(r, registry.FileMode)
			s.effective(&in.Named[j].Values, r, registry.PerRender)
		}
	}
	for i := range s.also {
		a := &s.also[i]
		in.Also = append(in.Also, plan.Also{Name: a.name, Path: a.path, Section: a.sec})
	}
}

// pinName names the installation value that pins knob i of render r — its
// document path, else its variable (and store) — or "" when the ladder's
// installation rung does not pin it.
func (s *state) pinName(r *render, i registry.ID) string {
	iv, _, store, ok := s.silent(r, i)
	switch {
	case !ok || !iv.Pinned:
		return ""
	case iv.DocumentPath != "":
		return iv.DocumentPath
	case store != "":
		return iv.Variable + " (" + store + ")"
	}
	return iv.Variable
}

// chosen reports whether knob i's value was chosen for this pod: written by
// the pod (or a class it named), or pinned by the installation.
func (s *state) chosen(r *render, i registry.ID) bool {
	v := &r.vals[i]
	return fromPod(v.tier) || v.fromInst && s.supplier(r, i).Pinned
}

// effective is each knob that resolved, as its grammar parsed it (spec 06
// §3.6: normalised, and a number's number): the plan parses nothing again.
func (s *state) effective(out *registry.Values, r *render, keys []registry.ID) {
	for _, i := range keys {
		if r.vals[i].set {
			out.SetParsed(i, r.vals[i].p)
		}
	}
}

// mergedAgentEnv is the agent environment of spec 02 §8: the fleet entries in
// declaration order, minus the names the pod's agent-env sets and minus the
// AWS names when an aws-secret resolved; then the pod's entries in order.
func (s *state) mergedAgentEnv() []installation.EnvEntry {
	if len(s.inst.AgentEnv) == 0 && len(s.agentEnv) == 0 {
		return nil
	}
	aws := s.def.vals[registry.AWSSecret].set
	out := make([]installation.EnvEntry, 0, len(s.inst.AgentEnv)+len(s.agentEnv))
	for _, e := range s.inst.AgentEnv {
		if podSets(s.agentEnv, e.Name) || aws && slices.Contains(awsEnv, e.Name) {
			continue
		}
		out = append(out, e)
	}
	return append(out, s.agentEnv...)
}

func podSets(entries []installation.EnvEntry, name string) bool {
	for _, e := range entries {
		if e.Name == name {
			return true
		}
	}
	return false
}
