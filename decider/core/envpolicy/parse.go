package envpolicy

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/doctree"
)

// The grammars of spec 05 §2.1.
var (
	cIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	// namespaceLabel is the RFC 1123 label of the gate namespace grammar (02 §5.1).
	namespaceLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// nodeBudget bounds the nodes one parse visits, so aliases that expand a
// small text into an enormous tree cannot stall a load (decision).
const nodeBudget = 100000

// ParseDocument validates the envPolicy node of the installation document.
// path is the document path of the node ("envPolicy"); every problem is
// returned, each one line of spec 05 §2.2, in document order. A null node
// means no policy: (nil, nil). With problems the policy is nil.
func ParseDocument(node *doctree.Node, path string) (*Policy, []string) {
	ps := &parser{}
	p := ps.policy(node, path)
	if len(ps.problems) > 0 {
		return nil, ps.problems
	}
	if p != nil {
		p.Source, p.Origin = SourceDocument, path
	}
	return p, nil
}

// DecodeText decodes the text of DYNAMIC_CONFIG_ENV_POLICY — one YAML or
// JSON document — into a tree. Its error says why the text is not one
// document and follows "not YAML or JSON: " in the problem. The package
// never parses text itself: decider/docparse.Text is the decoder its callers
// hand over, so the model stays free of any YAML library.
type DecodeText func(text string) (*doctree.Node, error)

// ParseVariable validates the text of DYNAMIC_CONFIG_ENV_POLICY (YAML or
// JSON), decoded by decode (not nil). Text that is empty after trimming means
// no policy: (nil, nil). Every problem is returned, each one line of spec 05
// §2.2 starting with "DYNAMIC_CONFIG_ENV_POLICY", in document order; with
// problems the policy is nil.
func ParseVariable(text string, decode DecodeText) (*Policy, []string) {
	text = strings.Trim(text, " \t\n\r\v\f")
	if text == "" {
		return nil, nil
	}
	node, err := decode(text)
	if err != nil {
		return nil, []string{VariableName + ": not YAML or JSON: " + err.Error()}
	}
	ps := &parser{variable: true}
	p := ps.policy(node, "")
	if len(ps.problems) > 0 {
		return nil, ps.problems
	}
	if p != nil {
		p.Source, p.Origin = SourceEnvironment, VariableName
	}
	return p, nil
}

// parser walks one policy tree and collects problems. Paths are built
// inside the value; at renders them as the spec's {P}.
type parser struct {
	variable bool // the text of DYNAMIC_CONFIG_ENV_POLICY
	visited  int
	tooLarge bool
	problems []string
}

// at renders a path as {P}: the document path itself, or
// "DYNAMIC_CONFIG_ENV_POLICY: <path inside the value>".
func (ps *parser) at(path string) string {
	if !ps.variable {
		return path
	}
	if path == "" {
		return VariableName
	}
	return VariableName + ": " + path
}

func (ps *parser) add(path, text string) {
	ps.problems = append(ps.problems, ps.at(path)+": "+text)
}

// child is the path of key inside path. A key that is not a plain word
// (letters, digits, "_", "-") is written Go-quoted, so every problem stays
// on one line (decision).
func child(path, key string) string {
	if !plainKey(key) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// resolve counts a node against the budget (aliases were resolved into
// shared nodes by the parser, so a shared node counts at every visit). A nil
// result means null (absent).
func (ps *parser) resolve(n *doctree.Node) *doctree.Node {
	if doctree.IsNull(n) || n.Kind == 0 {
		return nil
	}
	ps.visited++
	return n
}

// exhausted reports (once) that the tree is too large to walk.
func (ps *parser) exhausted(path string) bool {
	if ps.visited <= nodeBudget {
		return false
	}
	if !ps.tooLarge {
		ps.tooLarge = true
		ps.add(path, "too large: more than "+strconv.Itoa(nodeBudget)+" entries once aliases are expanded")
	}
	return true
}

// kindOf names a node's kind as the messages do.
func kindOf(n *doctree.Node) string {
	switch n.Kind {
	case doctree.Sequence:
		return "list"
	case doctree.Mapping:
		return "map"
	}
	switch n.Tag {
	case "!!int", "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	}
	return "word"
}

// thisIs is the "; this is a <kind>" tail of the wrong-kind messages.
func thisIs(n *doctree.Node) string { return "; this is a " + kindOf(n) }

// mapEntry is one key of a map, in document order.
type mapEntry struct {
	key   string
	path  string
	value *doctree.Node // resolved; nil = null
}

// entries lists a map's keys in document order; a key written twice is
// reported (decision) and only its first occurrence kept.
func (ps *parser) entries(n *doctree.Node, path string) []mapEntry {
	out := make([]mapEntry, 0, len(n.Content)/2)
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := ps.resolve(n.Content[i])
		key := ""
		if k != nil && k.Kind == doctree.Scalar {
			key = k.Value
		}
		kp := child(path, key)
		if seen[key] {
			ps.add(kp, strconv.Quote(key)+" appears twice")
			continue
		}
		seen[key] = true
		out = append(out, mapEntry{key: key, path: kp, value: ps.resolve(n.Content[i+1])})
	}
	return out
}

// items lists a list's items, resolved; nil items are null.
func (ps *parser) items(n *doctree.Node) []*doctree.Node {
	out := make([]*doctree.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = ps.resolve(c)
	}
	return out
}
