package installation

import (
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// kind says how a setting's value is read.
type kind int

const (
	kindKnob          kind = iota // a fleet default of a defaultable knob (the registry's)
	kindAgentEnv                  // NAME=value list (agentEnv)
	kindOverridable               // the fleet flag (overridable)
	kindStoreDefaults             // per-store groups (storeDefaults)
	kindGate                      // scoped names (the three gates)
	kindImageAllow                // image prefixes (agentImageAllow)
	kindSwitch                    // true/false switch (allowEvents, allowTlsSkipVerify, matchGuaranteed)
	kindClasses                   // true/false: the decider watches classes (spec 08 §2)
	kindImage                     // agent image
	kindPullSecret                // pull secret
	kindEnvPolicy                 // environment-variable policy
)

// setting is one row of spec 02 §2.
type setting struct {
	Key        string // document key; "" for env-only settings
	Name       string // the spec 06 Setting.name (document key, or the env-only name)
	Variable   string
	ChartValue string
	Knob       string // the knob spelling of a fleet default (kindKnob)
	Kind       kind
	BuiltIn    string
	// GateMeaning is what an empty gate means, for the "names nothing" message.
	GateMeaning string
}

// settings are the rows of spec 02 §2, in table order: first the fleet
// defaults, which are the registry's (a knob row owns its setting, in the
// order registry.Fleet gives), then the settings no knob owns.
var settings = append(fleetSettings(), otherSettings...)

// fleetSettings are the registry rows with an installation setting, in
// registry.Fleet order.
func fleetSettings() []setting {
	out := make([]setting, 0, len(registry.Fleet()))
	for _, id := range registry.Fleet() {
		r := id.Row()
		out = append(out, setting{Key: r.Setting.Key, Variable: r.Setting.Variable, ChartValue: r.Setting.ChartValue,
			Knob: r.Name, Kind: kindKnob, BuiltIn: r.BuiltIn})
	}
	return out
}

// otherSettings are the spec 02 §2 settings no knob owns, in table order
// after the fleet defaults.
var otherSettings = []setting{
	{Key: "agentEnv", Variable: "DYNAMIC_CONFIG_AGENT_ENV", ChartValue: "agent.defaults.env", Kind: kindAgentEnv},
	{Key: "overridable", Variable: "DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE", ChartValue: "agent.defaults.overridable", Kind: kindOverridable, BuiltIn: "true"},
	{Key: "storeDefaults", Variable: "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS", ChartValue: "agent.defaults.perStore", Kind: kindStoreDefaults},
	{Key: "agentEnvAllow", Variable: "DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW", ChartValue: "webhook.agentEnvAllow", Kind: kindGate, GateMeaning: "allow no agent-env name"},
	{Key: "sourceAllow", Variable: "DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW", ChartValue: "webhook.sourceAllow", Kind: kindGate, GateMeaning: "allow every store"},
	{Key: "sourceDeny", Variable: "DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY", ChartValue: "webhook.sourceDeny", Kind: kindGate, GateMeaning: "deny no store"},
	{Name: "agentImageAllow", Variable: "DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW", ChartValue: "webhook.agentImageAllow", Kind: kindImageAllow},
	{Name: "allowEvents", Variable: "DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS", ChartValue: "webhook.allowEvents", Kind: kindSwitch, BuiltIn: "false"},
	{Name: "allowTlsSkipVerify", Variable: "DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY", ChartValue: "webhook.allowTlsSkipVerify", Kind: kindSwitch, BuiltIn: "false"},
	{Name: "classesEnabled", Variable: "DYNAMIC_CONFIG_WEBHOOK_CLASSES", ChartValue: "webhook.classes.enabled", Kind: kindClasses, BuiltIn: "false"},
	{Name: "agentImage", Variable: "DYNAMIC_CONFIG_AGENT_IMAGE", ChartValue: "agent.image + agent.tag / agent.digest", Kind: kindImage, BuiltIn: BuiltInAgentImage},
	{Name: "pullSecret", Variable: "DYNAMIC_CONFIG_AGENT_PULL_SECRET", ChartValue: "agent.pullSecret", Kind: kindPullSecret},
	{Key: "envPolicy", Variable: "DYNAMIC_CONFIG_ENV_POLICY", ChartValue: "envPolicy.targets, envPolicy.rules", Kind: kindEnvPolicy},
	// issue 20: a Guaranteed pod's agents get requests = limits
	{Key: "matchGuaranteed", Variable: VarMatchGuaranteed, ChartValue: "agent.defaults.matchGuaranteed", Kind: kindSwitch, BuiltIn: "false"},
}

func init() {
	for i := range settings {
		if settings[i].Name == "" {
			settings[i].Name = settings[i].Key
		}
	}
}

// DefaultsFileVariable locates the installation document (spec 02 §2.5).
const DefaultsFileVariable = "DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE"

// DefaultDocumentPath is where the decider looks when neither the flag nor
// DefaultsFileVariable names a document.
const DefaultDocumentPath = "/etc/dynamic-config/installation.yaml"

// Variable names used by the loader directly.
const (
	varStoreDefaults      = "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS"
	varOverridable        = "DYNAMIC_CONFIG_AGENT_DEFAULTS_OVERRIDABLE"
	varEnvPolicy          = "DYNAMIC_CONFIG_ENV_POLICY"
	varAgentEnv           = "DYNAMIC_CONFIG_AGENT_ENV"
	VarImageAllow         = "DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW"
	VarAllowTLSSkipVerify = "DYNAMIC_CONFIG_WEBHOOK_ALLOW_TLS_SKIP_VERIFY"
	VarAllowEvents        = "DYNAMIC_CONFIG_WEBHOOK_ALLOW_EVENTS"
	VarClasses            = "DYNAMIC_CONFIG_WEBHOOK_CLASSES"
	VarAgentImage         = "DYNAMIC_CONFIG_AGENT_IMAGE"
	VarPullSecret         = "DYNAMIC_CONFIG_AGENT_PULL_SECRET"
	VarMatchGuaranteed    = "DYNAMIC_CONFIG_AGENT_MATCH_GUARANTEED"
)

// frontdoorVariables are the front door's own names under the scanned prefixes
// (spec 02 §7.2): known, never installation settings.
var frontdoorVariables = []string{
	"DYNAMIC_CONFIG_WEBHOOK_ADDR",
	"DYNAMIC_CONFIG_WEBHOOK_METRICS_ADDR",
	"DYNAMIC_CONFIG_WEBHOOK_TLS_CERT",
	"DYNAMIC_CONFIG_WEBHOOK_TLS_KEY",
	"DYNAMIC_CONFIG_WEBHOOK_PLAINTEXT",
}

// selfRotateVariables are the reference selfRotate family (spec 02 §7.2).
var selfRotateVariables = []string{
	"DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE",
	"DYNAMIC_CONFIG_WEBHOOK_NAMESPACE",
	"DYNAMIC_CONFIG_WEBHOOK_SERVICE",
	"DYNAMIC_CONFIG_WEBHOOK_TLS_SECRET",
	"DYNAMIC_CONFIG_WEBHOOK_MWC",
	"DYNAMIC_CONFIG_WEBHOOK_VALIDITY_SECONDS",
}

// Variables returns the installation variables of spec 02 §2 in table order, followed by the document locator. The front door refuses to
// start with any of them set (spec 07 §1.2).
func Variables() []string {
	out := make([]string, 0, len(settings)+1)
	for _, s := range settings {
		out = append(out, s.Variable)
	}
	return append(out, DefaultsFileVariable)
}

// SetVariables are the installation variables lookup finds set, sorted (a
// front door refuses to start with one: spec 07 §1.2).
func SetVariables(lookup func(string) (string, bool)) []string {
	var set []string
	for _, v := range Variables() {
		if _, ok := lookup(v); ok {
			set = append(set, v)
		}
	}
	slices.Sort(set)
	return set
}

// DocumentKeys are the document's keys (spec 02 §2.6), in order.
func DocumentKeys() []string { return append([]string(nil), documentKeys...) }

// documentKeys is the document's key list (spec 02 §2.6), in order.
var documentKeys = func() []string {
	var out []string
	for _, s := range settings {
		if s.Key != "" {
			out = append(out, s.Key)
		}
	}
	return out
}()

// StoreKnobs are the per-store knobs of spec 02 §5.2, in the spec's order
// (the list of the unknown-knob message, which the spec words; the registry
// orders its rows otherwise, so the order is written here). overridable is
// the group's flag, not a value. Every other name is a registry row with a
// store tier (registry.TierStore) and every such row is here: a new one
// takes its place in the spec's order (ARCHITECTURE.md, "Where a change
// goes"; TestThePerStoreListsNameTheRegistrysKnobs fails until it does).
var StoreKnobs = []string{
	"agent-cpu-request", "agent-memory-request", "agent-cpu-limit", "agent-memory-limit",
	"file-mode", "watch-seconds", "mode", "volume-medium", "native-sidecar",
	"agent-run-as-user", "agent-run-as-group", "metrics-port", "path", "overridable",
	"endpoint", "endpoint-secret", "key", "token-secret", "password-secret", "ca-configmap",
	"tls-secret", "ssh-secret", "aws-secret", "section", "auth", "auth-mount", "auth-role",
	"auth-username", "auth-token-path", "namespace", "ref", "api-url", "template", "template-configmap",
}

// StoreShapedKnobs are the store-shaped knobs of spec 02 §4 — per-store
// only, refused at the fleet tier — in registry order: the rows marked
// StoreShaped.
var StoreShapedKnobs = func() []string {
	var out []string
	for _, r := range registry.Rows() {
		if r.StoreShaped {
			out = append(out, r.Name)
		}
	}
	return out
}()

// FleetKnobs are the knobs with a fleet default (spec 02 §2.1, registry.Fleet), in table order.
var FleetKnobs = func() []string {
	var out []string
	for _, s := range settings {
		if s.Kind == kindKnob {
			out = append(out, s.Knob)
		}
	}
	return out
}()

// BuiltIn returns the built-in default of a knob ("" when none): the registry's.
func BuiltIn(knob string) string {
	if r := registry.Lookup(knob); r != nil {
		return r.BuiltIn
	}
	return ""
}

// IsStore reports whether s is one of the nine stores.
func IsStore(s string) bool { return slices.Contains(knob.Stores, s) }
