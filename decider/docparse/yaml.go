package docparse

import (
	yaml "go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
)

// FromYAML converts a parsed YAML node into a doctree: documents unwrapped,
// aliases resolved to the node they name (shared, so an alias costs no copy
// and a walker still counts every visit), scalar tags shortened. A nil or
// empty node is nil.
func FromYAML(n *yaml.Node) *doctree.Node {
	return (&converter{seen: map[*yaml.Node]*doctree.Node{}}).convert(n)
}

type converter struct {
	seen map[*yaml.Node]*doctree.Node
}

func (c *converter) convert(n *yaml.Node) *doctree.Node {
	n = unwrap(n)
	if n == nil {
		return nil
	}
	if t, ok := c.seen[n]; ok {
		return t
	}
	t := &doctree.Node{}
	c.seen[n] = t
	switch n.Kind {
	case yaml.ScalarNode:
		t.Kind, t.Value, t.Tag = doctree.Scalar, n.Value, n.ShortTag()
	case yaml.SequenceNode:
		t.Kind = doctree.Sequence
	case yaml.MappingNode:
		t.Kind = doctree.Mapping
	}
	if len(n.Content) > 0 {
		t.Content = make([]*doctree.Node, len(n.Content))
		for i, child := range n.Content {
			t.Content[i] = c.convert(child)
		}
	}
	return t
}

// unwrap follows documents and aliases to the node holding content; nil for
// an empty document or a node of no kind.
func unwrap(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && depth < 64; depth++ {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		case 0:
			return nil
		default:
			return n
		}
	}
	return nil
}
