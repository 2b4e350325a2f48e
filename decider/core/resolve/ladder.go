package resolve

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// rows is the registry, looked up once.
var rows = registry.Rows()

// pairOf maps each half of an either-or pair to the other half.
var pairOf = func() map[registry.ID]registry.ID {
	m := map[registry.ID]registry.ID{}
	for _, id := range registry.All {
		if p, ok := id.Row().PairOf(); ok {
			m[id] = p
		}
	}
	return m
}()

// noteMuted is the provenance note of a pair half the pod's answer muted.
const noteMuted = "pair answered by the pod: installation halves muted"

// tiersFor is the installation ladder of knob i for render r.
func tiersFor(r *render, i registry.ID) []registry.Tier {
	if r.name == "" {
		return rows[i].Tiers
	}
	return rows[i].NamedTiers
}

// silent returns the installation value the ladder of knob i would supply to
// render r if the pod were silent, or nil: the render store's group, then the
// fleet, as the row's tiers say. The supplying tier also decides the pin.
func (s *state) silent(r *render, i registry.ID) (installation.Value, decision.Tier, string, bool) {
	for _, t := range tiersFor(r, i) {
		switch t {
		case registry.TierStore:
			if g := s.inst.Stores[r.source]; g != nil {
				if v, ok := g.Knobs[rows[i].Name]; ok {
					return v, decision.TierStoreDefault, g.Store, true
				}
			}
		case registry.TierFleet:
			if v, ok := s.inst.Fleet[rows[i].Name]; ok {
				return v, decision.TierFleetDefault, "", true
			}
		}
	}
	return installation.Value{}, decision.TierNone, "", false
}

// resolveRenders resolves the default render, then the named renders.
func (s *state) resolveRenders() {
	s.resolveRender(&s.def)
	for _, r := range s.named {
		s.resolveRender(r)
	}
	s.resolved = true
}

// resolveRender walks every knob's ladder for render r: annotation >
// installation tiers (per-store group of the render's store, fleet) >
// built-in. Either-or pairs resolve as a level: when the pod answers either
// half, both installation halves are muted. The source resolves first: it
// names the store the per-store rung reads.
func (s *state) resolveRender(r *render) {
	r.vals[registry.Source] = s.ladder(r, registry.Source)
	if r.vals[registry.Source].set {
		r.source = r.vals[registry.Source].text
	}
	keys := registry.PerRender
	if r.name == "" {
		keys = registry.All
	}
	for _, i := range keys {
		if i != registry.Source {
			r.vals[i] = s.ladder(r, i)
		}
	}
}

// ladder resolves knob i for render r.
func (s *state) ladder(r *render, i registry.ID) value {
	if a := &r.ann[i]; a.set {
		p, f := r.parse(i)
		if f != nil {
			p = knob.Value{Text: a.value} // refused by its step; never handed over
		}
		if a.class != "" {
			return value{text: a.value, p: p, set: true, tier: decision.TierClass}
		}
		return value{text: a.value, p: p, set: true, tier: decision.TierAnnotation}
	}
	if p, ok := pairOf[i]; ok && r.ann[p].set {
		v := value{tier: decision.TierNone}
		if _, _, _, ok := s.silent(r, i); ok {
			v.note = noteMuted
		}
		return v
	}
	if iv, tier, store, ok := s.silent(r, i); ok {
		return value{text: iv.Text, p: installed(iv), set: true, tier: tier, fromInst: true, store: store}
	}
	if b := s.builtIn(i); b != "" {
		p := i.BuiltInValue()
		if b != rows[i].BuiltIn {
			p = knob.Value{Text: b} // the installation's agent image (a plain string)
		}
		return value{text: b, p: p, set: true, tier: decision.TierBuiltIn}
	}
	return value{tier: decision.TierNone}
}

// installed is an installation value as the loader parsed it (spec 06 §3.6:
// installation values arrive normalised); a value built without the loader
// keeps its text.
func installed(iv installation.Value) knob.Value {
	if iv.Normalised == "" {
		return knob.Value{Text: iv.Text}
	}
	return iv.Parsed()
}

// supplier is the installation value that answered knob i of render r (a
// value with fromInst set): the ladder's installation rung, looked up again.
func (s *state) supplier(r *render, i registry.ID) installation.Value {
	iv, _, _, _ := s.silent(r, i)
	return iv
}

// builtIn is knob i's built-in value; the agent image is the installation's.
func (s *state) builtIn(i registry.ID) string {
	if i == registry.AgentImage {
		if s.inst.AgentImage != "" {
			return s.inst.AgentImage
		}
		return installation.BuiltInAgentImage
	}
	return rows[i].BuiltIn
}

// fromPod reports whether a tier is the pod's own writing: an annotation,
// or a class the pod named (everything after B3 sees a class-filled value as
// if the pod had written it, spec 08 §3 step 6).
func fromPod(t decision.Tier) bool { return t == decision.TierAnnotation || t == decision.TierClass }

// key is the key of knob i for render r: as the pod wrote it, else its spelling.
func key(r *render, i registry.ID) string {
	if r.ann[i].set {
		return r.ann[i].key
	}
	return registry.Full(rows[i].Name, r.name)
}
