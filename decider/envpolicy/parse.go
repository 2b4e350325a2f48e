package envpolicy

import (
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dynamic-config-admission/dynamic-config/decider/docparse"
	"github.com/dynamic-config-admission/dynamic-config/decider/doctree"
	"github.com/dynamic-config-admission/dynamic-config/decider/redact"
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

// ParseVariable validates the text of DYNAMIC_CONFIG_ENV_POLICY (YAML or
// JSON). Text that is empty after trimming means no policy: (nil, nil). Every
// problem is returned, each one line of spec 05 §2.2 starting with
// "DYNAMIC_CONFIG_ENV_POLICY", in document order; with problems the policy is
// nil.
func ParseVariable(text string) (*Policy, []string) {
	text = strings.Trim(text, " \t\n\r\v\f")
	if text == "" {
		return nil, nil
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&doc); err != nil {
		return nil, []string{notYAML(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, []string{notYAML(err)}
		}
		return nil, []string{VariableName + ": not YAML or JSON: more than one document"}
	}
	ps := &parser{variable: true}
	p := ps.policy(docparse.FromYAML(&doc), "")
	if len(ps.problems) > 0 {
		return nil, ps.problems
	}
	if p != nil {
		p.Source, p.Origin = SourceEnvironment, VariableName
	}
	return p, nil
}

func notYAML(err error) string {
	return VariableName + ": not YAML or JSON: " + strings.TrimPrefix(err.Error(), "yaml: ")
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
