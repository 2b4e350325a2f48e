package resolve

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// Gate names as GateRuling records them (spec 06 §3.7).
const (
	GateSourceDeny    = "sourceDeny"
	GateSourceAllow   = "sourceAllow"
	GateAgentEnvAllow = "agentEnvAllow"
)

// sourceSubject is the {S} of the source gate templates (spec 04 §4.2).
func sourceSubject(r *render) string {
	switch {
	case r.name != "":
		return "dynamic-config.rs/source." + r.name + " is " + q(r.source)
	case fromPod(r.vals[registry.Source].tier):
		return "dynamic-config.rs/source is " + q(r.source)
	}
	return "the fleet default source " + q(r.source)
}

// sourceGates is B59: for each render in order, gate.source-deny, then
// gate.source-allow (an empty sourceAllow allows everything). Every ruling
// is recorded in Decision.Gates.
func sourceGates(s *state) *decision.Refusal {
	ns := s.f.Namespace
	for r := range s.renders {
		k := ""
		if fromPod(r.vals[registry.Source].tier) {
			k = r.ann[registry.Source].key
		}
		deny := s.inst.SourceDeny.Listing(ns)
		denied := installation.NameListed(deny, r.source)
		s.gates = append(s.gates, decision.GateRuling{Gate: GateSourceDeny, Subject: r.source, Render: r.name,
			Passed: !denied, Namespace: ns, Listing: deny})
		if denied {
			return refuseAs(registry.RefusePolicy, "gate.source-deny", k, r.name, sourceSubject(r)+", and source "+q(r.source)+" is turned off in namespace "+q(ns)+
				" (webhook.sourceDeny, DYNAMIC_CONFIG_WEBHOOK_SOURCE_DENY)")
		}
		if !s.inst.SourceAllow.Set() {
			s.gates = append(s.gates, decision.GateRuling{Gate: GateSourceAllow, Subject: r.source, Render: r.name,
				Passed: true, Namespace: ns})
			continue
		}
		allow := s.inst.SourceAllow.Listing(ns)
		allowed := installation.NameListed(allow, r.source)
		s.gates = append(s.gates, decision.GateRuling{Gate: GateSourceAllow, Subject: r.source, Render: r.name,
			Passed: allowed, Namespace: ns, Listing: allow})
		if allowed {
			continue
		}
		msg := sourceSubject(r) + ", which is not on the source allowlist for namespace " + q(ns)
		if len(allow) > 0 {
			msg += "; allowed here: " + strings.Join(allow, ", ")
		} else {
			msg += "; no source is currently allowed here"
		}
		return refuseAs(registry.RefusePolicy, "gate.source-allow", k, r.name, msg+" (webhook.sourceAllow, DYNAMIC_CONFIG_WEBHOOK_SOURCE_ALLOW)")
	}
	return nil
}

// agentEnvGates is B60: gate.agent-env for each agent-env name in the pod's order.
func agentEnvGates(s *state) *decision.Refusal {
	if len(s.agentEnv) == 0 {
		return nil
	}
	ns := s.f.Namespace
	allow := s.inst.AgentEnvAllow.Listing(ns)
	k := s.def.ann[registry.AgentEnv].key
	for _, e := range s.agentEnv {
		ok := installation.NameListed(allow, e.Name)
		s.gates = append(s.gates, decision.GateRuling{Gate: GateAgentEnvAllow, Subject: e.Name, Passed: ok,
			Namespace: ns, Listing: allow})
		if ok {
			continue
		}
		msg := "dynamic-config.rs/agent-env sets " + e.Name + ", which is not allowed in namespace " + q(ns)
		if len(allow) > 0 {
			msg += "; allowed here: " + strings.Join(allow, ", ")
		} else {
			msg += "; nothing is currently allowed here"
		}
		return refuseAs(registry.RefusePolicy, "gate.agent-env", k, "", msg+" (webhook.agentEnvAllow, DYNAMIC_CONFIG_WEBHOOK_AGENT_ENV_ALLOW)")
	}
	return nil
}
