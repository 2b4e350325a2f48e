// Package envpolicy holds the environment-variable policy of spec 05: its
// settings (parsed and validated at installation load) and its evaluation over
// the facts of a Pod or a workload's pod template. It never imports the
// installation package.
package envpolicy

// Targets.
const (
	TargetPods      = "pods"
	TargetWorkloads = "workloads"
)

// Reject operators (spec 05 §4).
const (
	RejectAnyIn         = "anyIn"
	RejectAnyNotIn      = "anyNotIn"
	RejectAllAreUsed    = "allAreUsed"
	RejectNotAllAreUsed = "notAllAreUsed"
)

// Modes (spec 05 §2.1).
const (
	ModeEnforce = "enforce"
	ModeWarn    = "warn"
	ModeAudit   = "audit"
)

// Where a policy came from (Policy.Source).
const (
	SourceEnvironment = "environment"
	SourceDocument    = "document"
)

// VariableName is the installation variable that carries a policy as YAML or
// JSON text; it replaces the whole envPolicy document key.
const VariableName = "DYNAMIC_CONFIG_ENV_POLICY"

// Policy is a validated environment-variable policy, defaults filled.
type Policy struct {
	// Targets are "pods" and/or "workloads", in the order written.
	Targets []string
	// Rules are evaluated in order.
	Rules []Rule
	// Source is "environment" or "document"; Origin the variable or document path.
	Source string
	Origin string
}

// Rule is one ordered rule.
type Rule struct {
	// Reject is anyIn, anyNotIn, allAreUsed or notAllAreUsed.
	Reject string
	// Variables are the listed entries.
	Variables []Variable
	// Namespaces the rule applies to; empty = every namespace.
	Namespaces []string
	// Mode is enforce, warn or audit.
	Mode string
}

// Variable is one listed entry; HasValue false means "any value".
type Variable struct {
	Name     string
	Value    string
	HasValue bool
}

// Includes reports whether the policy targets target ("pods" or
// "workloads"); a policy without targets targets both (the default).
func (p *Policy) Includes(target string) bool {
	if p == nil {
		return false
	}
	if len(p.Targets) == 0 {
		return target == TargetPods || target == TargetWorkloads
	}
	for _, t := range p.Targets {
		if t == target {
			return true
		}
	}
	return false
}

// reject is the rule's operator, the default filled.
func (r *Rule) reject() string {
	if r.Reject == "" {
		return RejectAnyIn
	}
	return r.Reject
}

// mode is the rule's mode, the default filled.
func (r *Rule) mode() string {
	if r.Mode == "" {
		return ModeEnforce
	}
	return r.Mode
}

// appliesIn reports whether the rule applies in namespace ns: no namespaces
// listed, "*" listed, or ns listed.
func (r *Rule) appliesIn(ns string) bool {
	if len(r.Namespaces) == 0 {
		return true
	}
	for _, n := range r.Namespaces {
		if n == "*" || n == ns {
			return true
		}
	}
	return false
}

// valued reports whether the entry matches only one literal value; a listed
// "" means any value, like an absent one.
func (v *Variable) valued() bool { return v.HasValue && v.Value != "" }
