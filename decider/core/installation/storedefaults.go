package installation

import (
	"slices"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

var storeKnobList = strings.Join(StoreKnobs, ", ")

// storeDefaultsReader reads per-store defaults (spec 02 §5.2, §5.3) from
// either door into StoreGroups, reporting every problem to report.
type storeDefaultsReader struct {
	source Source
	report sink
	groups map[string]*StoreGroup
	order  []string // stores in declaration order
}

func newStoreDefaultsReader(source Source, report sink) *storeDefaultsReader {
	return &storeDefaultsReader{source: source, report: report, groups: map[string]*StoreGroup{}}
}

// ParseStoreDefaults parses the per-store grammar string with subject as the
// {VAR} of its messages (the environment form). It is the per-store grammar
// alone, for tests, fuzzing and other readers.
func ParseStoreDefaults(text string) (map[string]*StoreGroup, []string) {
	var problems []string
	r := newStoreDefaultsReader(SourceEnvironment, func(p Problem) { problems = append(problems, p.String()) })
	r.readString(envCtx(varStoreDefaults), text)
	return r.groups, problems
}

// readString reads the grammar string `store: knob=value, …; store: …`.
func (r *storeDefaultsReader) readString(c ctx, text string) {
	found := false
	for _, part := range strings.Split(text, ";") {
		group := trim(part)
		if group == "" {
			continue
		}
		found = true
		colon := strings.IndexByte(group, ':')
		eq := strings.IndexByte(group, '=')
		if colon < 0 || (eq >= 0 && eq < colon) {
			r.report.atText(c, c.String()+": "+redact.Quote(group)+" has no `store:` head; the form is \"store: knob=value, knob=value; store: knob=value\"")
			continue
		}
		store := trim(group[:colon])
		if !IsStore(store) {
			r.report.at(c, Problem{Value: store, Expected: "a store this contract knows", Text: c.String() + ": " + redact.Quote(store) + " is not a store this contract knows"})
			continue
		}
		g := r.group(store, c.doc, c)
		r.readPairs(c, c.store(store), store, group[colon+1:], g)
	}
	if !found {
		r.report.atText(c, c.String()+": names nothing; leave it empty to set no per-store default")
	}
}

// group returns a fresh group for store; a store seen twice is reported and
// read into a group that is then dropped.
func (r *storeDefaultsReader) group(store, docPath string, c ctx) *StoreGroup {
	g := &StoreGroup{Store: store, Knobs: map[string]Value{}, Source: r.source, Variable: varStoreDefaults, DocumentPath: docPath}
	if _, dup := r.groups[store]; dup {
		r.report.atText(c, c.String()+": "+store+" appears twice")
		return g
	}
	r.groups[store] = g
	r.order = append(r.order, store)
	return g
}

// readPairs reads `knob=value, …` into g. c is the {VAR} of the setting, gc
// the group's `{VAR} (<store>)`.
func (r *storeDefaultsReader) readPairs(c, gc ctx, store, text string, g *StoreGroup) {
	found := false
	for _, part := range strings.Split(text, ",") {
		p := trim(part)
		if p == "" {
			continue
		}
		found = true
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			r.report.atText(c, c.String()+": "+redact.Quote(p)+" under "+store+" is not key=value")
			continue
		}
		r.setKnob(gc, gc, g, trim(k), trim(v), true)
	}
	if !found {
		r.report.atText(c, c.String()+": the group for "+strconv.Quote(store)+" names nothing")
	}
}

// readNode reads the document's storeDefaults node: a grammar string, or a
// map of store to (map of knob to scalar, or one `knob=value, …` string).
func (r *storeDefaultsReader) readNode(n *doctree.Node) {
	const key = "storeDefaults"
	c := docCtx(key, varStoreDefaults)
	switch n.Kind {
	case doctree.Scalar:
		if t := trim(n.Value); t != "" {
			r.readString(c, t)
		}
		return
	case doctree.Sequence:
		r.report.text(key + ": a map of store to settings, or that grammar as one string; this is a list")
		return
	}
	for _, sp := range doctree.Pairs(n) {
		path := key + "." + sp.Key
		if !IsStore(sp.Key) {
			r.report(Problem{Path: path, Value: sp.Key, Expected: "a store this contract knows", Text: path + ": " + strconv.Quote(sp.Key) + " is not a store this contract knows"})
			continue
		}
		v := sp.Value
		if problem := nullProblem(path, v, "{}"); problem != "" {
			r.report.text(problem)
			continue
		}
		gc := docCtx(path, varStoreDefaults).store(sp.Key)
		switch v.Kind {
		case doctree.Sequence:
			r.report(Problem{Path: path, Expected: "a map of setting to value, or that grammar as one string", Text: path + ": a map of setting to value, or that grammar as one string; this is a list"})
		case doctree.Scalar:
			t := trim(v.Value)
			if t == "" {
				continue
			}
			g := r.group(sp.Key, path, gc)
			r.readPairs(gc, gc, sp.Key, t, g)
		case doctree.Mapping:
			g := r.group(sp.Key, path, gc)
			kps := doctree.Pairs(v)
			if len(kps) == 0 {
				r.report.atText(gc, gc.String()+": the group for "+strconv.Quote(sp.Key)+" names nothing")
			}
			for _, kp := range kps {
				text, ok, problem := scalar(path+"."+kp.Key, kp.Value)
				if problem != "" {
					r.report.text(problem)
				}
				if !ok || trim(text) == "" {
					continue
				}
				r.setKnob(gc, gc.child(kp.Key), g, kp.Key, trim(text), false)
			}
		}
	}
}

// setKnob validates one knob value of a group (spec 02 §5.2) and stores it.
// gc is the group's context (unknown knob, twice); vc the value's.
func (r *storeDefaultsReader) setKnob(gc, vc ctx, g *StoreGroup, k, text string, inString bool) {
	if !slices.Contains(StoreKnobs, k) {
		r.report.at(gc, Problem{Value: k, Expected: "one of " + storeKnobList, Text: gc.String() + ": " + redact.Quote(k) + " is not a defaultable knob; the knobs are " + storeKnobList})
		return
	}
	if _, dup := g.Knobs[k]; dup || (k == "overridable" && g.Overridable != nil) {
		r.report.atText(gc, gc.String()+": "+k+" appears twice")
		return
	}
	if text == "" {
		r.report.atText(vc, vc.String()+": "+k+" is empty")
		return
	}
	if k == "overridable" {
		switch text {
		case "true", "false":
			b := text == "true"
			g.Overridable = &b
		default:
			r.report.at(vc, valueProblem(vc.String(), "overridable", text, `"true" or "false"`))
		}
		return
	}
	value, marker := splitMarker(text)
	if value == "" {
		r.report.atText(vc, vc.String()+": "+k+" is empty")
		return
	}
	parsed, f := registry.Lookup(k).Parse(value)
	if f != nil {
		r.report.at(vc, Problem{Value: value, Expected: f.Expectation, Text: f.Message(vc.String() + ": " + k)})
		return
	}
	v := Value{Text: value, Normalised: parsed.Text, Number: parsed.Number, Marker: marker, Source: r.source, Variable: varStoreDefaults}
	if vc.fromDocument() {
		v.DocumentPath = vc.doc
	}
	g.Knobs[k] = v
	g.Order = append(g.Order, k)
}

// FormatStoreDefaults writes groups back as one grammar string, stores in the
// nine-store order and knobs in declaration order, the flag first.
func FormatStoreDefaults(groups map[string]*StoreGroup) string {
	var parts []string
	for _, s := range Stores {
		g, ok := groups[s]
		if !ok {
			continue
		}
		var kv []string
		if g.Overridable != nil {
			kv = append(kv, "overridable="+strconv.FormatBool(*g.Overridable))
		}
		for _, k := range g.Order {
			v := g.Knobs[k]
			kv = append(kv, k+"="+v.Text+markerSuffix(v.Marker))
		}
		parts = append(parts, s+": "+strings.Join(kv, ", "))
	}
	return strings.Join(parts, "; ")
}
