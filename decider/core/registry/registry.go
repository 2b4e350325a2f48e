// Package registry is the annotation registry of spec 01 §2: ONE table of the
// keys a pod may carry under dynamic-config.rs/, in registry order. A row
// owns everything about its knob — name, per-render flag, grammar (parser,
// refusal and pin comparison), built-in default, installation tiers and
// setting, refusal class, its place among the named-render checks, the agent
// argument it becomes and documentation — and drives key classification
// (the unknown-key check), the resolution ladder, the named-render checks,
// the plan's hand-over (Values) and agent arguments, explain and the
// generated user documentation. The typed ID
// constants (ids.go) are generated from the table: `make knobs`.
package registry

import (
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// Prefix is the annotation prefix (internal/annotation); keys outside it are
// never read.
const Prefix = annotation.Prefix

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
	// OwnsEmpty says the key's own grammar judges "" (refuses it with its own
	// check, or accepts it for its steps to judge): booleans, enumerations,
	// numbers, inject, class, inject-containers, agent-env. Every other key is
	// refused at step B7 with value.empty (spec 01 §1.2). Derived from
	// Grammar when the package loads; the table never writes it.
	OwnsEmpty bool
	// StoreShaped marks the store-shaped strings (raw pin comparison, never a fleet tier).
	StoreShaped bool
	// Pair is the other half of an either-or pair. The zero ID (Inject, never
	// a pair half) means none: read it with PairOf.
	Pair ID
	// Grammar parses the value: it normalises it or returns the refusal
	// (spec 01 §3), and says how a pin compares two values (spec 02 §4).
	Grammar knob.Grammar
	// Refusal classes the refusals of the key's own value checks (spec 04 §2).
	Refusal RefusalClass
	// Setting is the installation setting carrying the fleet default (nil
	// when the row has no fleet tier).
	Setting *Setting
	// Named places the key's own checks on a named render (spec 01 §4):
	// step N<Named.N> runs its grammar's value check and then, for a key
	// with named-render tiers that is not store-shaped (store-shaped pins
	// are N3's), its pin. The zero Step: a hand-written check of the step
	// list judges the key (render.source-required, the path, metrics-port
	// and tls-skip-verify rules) or the key is not per-render.
	Named Step
	// Default places the key's value check and then its pin on the default
	// render (spec 01 §8.1): step B<Default.N> runs them after its
	// hand-written checks, the rows of one step in Seq order. The zero
	// Step: the step list names the key's checks itself (steps that judge
	// several keys together, or a value without a pin).
	Default Step
	// Agent is the argument the agents receive from the knob's value (spec
	// 03 §3.2; nil when the value is no argument). Scope says which renders'
	// agents: each = every render, default = the default render's only.
	Agent *Agent
	// Checks are the check ids that judge the key's value (spec 01 §2).
	Checks []string
	// GrammarText is the value grammar in words, for the documentation.
	GrammarText string
	// Doc is the one-line user documentation.
	Doc string
	// DeprecatedSince is the version that deprecated the key ("" = current).
	DeprecatedSince string
	// Replacement is the key that replaces a deprecated one ("" = none).
	Replacement string
}

// Setting is one installation setting of spec 02 §2.1: the fleet default of
// a knob, in the document, the environment and the chart.
type Setting struct {
	// Row is the setting's row in spec 02 §2.1: the installation's order of
	// the fleet defaults (Fleet), which the settings without a knob follow.
	Row int
	// Key is the document key.
	Key string
	// Variable is the environment variable.
	Variable string
	// ChartValue is the chart value that sets it.
	ChartValue string
}

// Step is a place in an evaluation order: the step's number and, within a
// step that judges several keys, the key's place (from 1).
type Step struct{ N, Seq int }

// Agent is the agent side of a knob: the argument of spec 03 §3.2 its value
// becomes. The plan walks every row's Agent (and the few arguments no knob
// owns) in At order.
type Agent struct {
	// At is the argument's row in spec 03 §3.2's table: the order of the
	// agents' arguments.
	At int
	// Flag is the agent flag (the first one, for a FormatPlan argument).
	Flag string
	// Kinds are the agents that receive it.
	Kinds AgentKinds
	// Format is how the value becomes the argument.
	Format Format
}

// AgentKinds are the agents of a render an argument goes to.
type AgentKinds uint8

// Agent kinds.
const (
	// AgentInit is the one-shot init agent.
	AgentInit AgentKinds = 1 << iota
	// AgentWatching is the watching agent.
	AgentWatching
	// AgentBoth is both agents.
	AgentBoth = AgentInit | AgentWatching
)

// Format says how a knob's value becomes an agent argument.
type Format int

// Formats.
const (
	// FormatValue is the flag and the normalised value, when the render
	// resolved one.
	FormatValue Format = iota + 1
	// FormatAlways is the flag and the value (the built-in when unresolved)
	// on every agent of the kinds: the required knobs and watch-seconds.
	FormatAlways
	// FormatTrue is the flag alone, when the value is "true".
	FormatTrue
	// FormatFalse is the flag alone, when the value is "false".
	FormatFalse
	// FormatFile is the flag and the file of the mounted reference: the
	// knob's auxiliary volume's mount directory and the reference's key.
	FormatFile
	// FormatPlan is the plan's own formatter for the knob: an argument that
	// reads other knobs too (template, client TLS, revoke-on-shutdown,
	// revoke-grace, the metrics address).
	FormatPlan
)

// RefusalClass is the reason, slug and HTTP code a refusal carries (spec 04 §2).
type RefusalClass int

// Refusal classes.
const (
	// RefuseMalformed is DynamicConfigMalformed, 400 (the zero class).
	RefuseMalformed RefusalClass = iota
	// RefusePinned is DynamicConfigPinned, 400.
	RefusePinned
	// RefusePolicy is DynamicConfigPolicy, 400.
	RefusePolicy
	// RefuseForbidden is DynamicConfigPolicy, 403: the installation does not offer it.
	RefuseForbidden
	// RefuseConflict is DynamicConfigConflict, 400.
	RefuseConflict
)

// Defaultable reports whether an installation tier can supply the knob.
func (r *Row) Defaultable() bool { return len(r.Tiers) > 0 }

// Check validates a value with the key's grammar (spec 01 §3), returning the
// normalised value.
func (r *Row) Check(value string) (string, *knob.Failure) { return r.Grammar.Check(value) }

// Parse validates a value with the key's grammar (spec 01 §3), returning it
// parsed: normalised text and, for a number, the number.
func (r *Row) Parse(value string) (knob.Value, *knob.Failure) { return r.Grammar.Parse(value) }

// Equal compares two values of the key the way a pin does (spec 02 §4).
func (r *Row) Equal(a, b string) bool { return r.Grammar.Equal(a, b) }

// PairOf is the other half of the row's either-or pair; ok is false when the
// row has none.
func (r *Row) PairOf() (other ID, ok bool) { return r.Pair, r.Pair != Inject }

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

// ID is a knob's position in registry order. The constants, one per row,
// are generated from the table (ids.go, `make knobs`).
type ID int

// Rows returns the registry in registry order, indexed by ID. The slice is
// shared: never modify it.
func Rows() []Row { return rows }

// Len is the number of registry keys.
func Len() int { return len(rows) }

// Row is the row of a knob.
func (id ID) Row() *Row { return &rows[id] }

// Name is the knob's name (its key without prefix).
func (id ID) Name() string { return rows[id].Name }

// ByName returns the ID of a key; ok is false when it is not a registry key.
func ByName(name string) (id ID, ok bool) {
	id, ok = byName[name]
	return id, ok
}

// Lookup returns the row of a key, nil when it is not a registry key.
func Lookup(name string) *Row {
	if id, ok := byName[name]; ok {
		return &rows[id]
	}
	return nil
}

// All is every ID in registry order.
var All = func() []ID {
	ids := make([]ID, len(rows))
	for i := range ids {
		ids[i] = ID(i)
	}
	return ids
}()

// PerRender is every per-render ID in registry order.
var PerRender = func() []ID {
	var ids []ID
	for i := range rows {
		if rows[i].PerRender {
			ids = append(ids, ID(i))
		}
	}
	return ids
}()

// init derives each row's OwnsEmpty from its grammar (spec 01 §1.2): a
// grammar that answers "" with anything but value.empty owns it.
func init() {
	for i := range rows {
		_, f := rows[i].Check("")
		rows[i].OwnsEmpty = f == nil || f.Check != "value.empty"
	}
}

// BuiltInValue is the knob's built-in value as its grammar parses it (the
// zero Value when the row has none), parsed once when the package loads.
func (id ID) BuiltInValue() knob.Value { return builtIns[id] }

var builtIns = func() []knob.Value {
	out := make([]knob.Value, len(rows))
	for i := range rows {
		p, f := rows[i].Parse(rows[i].BuiltIn)
		if f != nil {
			p = knob.Value{Text: rows[i].BuiltIn}
		}
		out[i] = p
	}
	return out
}()

// Fleet returns every knob with a fleet default (a row with a Setting), in
// the installation's order (Setting.Row, spec 02 §2.1): the fleet keys the
// installation document and environment read, their variables and chart
// values, and (Row.BuiltIn) their built-ins. The slice is shared: never
// modify it.
func Fleet() []ID { return fleetIDs }

var fleetIDs = func() []ID {
	var ids []ID
	for i := range rows {
		if rows[i].Setting != nil {
			ids = append(ids, ID(i))
		}
	}
	slices.SortFunc(ids, func(a, b ID) int { return rows[a].Setting.Row - rows[b].Setting.Row })
	return ids
}()

var byName = func() map[string]ID {
	m := make(map[string]ID, len(rows))
	for i := range rows {
		m[rows[i].Name] = ID(i)
	}
	return m
}()
