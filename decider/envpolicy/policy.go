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
