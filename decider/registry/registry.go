// Package registry is the annotation registry of spec 01 §2: ONE table of the
// 66 keys a pod may carry under dynamic-config.rs/, in registry order. The
// table drives key classification (the unknown-key check), the resolution
// ladder of each knob, explain and the generated user documentation.
package registry

import "github.com/dynamic-config-admission/dynamic-config/decider/knob"

// Prefix is the annotation prefix; keys outside it are never read.
const Prefix = "dynamic-config.rs/"

// Tier is an installation rung of a knob's resolution ladder. The ladder is
// always annotation > the tiers of the row, in order > built-in.
type Tier int

// Installation tiers.
const (
	// TierStore is the per-store default group of the render's store.
	TierStore Tier = iota + 1
	// TierFleet is the fleet default (agent.defaults.*).
	TierFleet
)

// Scope says which renders a knob's value serves.
type Scope int

// Scopes.
const (
	// ScopePod is one value for the whole pod, from the default render and its store.
	ScopePod Scope = iota + 1
	// ScopeDefault applies to the default render's agents only.
	ScopeDefault
	// ScopeEach applies to every render, each against its own store.
	ScopeEach
)

// String is the scope's word in the registry table.
func (s Scope) String() string {
	switch s {
	case ScopePod:
		return "pod"
	case ScopeDefault:
		return "default"
	case ScopeEach:
		return "each"
	}
	return "?"
}

// Row is one registry key.
type Row struct {
	// Name is the key without prefix, also the knob's name.
	Name string
	// PerRender says the key also exists as <key>.<name> for a named render.
	PerRender bool
	// Tiers are the installation rungs for the default render, in ladder order.
	Tiers []Tier
	// NamedTiers are the installation rungs for a named render (per-render keys only).
	NamedTiers []Tier
	// BuiltIn is the built-in value the ladder ends on; "" = none.
	BuiltIn string
	// BuiltInDoc is how the documentation describes the built-in default.
	BuiltInDoc string
	// TierNote qualifies the tiers column of the documentation (display
	// only; resolution walks Tiers and NamedTiers), e.g. "no tier for named
	// renders".
	TierNote string
	// Scope is pod, default or each.
	Scope Scope
	// ScopeNote qualifies the scope column of the documentation (display
	// only), e.g. "watching agents".
	ScopeNote string
	// OwnsEmpty says the key's own grammar refuses "" (booleans, enumerations,
	// numbers, inject, class, inject-containers, agent-env); every other key
	// is refused at step B7 with value.empty (spec 01 §1.2).
	OwnsEmpty bool
	// StoreShaped marks the store-shaped strings (raw pin comparison, never a fleet tier).
	StoreShaped bool
	// Pair is the other half of an either-or pair ("" when none).
	Pair string
	// Checks are the check ids that judge the key's value (spec 01 §2).
	Checks []string
	// Grammar is the value grammar in words, for the documentation.
	Grammar string
	// Doc is the one-line user documentation.
	Doc string
	// DeprecatedSince is the version that deprecated the key ("" = current).
	DeprecatedSince string
	// Replacement is the key that replaces a deprecated one ("" = none).
	Replacement string
}

// Defaultable reports whether an installation tier can supply the knob.
func (r *Row) Defaultable() bool { return len(r.Tiers) > 0 }

// Check validates a value with the key's grammar (spec 01 §3), returning the
// normalised value.
func (r *Row) Check(value string) (string, *knob.Failure) { return knob.Check(r.Name, value) }

// Deprecated reports whether the key is deprecated.
func (r *Row) Deprecated() bool { return r.DeprecatedSince != "" }

// DeprecationMessage is the warning for a pod using key (the full key as
// written) of a deprecated row (spec 01 §2).
func (r *Row) DeprecationMessage(key string) string {
	if r.Replacement != "" {
		return key + " is deprecated since " + r.DeprecatedSince + "; use " + Prefix + r.Replacement
	}
	return key + " is deprecated since " + r.DeprecatedSince + " and will be removed; it has no replacement"
}

// Rows returns the registry in registry order. The slice is shared: never modify it.
func Rows() []Row { return rows }

// Len is the number of registry keys.
func Len() int { return len(rows) }

// Index returns the position of a key in registry order, -1 when it is not a registry key.
func Index(name string) int {
	if i, ok := byName[name]; ok {
		return i
	}
	return -1
}

// MustIndex is Index for keys known to exist; it panics otherwise (package init use).
func MustIndex(name string) int {
	i := Index(name)
	if i < 0 {
		panic("registry: no key " + name)
	}
	return i
}

// Lookup returns the row of a key, nil when it is not a registry key.
func Lookup(name string) *Row {
	if i := Index(name); i >= 0 {
		return &rows[i]
	}
	return nil
}

var byName = func() map[string]int {
	m := make(map[string]int, len(rows))
	for i := range rows {
		m[rows[i].Name] = i
	}
	return m
}()
