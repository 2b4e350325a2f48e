package installation

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// input is one setting's value as one door gives it: the variable's text, or
// the document's node.
type input struct {
	text   string               // the variable's value (environment)
	decode envpolicy.DecodeText // decodes text holding a document (environment)
	node   *doctree.Node        // the document's node (document)
	ctx    ctx
	source Source
	origin string // the variable, or "<document>: <key>"
}

// reading is what one door said about one setting, validated.
type reading struct {
	set     bool
	display string // the effective value as shown (marker stripped; lists joined)
	marker  Marker
	canon   any // the canonical form's value (spec 02 §10)

	value    Value      // kindKnob
	entries  []EnvEntry // kindAgentEnv
	flag     bool       // kindOverridable, kindSwitch, kindClasses
	groups   map[string]*StoreGroup
	order    []string          // store declaration order
	gate     []GateGroup       // kindGate
	prefixes []string          // kindImageAllow
	policy   *envpolicy.Policy // kindEnvPolicy
}

// scalarText reads a plain setting's text from either door: trimmed, "" for
// unset. Lists and maps in the document are reported.
func scalarText(in input, report sink) (string, bool) {
	if in.node == nil {
		t := trim(in.text)
		return t, t != ""
	}
	text, ok, problem := scalar(in.ctx.doc, in.node)
	if problem != "" {
		report.text(problem)
	}
	if !ok {
		return "", false
	}
	t := trim(text)
	return t, t != ""
}

// read validates one setting's value from one door; every problem goes to report.
func read(s setting, in input, report sink) reading {
	switch s.Kind {
	case kindStoreDefaults:
		return readStoreDefaults(in, report)
	case kindGate:
		return readGate(s, in, report)
	case kindEnvPolicy:
		return readEnvPolicy(in, report)
	}
	text, ok := scalarText(in, report)
	if !ok {
		return reading{}
	}
	c := in.ctx.String()
	switch s.Kind {
	case kindKnob:
		return readKnob(s, in, c, text, report)
	case kindAgentEnv:
		entries, problems := ParseEnvList(c, text)
		for _, p := range problems {
			report.text(p)
		}
		if len(problems) > 0 {
			return reading{}
		}
		joined := FormatEnvList(entries)
		return reading{set: true, display: joined, canon: joined, entries: entries}
	case kindOverridable, kindSwitch:
		if text != "true" && text != "false" {
			report(valueProblem(c, s.Name, text, `"true" or "false"`))
			return reading{}
		}
		return reading{set: true, display: text, canon: text, flag: text == "true"}
	case kindClasses:
		if text != "true" && text != "false" { // spec 08 §2: the decider watches the classes when true
			report(valueProblem("", s.Variable, text, `"true" or "false"`))
			return reading{}
		}
		return reading{set: true, display: text, canon: text, flag: text == "true"}
	case kindImageAllow:
		return readImageAllow(c, text, report)
	case kindImage:
		if strings.ContainsAny(text, asciiSpace) {
			report(valueProblem("", s.Variable, text, "an image reference without spaces"))
			return reading{}
		}
		return reading{set: true, display: text, canon: text}
	case kindPullSecret:
		if strings.ContainsAny(text, asciiSpace+"/") {
			report(valueProblem("", s.Variable, text, "a Secret name"))
			return reading{}
		}
		return reading{set: true, display: text, canon: text}
	}
	return reading{}
}

// readKnob reads a fleet default: the knob's value and marker, checked by
// the knob's own grammar (its registry row).
func readKnob(s setting, in input, c, text string, report sink) reading {
	value, marker := splitMarker(text)
	if value == "" {
		report(Problem{Expected: "a value", Text: c + ": " + s.Knob + " is empty"})
		return reading{}
	}
	parsed, f := registry.Lookup(s.Knob).Parse(value)
	if f != nil {
		report(Problem{Value: value, Expected: f.Expectation, Text: f.Message(c + ": " + s.Knob)})
		return reading{}
	}
	v := Value{Text: value, Normalised: parsed.Text, Number: parsed.Number, Marker: marker, Source: in.source, Variable: s.Variable}
	if in.source == SourceDocument {
		v.DocumentPath = s.Key
	}
	return reading{set: true, display: value, marker: marker, canon: value + markerSuffix(marker), value: v}
}

// readImageAllow reads agentImageAllow: comma-separated image prefixes, "*" refused.
func readImageAllow(c, text string, report sink) reading {
	var prefixes []string
	bad := false
	for _, p := range strings.Split(text, ",") {
		p = trim(p)
		if p == "" {
			continue
		}
		if p == "*" {
			report(Problem{Value: "*", Expected: `image prefixes like "ghcr.io/acme/"`, Text: c + `: "*" is not a prefix; list image prefixes like "ghcr.io/acme/"`})
			bad = true
			continue
		}
		prefixes = append(prefixes, p)
	}
	if bad {
		return reading{}
	}
	if len(prefixes) == 0 {
		report.text(c + ": names nothing; leave it empty to allow no agent-image")
		return reading{}
	}
	joined := strings.Join(prefixes, ", ")
	return reading{set: true, display: joined, canon: joined, prefixes: prefixes}
}

func readStoreDefaults(in input, report sink) reading {
	r := newStoreDefaultsReader(in.source, report)
	if in.node == nil {
		t := trim(in.text)
		if t == "" {
			return reading{}
		}
		r.readString(in.ctx, t)
	} else {
		if problem := nullProblem("storeDefaults", in.node, "{}"); problem != "" {
			report.text(problem)
			return reading{}
		}
		if n := in.node; n.Kind == doctree.Scalar && trim(n.Value) == "" {
			return reading{}
		}
		r.readNode(in.node)
	}
	// Groups read so far are kept even when something in them failed (the
	// load fails anyway), so that the cross checks of spec 02 §6.2 still
	// judge them: every problem at once.
	if len(r.groups) == 0 {
		return reading{}
	}
	canon := map[string]any{}
	for store, g := range r.groups {
		knobs := map[string]string{}
		if g.Overridable != nil {
			knobs["overridable"] = strconv.FormatBool(*g.Overridable)
		}
		for k, v := range g.Knobs {
			knobs[k] = v.Text + markerSuffix(v.Marker)
		}
		canon[store] = knobs
	}
	return reading{set: true, display: FormatStoreDefaults(r.groups), canon: canon, groups: r.groups, order: r.order}
}

func readGate(s setting, in input, report sink) reading {
	var groups []GateGroup
	failed := false
	rep := sink(func(p Problem) { failed = true; report(p) })
	// The variable's text and the document's string form read alike.
	text, isText := in.text, in.node == nil
	if n := in.node; n != nil && n.Kind == doctree.Scalar && !doctree.IsNull(n) {
		text, isText = n.Value, true
	}
	if isText {
		t := trim(text)
		if t == "" {
			return reading{}
		}
		var problems []string
		groups, problems = ParseGate(s.Key, in.ctx.String(), t)
		for _, p := range problems {
			rep.text(p)
		}
	} else {
		n := in.node
		switch {
		case doctree.IsNull(n):
			rep.text(nullProblem(s.Key, n, "{}"))
		case n.Kind == doctree.Sequence:
			rep.text(s.Key + ": a map of namespace to names, or that grammar as one string; this is a list")
		default:
			for _, np := range doctree.Pairs(n) {
				path := s.Key + "." + np.Key
				c := docCtx(path, s.Variable).String()
				v := np.Value
				if problem := nullProblem(path, v, "[]"); problem != "" {
					rep.text(problem)
					continue
				}
				var names []string
				switch v.Kind {
				case doctree.Mapping:
					rep.text(path + ": a list of names, or one comma-separated string; this is a map")
					continue
				case doctree.Scalar:
					if trim(v.Value) == "" {
						continue // a blank scalar is unset (spec 02 §3 rule 2)
					}
					names = strings.Split(v.Value, ",")
				case doctree.Sequence:
					for j, item := range v.Content {
						text, ok, _ := scalar("", item)
						if it := item; it != nil && it.Kind != doctree.Scalar {
							rep.text(path + "[" + strconv.Itoa(j) + "]: a name is a word; this is a " + doctree.KindWord(it))
							continue
						}
						if ok {
							names = append(names, text)
						}
					}
				}
				g, problems := parseGateGroup(s.Key, c, trim(np.Key), true, names)
				for _, p := range problems {
					rep.text(p)
				}
				if g != nil {
					groups = append(groups, *g)
				}
			}
		}
	}
	if failed || len(groups) == 0 {
		return reading{}
	}
	canon := make([]any, len(groups))
	for i, g := range groups {
		canon[i] = []any{g.Namespace, g.Names}
	}
	return reading{set: true, display: FormatGate(groups), canon: canon, gate: groups}
}

func readEnvPolicy(in input, report sink) reading {
	var p *envpolicy.Policy
	var problems []string
	if in.node == nil {
		if trim(in.text) == "" {
			return reading{}
		}
		p, problems = envpolicy.ParseVariable(in.text, in.decode)
	} else {
		n := in.node
		if problem := nullProblem("envPolicy", n, "{}"); problem != "" {
			report.text(problem)
			return reading{}
		}
		if n.Kind == doctree.Scalar && trim(n.Value) == "" {
			return reading{}
		}
		p, problems = envpolicy.ParseDocument(in.node, "envPolicy")
	}
	for _, pr := range problems {
		report.text(pr)
	}
	if len(problems) > 0 || p == nil {
		return reading{}
	}
	p.Origin = in.origin
	return reading{set: true, canon: json.RawMessage(envpolicy.Canonical(p)), policy: p}
}
