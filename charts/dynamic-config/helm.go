package chart

// The chart's own operations on values, as Helm performs them: coalescing,
// lookups, sorted maps, its booleans and its "non-empty".

import (
	"sort"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// coalesce lays over on top of base as Helm does: maps merge key by key, a
// null in over deletes the key, anything else in over replaces.
func coalesce(base, over *doctree.Node) *doctree.Node {
	if over == nil {
		return base
	}
	if base == nil || base.Kind != doctree.Mapping || over.Kind != doctree.Mapping {
		return over
	}
	out := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map"}
	overPairs := doctree.Pairs(over)
	find := func(k string) (*doctree.Node, bool) {
		for _, p := range overPairs {
			if p.Key == k {
				return p.Value, true
			}
		}
		return nil, false
	}
	seen := map[string]bool{}
	for _, p := range doctree.Pairs(base) {
		seen[p.Key] = true
		v := p.Value
		if o, ok := find(p.Key); ok {
			if doctree.IsNull(o) {
				continue
			}
			v = coalesce(p.Value, o)
		}
		out.Content = append(out.Content, keyNode(p.Key), v)
	}
	for _, p := range overPairs {
		if !seen[p.Key] && !doctree.IsNull(p.Value) {
			out.Content = append(out.Content, keyNode(p.Key), p.Value)
		}
	}
	return out
}

func keyNode(k string) *doctree.Node {
	return &doctree.Node{Kind: doctree.Scalar, Tag: "!!str", Value: k}
}

// lookupPath returns the value under the dotted path in a mapping node, nil when absent.
func lookupPath(n *doctree.Node, path ...string) *doctree.Node {
	for _, k := range path {
		var next *doctree.Node
		for _, p := range doctree.Pairs(n) {
			if p.Key == k {
				next = p.Value
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// sortedMap returns a copy of a mapping node with its keys sorted, down to
// depth levels: Helm reads values into Go maps and its templates range over
// them in key order, so a map-form gate's groups (and a perStore map) reach
// the rendered document sorted, whatever order the values file wrote.
func sortedMap(n *doctree.Node, depth int) *doctree.Node {
	if depth == 0 || n == nil || n.Kind != doctree.Mapping {
		return n
	}
	ps := doctree.Pairs(n)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Key < ps[j].Key })
	out := &doctree.Node{Kind: doctree.Mapping, Tag: "!!map"}
	for _, p := range ps {
		out.Content = append(out.Content, keyNode(p.Key), sortedMap(p.Value, depth-1))
	}
	return out
}

// switchText is a chart boolean as the decider's variable carries it:
// absent or null is "false"; anything else is its literal text, so a value
// that is not a boolean is refused by the installation rather than coerced
// (decision: the chart's schema takes booleans only; a switch never opens by
// accident).
func switchText(n *doctree.Node) string {
	switch {
	case doctree.IsNull(n):
		return "false"
	case n.Kind != doctree.Scalar:
		return "a " + doctree.KindWord(n)
	}
	return n.Value
}

// either is the chart's `or` of two booleans.
func either(a, b string) string {
	switch {
	case a == "true" || b == "true":
		return "true"
	case a != "false":
		return a
	}
	return b
}

// nonEmpty is the chart's "non-empty" test for a value it renders.
func nonEmpty(n *doctree.Node) bool {
	switch {
	case doctree.IsNull(n):
		return false
	case n.Kind == doctree.Scalar:
		return installation.Trim(n.Value) != ""
	default:
		return len(n.Content) > 0
	}
}

// scalarOf is a scalar's literal text ("" when absent or not a scalar).
func scalarOf(n *doctree.Node) string {
	if n == nil || n.Kind != doctree.Scalar || doctree.IsNull(n) {
		return ""
	}
	return n.Value
}
