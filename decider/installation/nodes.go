package installation

import (
	yaml "go.yaml.in/yaml/v3"
)

// resolve follows aliases and unwraps a document node.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return nil
}

// isNull reports whether n is absent or a YAML/JSON/TOML null.
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// kindWord names a non-scalar node for "this is a …" messages.
func kindWord(n *yaml.Node) string {
	switch resolve(n).Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "map"
	}
	return "word"
}

// scalar reads a setting's node as its literal text (spec 02 §5.3): ok is
// false for null (unset) and for lists and maps, for which problem is set.
func scalar(path string, n *yaml.Node) (text string, ok bool, problem string) {
	n = resolve(n)
	if isNull(n) {
		return "", false, ""
	}
	if n.Kind != yaml.ScalarNode {
		return "", false, path + ": a setting is a word, a number or a boolean; this one is a " + kindWord(n)
	}
	return n.Value, true, ""
}

// pair is one key and value of a mapping node, in document order.
type pair struct {
	Key   string
	Value *yaml.Node
}

// pairs lists a mapping node's entries in document order.
func pairs(n *yaml.Node) []pair {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		key := ""
		if k != nil {
			key = k.Value
		}
		out = append(out, pair{Key: key, Value: n.Content[i+1]})
	}
	return out
}
