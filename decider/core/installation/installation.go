// Package installation holds the installer's configuration: every setting of
// spec 02, read from the process environment and the installation document,
// validated as a unit, and held as an immutable snapshot named by its revision.
//
// The types in this file are the contract between the loader (this package)
// and its readers (the resolver, the env policy, GetInstallation). A snapshot
// is never mutated after Load returns it.
package installation

import (
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
)

// BuiltInAgentImage is the agent image injected when the installation names none.
const BuiltInAgentImage = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.3.0"

// Stores are the nine stores of the contract (knob.Stores, the one list).
var Stores = knob.Stores

// Source says where an effective setting came from.
type Source int

// Setting sources.
const (
	SourceUnset Source = iota
	SourceEnvironment
	SourceDocument
	SourceBuiltIn
)

// Marker is the trailing pin marker written on a value.
type Marker int

// Markers.
const (
	MarkerNone        Marker = iota
	MarkerPinned             // a trailing "!"
	MarkerOverridable        // a trailing "?"
)

// OverrideRule names the rung of the override rule (spec 02 §6) that decided
// whether a value is pinned.
type OverrideRule int

// Override rules.
const (
	OverrideNotApplicable OverrideRule = iota
	OverrideMarker
	OverrideStoreFlag
	OverrideFleetFlag
)

// Value is one installation value of a defaultable knob, with its provenance.
type Value struct {
	// Text is the value as written, trimmed, marker stripped (not normalised:
	// "0640" stays "0640", "030" stays "030").
	Text string
	// Marker is the marker written on the value.
	Marker Marker
	// Pinned is the outcome of the override rule.
	Pinned bool
	// Rule is the rung of the override rule that decided Pinned.
	Rule OverrideRule
	// Source is SourceEnvironment or SourceDocument.
	Source Source
	// Variable is the environment form: DYNAMIC_CONFIG_AGENT_WATCH_SECONDS,
	// DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS, … (set for both sources).
	Variable string
	// DocumentPath is the document path when Source is SourceDocument:
	// "watchSeconds", "storeDefaults.vault.watch-seconds".
	DocumentPath string
	// Normalised is Text as knob.Check normalises it (numbers in plain
	// decimal, file-mode "0<oct>", everything else as written), so readers
	// need not re-parse it per request.
	Normalised string
	// Number is the value's number as the grammar parsed it (a number
	// knob's value, file-mode's bits; 0 for every other knob).
	Number uint64
}

// Parsed is the value as its grammar parsed it when the installation was
// read: the normalised text and the number.
func (v Value) Parsed() knob.Value { return knob.Value{Text: v.Normalised, Number: v.Number} }

// StoreGroup is one store's per-store defaults.
type StoreGroup struct {
	// Store is the store name.
	Store string
	// Overridable is the group's overridable= flag, nil when not written.
	Overridable *bool
	// Knobs maps a per-store knob to its value (the overridable flag is not a knob here).
	Knobs map[string]Value
	// Order lists the knobs in declaration order.
	Order []string
	// Source, Variable and DocumentPath say where the group came from.
	Source       Source
	Variable     string
	DocumentPath string
}

// GateGroup is one (namespace, names) group of a gate, "*" for a headless group.
type GateGroup struct {
	Namespace string
	Names     []string
}

// Gate is one of agentEnvAllow, sourceAllow, sourceDeny.
type Gate struct {
	// Name is the document key: agentEnvAllow, sourceAllow or sourceDeny.
	Name string
	// Variable is the environment variable.
	Variable string
	// Groups in declaration order; empty when the gate is unset.
	Groups []GateGroup
	// Source and Origin say where the gate came from.
	Source Source
	Origin string
}

// Set reports whether the gate names anything.
func (g Gate) Set() bool { return len(g.Groups) > 0 }

// EnvEntry is one NAME=value entry of an agent environment list.
type EnvEntry struct {
	Name  string
	Value string
}

// Setting is one row of the effective installation as GetInstallation and
// check-installation show it (spec 06 §5).
type Setting struct {
	Name       string // document key (env-only settings use their spec 06 name)
	Variable   string
	ChartValue string
	Value      string // effective, marker stripped, URL-redacted
	Set        bool
	Marker     Marker
	Pinned     bool
	Source     Source
	Origin     string
	BuiltIn    string
}

// Installation is one validated, immutable snapshot.
type Installation struct {
	// Revision is "sha256:<hex>" of Canonical.
	Revision string
	// Canonical is the canonical JSON of spec 02 §10.
	Canonical []byte
	// LoadedAt is when the snapshot was put in force.
	LoadedAt time.Time

	// DocumentPath is the document that was read ("" when none).
	DocumentPath string
	// DocumentPresent reports whether the document existed.
	DocumentPresent bool
	// DocumentBlank reports that the document existed but was blank (empty,
	// whitespace or comments only): the empty document. A reload from a
	// document that was not blank to a blank one is refused (02 §11).
	DocumentBlank bool

	// Fleet maps a fleet knob (spec 02 §2.1, registry.Fleet; by knob spelling:
	// "agent-cpu-request", "file-mode", "source", "path", …) to its value.
	// Only settings that are set appear.
	Fleet map[string]Value
	// FleetOverridable is agent.defaults.overridable (built-in true).
	FleetOverridable bool
	// Stores maps a store name to its per-store defaults group.
	Stores map[string]*StoreGroup
	// AgentEnv is the fleet agent environment in declaration order.
	AgentEnv []EnvEntry

	// The three gates.
	AgentEnvAllow Gate
	SourceAllow   Gate
	SourceDeny    Gate

	// AgentImageAllow are the image prefixes a pod's agent-image may start with.
	AgentImageAllow []string
	// AllowEvents and AllowTLSSkipVerify are the feature switches.
	AllowEvents        bool
	AllowTLSSkipVerify bool
	// ClassesEnabled is webhook.classes.enabled (DYNAMIC_CONFIG_WEBHOOK_CLASSES,
	// spec 08 §2): the decider watches the class objects.
	ClassesEnabled bool
	// AgentImage is the effective agent image (BuiltInAgentImage when unset).
	AgentImage string
	// PullSecret is the pull secret to add ("" when none).
	PullSecret string
	// MatchGuaranteed (matchGuaranteed, DYNAMIC_CONFIG_AGENT_MATCH_GUARANTEED)
	// gives the agents of a Guaranteed pod requests equal to their limits, so
	// that the pod stays Guaranteed (issue 20).
	MatchGuaranteed bool

	// EnvPolicy is the environment-variable policy, nil when none.
	EnvPolicy *envpolicy.Policy

	// Settings are the plain settings for display, in table order.
	Settings []Setting
	// Warnings are the advisory warnings (spec 07 §1.6), without the "warning: " prefix.
	Warnings []string
}

// Empty returns the empty installation: every built-in, nothing set.
// Its revision is the sha256 of "{}".
func Empty() *Installation {
	return &Installation{
		Revision:         EmptyRevision,
		Canonical:        []byte("{}"),
		Fleet:            map[string]Value{},
		FleetOverridable: true,
		Stores:           map[string]*StoreGroup{},
		AgentEnvAllow:    Gate{Name: "agentEnvAllow", Variable: "DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW"},
		SourceAllow:      Gate{Name: "sourceAllow", Variable: "DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW"},
		SourceDeny:       Gate{Name: "sourceDeny", Variable: "DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY"},
		AgentImage:       BuiltInAgentImage,
	}
}

// EmptyRevision is the revision of the empty installation (canonical JSON "{}").
const EmptyRevision = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
