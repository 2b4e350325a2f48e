package resolve

import (
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// annot is one annotation the pod wrote for a render's knob.
type annot struct {
	key   string // the full key as written
	value string
	// class names the class that filled the value ("DynamicConfigClass
	// ns/name"); "" when the pod wrote it (spec 08 §3 step 6).
	class string
	set   bool
	// parsed says the key's grammar judged value (render.parse): f is its
	// refusal, the parsed value is the render's vals slot's p.
	parsed bool
	f      *knob.Failure
}

// value is one knob's effective value for a render: the raw tier lookup
// (validated by the steps before anything relies on it). When an
// installation tier answered, the supplying installation.Value is looked up
// again where its provenance is needed (supplier) rather than copied into
// every one of a render's slots.
type value struct {
	text string
	// p is the value as its grammar parsed it (normalised text, number):
	// from the annotation's parse (render.parse), the installation's read,
	// the built-in's parse at load, or the step that derived it. It is what
	// the plan gets.
	p        knob.Value
	tier     decision.Tier
	store    string // the store whose group answered
	note     string
	set      bool
	fromInst bool // an installation tier answered
}

// render is one render's annotations and resolved values.
type render struct {
	name     string // "" for the default render
	firstKey string // the first key, in sorted order, that declared a named render
	ann      [registry.Count]annot
	vals     [registry.Count]value
	source   string // the resolved store ("" when none)
}

// also is one also.<name> extra rendering.
type also struct {
	name   string
	key    string
	path   string
	hasOut bool // also.<name> present (an orphan section has only the section)
	secKey string
	sec    string
	hasSec bool
}

// state is one decision in progress.
type state struct {
	inst *installation.Installation
	f    *decision.Facts
	// classes is the class set (nil: classes off); consulted is the class
	// the pod named once B3 found it.
	classes   *classes.Set
	consulted *classes.Class
	// classesRevision is the class set's revision once B3 consulted it.
	classesRevision string
	// resolved: every knob's ladder has been walked (the steps from B6 on).
	resolved bool

	def   render
	named []*render
	also  []also

	status, class, inject annot

	unknownKey string // the smallest unknown key in byte order
	hasUnknown bool
	emptyKey   string // the smallest key refused by value.empty
	hasEmpty   bool

	gates    []decision.GateRuling
	agentEnv []installation.EnvEntry // the pod's agent-env entries, in order
	// withValues: the output renders carry their values (Decide, not
	// DecidePlan).
	withValues bool
}

// read sorts the pod's prefixed annotations into renders, also-names, the
// status mark, and the first unknown / empty key.
func (s *state) read() {
	for key, v := range s.f.Annotations {
		if !annotation.Prefixed(key) {
			continue // never read
		}
		c := registry.Classify(key)
		ownsEmpty := false
		switch c.Kind {
		case registry.KindUnknown:
			if !s.hasUnknown || key < s.unknownKey {
				s.unknownKey, s.hasUnknown = key, true
			}
			continue
		case registry.KindStatus:
			s.status = annot{key: key, value: v, set: true}
			continue
		case registry.KindRevisionStamp:
			continue // the injection's own; the patch replaces it
		case registry.KindRegistry:
			s.def.ann[c.Row] = annot{key: key, value: v, set: true}
			ownsEmpty = rows[c.Row].OwnsEmpty
			switch c.Row {
			case registry.Class:
				s.class = s.def.ann[c.Row]
			case registry.Inject:
				s.inject = s.def.ann[c.Row]
			}
		case registry.KindRendered:
			r := s.namedRender(c.Name)
			r.ann[c.Row] = annot{key: key, value: v, set: true}
			if r.firstKey == "" || key < r.firstKey {
				r.firstKey = key
			}
			ownsEmpty = rows[c.Row].OwnsEmpty
		case registry.KindAlso:
			a := s.alsoEntry(c.Name)
			a.key, a.path, a.hasOut = key, v, true
		case registry.KindAlsoSection:
			a := s.alsoEntry(c.Name)
			a.secKey, a.sec, a.hasSec = key, v, true
		}
		if v == "" && !ownsEmpty && (!s.hasEmpty || key < s.emptyKey) {
			s.emptyKey, s.hasEmpty = key, true
		}
	}
	slices.SortFunc(s.named, func(a, b *render) int { return strings.Compare(a.name, b.name) })
	slices.SortFunc(s.also, func(a, b also) int { return strings.Compare(a.name, b.name) })
}

// parse is the verdict of knob i's grammar on the render's annotation,
// reached once: the value check, the pin, the ladder and the hand-over to
// the plan all read it. The parsed value is kept in the knob's vals slot,
// where the ladder leaves it for an annotation (an annotation always wins
// the ladder, so the slot holds the annotation's value whenever one is set).
func (r *render) parse(i registry.ID) (knob.Value, *knob.Failure) {
	a := &r.ann[i]
	if !a.parsed {
		r.vals[i].p, a.f = rows[i].Parse(a.value)
		a.parsed = true
	}
	return r.vals[i].p, a.f
}

func (s *state) namedRender(name string) *render {
	for _, r := range s.named {
		if r.name == name {
			return r
		}
	}
	r := &render{name: name}
	s.named = append(s.named, r)
	return r
}

func (s *state) alsoEntry(name string) *also {
	for i := range s.also {
		if s.also[i].name == name {
			return &s.also[i]
		}
	}
	s.also = append(s.also, also{name: name})
	return &s.also[len(s.also)-1]
}

// renders walks the default render, then the named renders in sorted order.
func (s *state) renders(yield func(*render) bool) {
	if !yield(&s.def) {
		return
	}
	for _, r := range s.named {
		if !yield(r) {
			return
		}
	}
}
