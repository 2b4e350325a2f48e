package envpolicy

// The policy's grammar (spec 05 §2): targets, rules, their variables and
// namespaces, walked by the parser of parse.go.

import (
	"slices"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

func (ps *parser) policy(n *doctree.Node, path string) *Policy {
	n = ps.resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != doctree.Mapping {
		ps.add(path, "a map with targets and rules"+thisIs(n))
		return nil
	}
	p := &Policy{}
	var haveRules bool
	for _, e := range ps.entries(n, path) {
		switch e.key {
		case "targets":
			p.Targets = ps.targets(e.value, e.path)
		case "rules":
			haveRules = e.value != nil
			p.Rules = ps.rules(e.value, e.path)
		default:
			ps.add(e.path, strconv.Quote(e.key)+" is not an envPolicy setting; the ones there are: targets, rules")
		}
	}
	if !haveRules {
		ps.add(child(path, "rules"), "is required: list at least one rule, or drop envPolicy")
	}
	if len(p.Targets) == 0 {
		p.Targets = []string{TargetPods, TargetWorkloads}
	}
	return p
}

func (ps *parser) targets(n *doctree.Node, path string) []string {
	if n == nil {
		return nil
	}
	if n.Kind != doctree.Sequence {
		ps.add(path, `a list of "pods" and "workloads"`+thisIs(n))
		return nil
	}
	if len(n.Content) == 0 {
		ps.add(path, `is empty: drop it to target both, or list "pods" and/or "workloads"`)
		return nil
	}
	out := make([]string, 0, 2)
	for i, item := range ps.items(n) {
		ip := index(path, i)
		text, ok := ps.scalar(item, ip, `"pods" or "workloads"`)
		switch {
		case !ok:
		case text != TargetPods && text != TargetWorkloads:
			ps.add(ip, redact.Quote(text)+`: "pods" or "workloads"`)
		case slices.Contains(out, text):
			ps.add(ip, redact.Quote(text)+" appears twice")
		default:
			out = append(out, text)
		}
	}
	return out
}

// scalar returns a scalar's literal text (null reads as ""); a list or a map
// is reported as "<expectation>; this is a <kind>" (decision: the spec's
// item messages quote a value, which a list or a map does not have).
func (ps *parser) scalar(n *doctree.Node, path, expectation string) (string, bool) {
	if n == nil {
		return "", true
	}
	if n.Kind != doctree.Scalar {
		ps.add(path, expectation+thisIs(n))
		return "", false
	}
	return n.Value, true
}

func (ps *parser) rules(n *doctree.Node, path string) []Rule {
	if n == nil {
		return nil // reported as missing by the caller
	}
	if n.Kind != doctree.Sequence {
		ps.add(path, "a list of rules"+thisIs(n))
		return nil
	}
	if len(n.Content) == 0 {
		ps.add(path, "is empty: list at least one rule, or drop envPolicy")
		return nil
	}
	out := make([]Rule, 0, len(n.Content))
	for i, item := range ps.items(n) {
		if ps.exhausted(path) {
			return nil
		}
		out = append(out, ps.rule(item, index(path, i)))
	}
	return out
}

// rule reads one rule; a null rule reads as an empty map (decision), so it
// is reported for its missing environmentVariables.
func (ps *parser) rule(n *doctree.Node, path string) Rule {
	r := Rule{Reject: RejectAnyIn, Mode: ModeEnforce}
	var listed int
	var entries []mapEntry
	if n != nil {
		if n.Kind != doctree.Mapping {
			ps.add(path, "a rule is a map with reject, environmentVariables, namespaces and mode"+thisIs(n))
			return r
		}
		entries = ps.entries(n, path)
	}
	rejectOK := true
	haveVariables := false
	for _, e := range entries {
		switch e.key {
		case "reject":
			r.Reject, rejectOK = ps.word(e.value, e.path, RejectAnyIn,
				"anyIn, anyNotIn, allAreUsed or notAllAreUsed",
				RejectAnyIn, RejectAnyNotIn, RejectAllAreUsed, RejectNotAllAreUsed)
		case "environmentVariables":
			haveVariables = true
			r.Variables, listed = ps.variables(e.value, e.path)
		case "namespaces":
			r.Namespaces = ps.namespaces(e.value, e.path)
		case "mode":
			r.Mode, _ = ps.word(e.value, e.path, ModeEnforce, "enforce, warn or audit",
				ModeEnforce, ModeWarn, ModeAudit)
		default:
			ps.add(e.path, strconv.Quote(e.key)+" is not a rule setting; the ones there are: reject, environmentVariables, namespaces, mode")
		}
	}
	if !haveVariables {
		ps.add(child(path, "environmentVariables"), "is required and may not be empty")
	}
	if rejectOK && r.Reject == RejectNotAllAreUsed && listed == 1 {
		ps.add(child(path, "environmentVariables"), "notAllAreUsed with one variable can never reject; list two or more")
	}
	return r
}

// word reads a scalar that must be one of allowed (case-sensitive); null
// gives the default.
func (ps *parser) word(n *doctree.Node, path, def, expectation string, allowed ...string) (string, bool) {
	if n == nil {
		return def, true
	}
	if n.Kind != doctree.Scalar {
		ps.add(path, expectation+thisIs(n))
		return def, false
	}
	if !slices.Contains(allowed, n.Value) {
		ps.add(path, redact.Quote(n.Value)+": "+expectation)
		return def, false
	}
	return n.Value, true
}

// variables reads a rule's environmentVariables and returns them with the
// number of entries listed (valid or not).
func (ps *parser) variables(n *doctree.Node, path string) ([]Variable, int) {
	if n == nil || (n.Kind == doctree.Sequence && len(n.Content) == 0) {
		ps.add(path, "is required and may not be empty")
		return nil, 0
	}
	if n.Kind != doctree.Sequence {
		// decision: the spec has no wrong-kind text for this list.
		ps.add(path, "a list of variables, each a map with name and an optional value"+thisIs(n))
		return nil, 0
	}
	out := make([]Variable, 0, len(n.Content))
	for j, item := range ps.items(n) {
		if ps.exhausted(path) {
			return nil, 0
		}
		vp := index(path, j)
		v, ok := ps.listedEntry(item, vp)
		if !ok {
			continue
		}
		if duplicated(out, v) {
			ps.add(vp, v.Name+" is listed twice")
			continue
		}
		out = append(out, v)
	}
	return out, len(n.Content)
}

// listedEntry reads one listed entry; a null entry reads as an empty map
// (decision), so it is reported for its missing name. ok is false when the
// entry has a problem.
func (ps *parser) listedEntry(n *doctree.Node, path string) (Variable, bool) {
	var v Variable
	var entries []mapEntry
	if n != nil {
		if n.Kind != doctree.Mapping {
			ps.add(path, "a variable is a map with name and an optional value"+thisIs(n))
			return v, false
		}
		entries = ps.entries(n, path)
	}
	before := len(ps.problems)
	haveName := false
	for _, e := range entries {
		switch e.key {
		case "name":
			haveName = e.value != nil
			if e.value == nil {
				break
			}
			name, ok := ps.scalar(e.value, e.path, "a C identifier ([A-Za-z_][A-Za-z0-9_]*)")
			if !ok {
				break
			}
			if !cIdentifier.MatchString(name) {
				ps.add(e.path, redact.Quote(name)+" is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)")
				break
			}
			v.Name = name
		case "value":
			if e.value == nil {
				break // null = absent (decision)
			}
			if e.value.Kind != doctree.Scalar {
				// The value is never printed, only its kind.
				ps.add(e.path, "a word, a number or a boolean"+thisIs(e.value))
				break
			}
			// A listed "" means any value, like an absent one: normalised away.
			v.Value, v.HasValue = e.value.Value, e.value.Value != ""
		default:
			ps.add(e.path, strconv.Quote(e.key)+" is not a variable setting; the ones there are: name, value")
		}
	}
	if !haveName {
		ps.add(child(path, "name"), "is required")
	}
	return v, len(ps.problems) == before
}

// duplicated reports whether v repeats an entry of listed: the same name and
// the same value (absent and "" are the same: any value).
func duplicated(listed []Variable, v Variable) bool {
	for i := range listed {
		l := &listed[i]
		if l.Name == v.Name && l.valued() == v.valued() && (!v.valued() || l.Value == v.Value) {
			return true
		}
	}
	return false
}

func (ps *parser) namespaces(n *doctree.Node, path string) []string {
	if n == nil {
		return nil // absent: every namespace
	}
	if n.Kind != doctree.Sequence {
		ps.add(path, "a list of namespaces"+thisIs(n))
		return nil
	}
	if len(n.Content) == 0 {
		ps.add(path, "is empty: drop it to apply everywhere")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range ps.items(n) {
		ip := index(path, i)
		text, ok := ps.scalar(item, ip, `a namespace (lowercase RFC 1123) or "*"`)
		if !ok {
			continue
		}
		if text != "*" && !namespaceLabel.MatchString(text) {
			ps.add(ip, redact.Quote(text)+` is not a namespace (lowercase RFC 1123) or "*"`)
			continue
		}
		out = append(out, text)
	}
	return out
}
