package installation

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// namespacePattern is the RFC 1123 label every gate namespace, envPolicy
// namespace and chart schema uses (spec 02 §5.1).
var namespacePattern = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// envNameGlob is an agentEnvAllow entry other than "*": an UPPER_SNAKE stem
// with an optional trailing "*".
var envNameGlob = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*\*?$`)

// ValidNamespace reports whether ns is "*" or an RFC 1123 label.
func ValidNamespace(ns string) bool { return ns == "*" || namespacePattern.MatchString(ns) }

// gateNameProblem returns the problem text (after "{ctx}: ") for a bad name, or "".
func gateNameProblem(gate, name string) string {
	if name == "*" {
		return ""
	}
	if gate == "agentEnvAllow" {
		if envNameGlob.MatchString(name) {
			return ""
		}
		return strconv.Quote(name) + ` is not a variable name (UPPER_SNAKE, an optional trailing "*")`
	}
	if IsStore(name) {
		return ""
	}
	return strconv.Quote(name) + " is not a store this contract knows"
}

func namespaceProblem(ns string) string {
	return strconv.Quote(ns) + ` is not a namespace (lowercase RFC 1123) or "*"`
}

// ParseGate parses the scoped-name grammar of spec 02 §5.1 for gate (the
// document key: agentEnvAllow, sourceAllow or sourceDeny), with c naming the
// value in messages. Every bad namespace, group and name is reported.
func ParseGate(gate string, c string, text string) ([]GateGroup, []string) {
	var groups []GateGroup
	var problems []string
	for _, part := range strings.Split(text, ";") {
		group := trim(part)
		if group == "" {
			continue
		}
		ns := "*"
		names := group
		head := false
		if i := strings.IndexByte(group, ':'); i >= 0 {
			ns, names, head = trim(group[:i]), group[i+1:], true
		}
		g, ps := parseGateGroup(gate, c, ns, head, strings.Split(names, ","))
		problems = append(problems, ps...)
		if g != nil {
			groups = append(groups, *g)
		}
	}
	if len(groups) == 0 && len(problems) == 0 {
		problems = append(problems, c+": names nothing; leave it empty to "+gateMeaning(gate))
	}
	return groups, problems
}

// parseGateGroup validates one group; names are trimmed and empty ones skipped.
func parseGateGroup(gate, c, ns string, head bool, rawNames []string) (*GateGroup, []string) {
	var problems []string
	bad := false
	if !ValidNamespace(ns) {
		problems = append(problems, c+": "+namespaceProblem(ns))
		bad = true
	}
	var names []string
	for _, n := range rawNames {
		n = trim(n)
		if n == "" {
			continue
		}
		if p := gateNameProblem(gate, n); p != "" {
			problems = append(problems, c+": "+p)
			bad = true
			continue
		}
		names = append(names, n)
	}
	if len(names) == 0 && !bad {
		if !head {
			return nil, nil
		}
		problems = append(problems, c+": the group for "+strconv.Quote(ns)+" names nothing")
		return nil, problems
	}
	if bad {
		return nil, problems
	}
	return &GateGroup{Namespace: ns, Names: names}, nil
}

func gateMeaning(gate string) string {
	for _, s := range settings {
		if s.Key == gate {
			return s.GateMeaning
		}
	}
	return ""
}

// FormatGate writes groups back as the grammar string (used by tests and
// fuzzing: an accepted input round-trips through it).
func FormatGate(groups []GateGroup) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = g.Namespace + ": " + strings.Join(g.Names, ", ")
	}
	return strings.Join(parts, "; ")
}

// Applies reports whether the group applies to a pod in namespace ns.
func (g GateGroup) Applies(ns string) bool { return g.Namespace == "*" || g.Namespace == ns }

// Matches reports whether name matches an entry of a group applying to ns.
func (g Gate) Matches(ns, name string) bool { return NameListed(g.Listing(ns), name) }

// Listing is the refusal listing of spec 02 §5.1: the names of the groups
// applying to ns, in declaration order, first occurrence kept. Groups of
// other namespaces are never listed; nil when nothing applies.
func (g Gate) Listing(ns string) []string {
	var out []string
	for _, grp := range g.Groups {
		if !grp.Applies(ns) {
			continue
		}
		for _, e := range grp.Names {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// NameListed reports whether name matches an entry of a listing: the entry
// is "*", equals name, or is "stem*" and name starts with stem.
func NameListed(listing []string, name string) bool {
	for _, e := range listing {
		if e == "*" || e == name {
			return true
		}
		if stem, ok := strings.CutSuffix(e, "*"); ok && strings.HasPrefix(name, stem) {
			return true
		}
	}
	return false
}
