// Package doctree is the document tree an installation document (YAML, JSON
// or TOML) and an environment policy read as, with no parser attached: the
// validation that walks it (decider/core/installation, decider/core/envpolicy) never
// sees a parser's types. decider/docparse builds trees from text.
package doctree

// Kind is what a node holds.
type Kind int

// Node kinds.
const (
	// Scalar is a word, a number, a boolean or a null.
	Scalar Kind = iota + 1
	// Sequence is a list.
	Sequence
	// Mapping is a map: keys and values alternate in Content.
	Mapping
)

// Node is one node of a document. A nil *Node is an absent value. Nodes may
// be shared (an alias is the node it names), never cyclic.
type Node struct {
	Kind Kind
	// Value is a scalar's literal text ("" for other kinds).
	Value string
	// Tag is the scalar's type as written: "!!str", "!!int", "!!float",
	// "!!bool", "!!null" (a parser's tags, shortened).
	Tag string
	// Content holds a sequence's items, or a mapping's keys and values alternating.
	Content []*Node
}

// IsNull reports whether n is absent or a null.
func IsNull(n *Node) bool { return n == nil || (n.Kind == Scalar && n.Tag == "!!null") }

// KindWord names a non-scalar node for "this is a …" messages: list, map or word.
func KindWord(n *Node) string {
	if n != nil {
		switch n.Kind {
		case Sequence:
			return "list"
		case Mapping:
			return "map"
		}
	}
	return "word"
}

// Pair is one key and value of a mapping, in document order.
type Pair struct {
	Key   string
	Value *Node
}

// Pairs lists a mapping's entries in document order (nil for anything else).
func Pairs(n *Node) []Pair {
	if n == nil || n.Kind != Mapping {
		return nil
	}
	out := make([]Pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := ""
		if k := n.Content[i]; k != nil {
			key = k.Value
		}
		out = append(out, Pair{Key: key, Value: n.Content[i+1]})
	}
	return out
}
