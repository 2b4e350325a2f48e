package resolve

import (
	"path"
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// namedSteps are the hand-written checks of spec 01 §4's steps: the rules
// that read more than one key's own grammar. The registry rows place their
// own value checks and pins (Row.Named); a step runs its hand-written check
// first, then its rows' checks in their order.
var namedSteps = map[int]renderCheck{
	1:  renderName,                          // render.name
	2:  renderSource,                        // render.source-required, source.value
	3:  storePins(false),                    // pin.<knob>, store-shaped, path aside
	4:  pairPins,                            // pair-pin.endpoint, pair-pin.template
	7:  allOf(renderEndpoint, endpointBoth), // render.endpoint-required, endpoint.both
	8:  sshSecretAuth,                       // ssh-secret.auth
	9:  tlsSkipVerify,                       // bool.value, tls-skip-verify.*
	11: renderMetricsPort,                   // metrics-port.value, render.metrics-port-taken
	14: templateBoth,                        // template.both
	15: renderKey,                           // render.key-required
	16: renderPath,                          // render.path-required, path.*, render.path-directory
}

// namedChecks are N1–N16 for one named render (spec 01 §4), in order: each
// step's hand-written check, then the value check (and pin) of every row the
// registry places at that step.
var namedChecks = func() []renderCheck {
	type placed struct {
		at registry.Step
		id registry.ID
	}
	var own []placed
	last := 0
	for n := range namedSteps {
		last = max(last, n)
	}
	for _, id := range registry.PerRender {
		if at := id.Row().Named; at.N != 0 {
			own = append(own, placed{at, id})
			last = max(last, at.N)
		}
	}
	slices.SortFunc(own, func(a, b placed) int {
		if a.at.N != b.at.N {
			return a.at.N - b.at.N
		}
		return a.at.Seq - b.at.Seq
	})
	var out []renderCheck
	for n := 1; n <= last; n++ {
		if c, ok := namedSteps[n]; ok {
			out = append(out, c)
		}
		for _, p := range own {
			if p.at.N != n {
				continue
			}
			out = append(out, valueOf(p.id))
			if r := p.id.Row(); !r.StoreShaped && len(r.NamedTiers) > 0 {
				out = append(out, pinOf(p.id))
			}
		}
	}
	return out
}()

// allOf runs render checks in order, the first refusal ending them.
func allOf(checks ...renderCheck) renderCheck {
	return func(s *state, r *render) *decision.Refusal { return runChecks(s, r, checks) }
}

// namedRenders is B53: every named render, sorted, checks N1–N16 each.
func namedRenders(s *state) *decision.Refusal {
	for _, r := range s.named {
		if ref := runChecks(s, r, namedChecks); ref != nil {
			return ref
		}
	}
	return nil
}

// renderName is render.name (N1).
func renderName(s *state, r *render) *decision.Refusal {
	if registry.ValidRenderName(r.name) {
		return nil
	}
	return refuse("render.name", r.firstKey, r.name, "render name "+q(r.name)+" (from "+r.firstKey+
		") must start and end with a letter or digit: it becomes part of container and volume names")
}

// renderSource is render.source-required, then source.value (N2).
func renderSource(s *state, r *render) *decision.Refusal {
	if !r.ann[registry.Source].set {
		return refuse("render.source-required", key(r, registry.Source), r.name, `render "`+r.name+`" exists, so dynamic-config.rs/source.`+r.name+" is required")
	}
	return s.checkValue(r, registry.Source)
}

// renderEndpoint is render.endpoint-required (N7).
func renderEndpoint(s *state, r *render) *decision.Refusal {
	if r.vals[registry.Endpoint].set || r.vals[registry.EndpointSecret].set {
		return nil
	}
	return refuse("render.endpoint-required", key(r, registry.Endpoint), r.name, `render "`+r.name+`" exists, so dynamic-config.rs/endpoint.`+r.name+
		" is required (or dynamic-config.rs/endpoint-secret."+r.name+", or a per-store default endpoint for its store)")
}

// renderKey is render.key-required (N15).
func renderKey(s *state, r *render) *decision.Refusal {
	if r.vals[registry.Key].set {
		return nil
	}
	return refuse("render.key-required", key(r, registry.Key), r.name, `render "`+r.name+`" exists, so dynamic-config.rs/key.`+r.name+
		" is required (or a per-store default key for its store)")
}

// hasWatching reports whether the pod's mode gives it watching agents.
func (s *state) hasWatching() bool { m := s.mode(); return m == "sidecar" || m == "both" }

// portOf is a render's resolved metrics port as a number (0 = none).
func portOf(r *render) uint64 {
	v := &r.vals[registry.MetricsPort]
	if !v.set {
		return 0
	}
	return v.p.Number
}

// renderMetricsPort is metrics-port.value, then render.metrics-port-taken (N11).
func renderMetricsPort(s *state, r *render) *decision.Refusal {
	if ref := s.checkValue(r, registry.MetricsPort); ref != nil {
		return ref
	}
	port := portOf(r)
	if port == 0 || !s.hasWatching() {
		return nil
	}
	taken := portOf(&s.def) == port
	for _, other := range s.named {
		if other == r {
			break
		}
		taken = taken || portOf(other) == port
	}
	if !taken {
		return nil
	}
	a := &r.ann[registry.MetricsPort]
	return refuse("render.metrics-port-taken", a.key, r.name, a.key+" is "+q(a.value)+", a port another agent of this pod already uses: each agent needs its own port")
}

// defaultDir is the resolved default path's directory, "" while the default
// path is unresolved or fails path.shape (the directory rules are skipped).
func (s *state) defaultDir() string {
	p := &s.def.vals[registry.Path]
	if !p.set || !knob.PathShaped(p.text) {
		return ""
	}
	return path.Dir(p.text)
}

// renderPath is N16: render.path-required, path.shape, path.reserved, render.path-directory.
func renderPath(s *state, r *render) *decision.Refusal {
	a := &r.ann[registry.Path]
	if !a.set {
		return refuse("render.path-required", key(r, registry.Path), r.name, `render "`+r.name+`" exists, so dynamic-config.rs/path.`+r.name+" is required")
	}
	if ref := s.checkValue(r, registry.Path); ref != nil {
		return ref
	}
	if dir := s.defaultDir(); dir != "" && path.Dir(a.value) != dir {
		return refuse("render.path-directory", a.key, r.name, a.key+" is "+q(a.value)+", outside the default path's directory "+q(dir)+
			": every render shares ONE volume, mounted at the default path's directory")
	}
	return nil
}

// alsoRenderings is B54: also.path, path.reserved, also.directory per
// also-name (sorted), then also-section.orphan (sorted).
func alsoRenderings(s *state) *decision.Refusal {
	dir := s.defaultDir()
	for i := range s.also {
		a := &s.also[i]
		if !a.hasOut {
			continue
		}
		if !knob.PathShaped(a.path) {
			return refuse("also.path", a.key, "", a.key+" is "+q(a.path)+`: an absolute file path, like "/config/extra.json"`)
		}
		if knob.Reserved(a.path) {
			return refuse("path.reserved", a.key, "", knob.ReservedFailure(a.path).Message(a.key))
		}
		if dir != "" && path.Dir(a.path) != dir {
			return refuse("also.directory", a.key, "", a.key+" is "+q(a.path)+": it must sit in the same directory as dynamic-config.rs/path ("+q(dir)+"), the one volume the agent writes to")
		}
	}
	for i := range s.also {
		if a := &s.also[i]; !a.hasOut {
			return refuse("also-section.orphan", a.secKey, "", a.secKey+" is set, but dynamic-config.rs/also."+a.name+" is not: a section needs a rendering to go to")
		}
	}
	return nil
}

// defaultPath is B55: path.required, path.shape, path.reserved.
func defaultPath(s *state) *decision.Refusal {
	r := &s.def
	v := &r.vals[registry.Path]
	if !v.set {
		k := key(r, registry.Path)
		if r.source == "" {
			return refuse("path.required", k, "", "dynamic-config.rs/path is required: set it on the pod, or give the fleet a default path (agent.defaults.path) — and name the store with dynamic-config.rs/source, since no per-store default can answer without one")
		}
		return refuse("path.required", k, "", "dynamic-config.rs/path is required: set it on the pod, or give the fleet or the store a default path (agent.defaults.path, agent.defaults.perStore)")
	}
	if v.tier == decision.TierAnnotation || v.tier == decision.TierClass {
		if _, f := r.parse(registry.Path); f != nil {
			return failed(r, registry.Path, f)
		}
	}
	return nil // an installation path was checked when the installation was read
}

// outputDuplicate is output.duplicate (B56): the default path, every
// path.<name> and every also.<name> name distinct files.
func outputDuplicate(s *state) *decision.Refusal {
	type output struct{ key, path string }
	var small [8]output
	seen := small[:0]
	check := func(k, p string) *decision.Refusal {
		for _, o := range seen {
			if o.path == p {
				return refuse("output.duplicate", k, renderOfKey(k), k+" is "+q(p)+", the same file as "+o.key+": every rendering needs its own file")
			}
		}
		seen = append(seen, output{k, p})
		return nil
	}
	if ref := check(key(&s.def, registry.Path), s.def.vals[registry.Path].text); ref != nil {
		return ref
	}
	for _, r := range s.named {
		if ref := check(r.ann[registry.Path].key, r.ann[registry.Path].value); ref != nil {
			return ref
		}
	}
	for i := range s.also {
		if a := &s.also[i]; a.hasOut {
			if ref := check(a.key, a.path); ref != nil {
				return ref
			}
		}
	}
	return nil
}

// sourceRequired is source.required (B57).
func sourceRequired(s *state) *decision.Refusal {
	if s.def.source != "" {
		return nil
	}
	return refuse("source.required", key(&s.def, registry.Source), "", "dynamic-config.rs/source is required: set it on the pod, or give the fleet a default with agent.defaults.source (DYNAMIC_CONFIG_AGENT_SOURCE)")
}

// keyRequired is key.required (B58).
func keyRequired(s *state) *decision.Refusal {
	if s.def.vals[registry.Key].set {
		return nil
	}
	return refuse("key.required", key(&s.def, registry.Key), "", "dynamic-config.rs/key is required: set it on the pod, or give the store a per-store default key (agent.defaults.perStore)")
}
