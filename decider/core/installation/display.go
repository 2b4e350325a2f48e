package installation

import (
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// displaySettings are the plain settings of spec 06 §5 (every row except
// storeDefaults, the gates and envPolicy), in table order.
func displaySettings(inst *Installation, readings []reading, inputs []input) []Setting {
	var out []Setting
	for i, s := range settings {
		switch s.Kind {
		case kindStoreDefaults, kindGate, kindEnvPolicy:
			continue
		}
		r := readings[i]
		row := Setting{Name: s.Name, Variable: s.Variable, ChartValue: s.ChartValue, BuiltIn: s.BuiltIn}
		if r.set {
			row.Set = true
			row.Value = redact.URL(r.display)
			row.Marker = r.marker
			row.Source = inputs[i].source
			row.Origin = inputs[i].origin
			if s.Kind == kindKnob {
				row.Pinned = inst.Fleet[s.Knob].Pinned
			}
		} else if s.BuiltIn != "" {
			row.Value = s.BuiltIn
			row.Source = SourceBuiltIn
		} else {
			row.Source = SourceUnset
		}
		out = append(out, row)
	}
	return out
}

// EnvPolicyWarning is logged and shown whenever an installation with an
// envPolicy is in force (spec 02 §11, 07 §1.6).
const EnvPolicyWarning = "envPolicy is set; it is enforced only where a ValidatingWebhookConfiguration routes /validate here"

// advisoryWarnings are the advisory warnings of spec 07 §1.6, in its order.
func advisoryWarnings(inst *Installation) []string {
	var out []string
	if p := inst.EnvPolicy; p != nil && p.Includes(envpolicy.TargetPods) && len(inst.AgentEnv) > 0 {
		for i, r := range p.Rules {
			if r.Reject != "" && r.Reject != envpolicy.RejectAnyIn {
				continue
			}
			for _, v := range r.Variables {
				for _, e := range inst.AgentEnv {
					if e.Name == v.Name && (!v.HasValue || v.Value == "" || v.Value == e.Value) {
						out = append(out, "envPolicy rule "+strconv.Itoa(i)+" (anyIn) rejects "+e.Name+
							", which the fleet agentEnv sets on every agent: every injected pod it applies to would be reported or refused")
					}
				}
			}
		}
	}
	for _, g := range inst.AgentEnvAllow.Groups {
		for _, n := range g.Names {
			if n != "*" {
				continue
			}
			where := "in namespace " + strconv.Quote(g.Namespace)
			if g.Namespace == "*" {
				where = "in every namespace"
			}
			out = append(out, `agentEnvAllow opens every agent-env name with "*" `+where+"; pods there may steer the agent's proxies and trust roots")
			break
		}
	}
	if inst.AllowTLSSkipVerify {
		out = append(out, "allowTlsSkipVerify is true: pods may turn off TLS verification towards their store with dynamic-config.rs/tls-skip-verify")
	}
	if !inst.FleetOverridable {
		for _, s := range settings {
			if s.Kind != kindKnob {
				continue
			}
			if v, ok := inst.Fleet[s.Knob]; ok && v.Marker == MarkerPinned {
				out = append(out, "fleet "+s.Key+` carries "!" while overridable is "false": the marker is redundant`)
			}
		}
	}
	if v, ok := inst.Fleet["metrics-port"]; ok && v.Pinned && v.Rule == OverrideFleetFlag {
		out = append(out, `fleet metricsPort is pinned by overridable=false; pods cannot opt out with metrics-port "0"`)
	}
	if inst.EnvPolicy != nil {
		out = append(out, EnvPolicyWarning)
	}
	return out
}

// DocumentOrigin is the origin of a document value: "<document>: <path>".
func DocumentOrigin(documentPath, path string) string { return documentOrigin(documentPath, path) }

// StoreGroupOrigin is where a store group came from: "DYNAMIC_CONFIG_AGENT_STORE_DEFAULTS (<store>)"
// or "<document>: storeDefaults[.<store>]".
func StoreGroupOrigin(inst *Installation, g *StoreGroup) string {
	if g.Source == SourceDocument {
		return documentOrigin(inst.DocumentPath, g.DocumentPath)
	}
	return varStoreDefaults + " (" + g.Store + ")"
}
