package resolve

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/registry"
)

// step is one row of the mutating path's evaluation order (spec 01 §8.1):
// it returns the first refusal among its checks, nil when they all pass.
type step struct {
	id  string
	run func(s *state) *decision.Refusal
}

// steps B6–B60 in order; the first refusal wins. B61 (conflicts) runs on the
// plan, B62 builds it (decide.go).
var steps = []step{
	{"B6", unknownKey},
	{"B7", emptyValue},
	{"B8", onDefault(valueOf(registry.Source))},
	{"B9", onDefault(pinOf(registry.Source))},
	{"B10", onDefault(storePins(true))},
	{"B11", onDefault(pairPins)},
	{"B12", onDefault(valueOf(registry.Mode), pinOf(registry.Mode))},
	{"B13", onDefault(valueOf(registry.WatchSeconds), pinOf(registry.WatchSeconds))},
	{"B14", onDefault(valuesOf(registry.TokenSecret, registry.PasswordSecret, registry.EndpointSecret, registry.CAConfigMap, registry.SSHSecret,
		registry.SchemaConfigMap, registry.CanaryConfigMap, registry.TemplateConfigMap, registry.TLSSecret, registry.ExtraSecret, registry.AWSSecret))},
	{"B15", endpointRequired},
	{"B16", onDefault(endpointBoth)},
	{"B17", onDefault(sshSecretAuth)},
	{"B18", onDefault(tlsSkipVerify)},
	{"B19", onDefault(valueOf(registry.VolumeMedium), pinOf(registry.VolumeMedium))},
	{"B20", onDefault(valueOf(registry.NativeSidecar), pinOf(registry.NativeSidecar))},
	{"B21", onDefault(pinOf(registry.AgentCPURequest), pinOf(registry.AgentMemoryRequest), pinOf(registry.AgentCPULimit), pinOf(registry.AgentMemoryLimit))},
	{"B22", ephemeralStorage},
	{"B23", onDefault(valuesOf(registry.AgentCPURequest, registry.AgentMemoryRequest, registry.AgentCPULimit, registry.AgentMemoryLimit), cpuRequestAboveLimit, memoryRequestAboveLimit)},
	{"B24", onDefault(valueOf(registry.FileMode), pinOf(registry.FileMode))},
	{"B25", onDefault(valueOf(registry.AgentRunAsUser), pinOf(registry.AgentRunAsUser), valueOf(registry.AgentRunAsGroup), pinOf(registry.AgentRunAsGroup))},
	{"B26", sameUser},
	{"B27", envInjectMode},
	{"B28", envRestart},
	{"B29", awsSecretSource},
	{"B30", onDefault(valueOf(registry.MetricsPort), pinOf(registry.MetricsPort))},
	{"B31", onDefault(valueOf(registry.Meta))},
	{"B32", onDefault(valueOf(registry.Dynamic))},
	{"B33", onDefault(valueOf(registry.RevokeOnShutdown))},
	{"B34", revokeGrace},
	{"B35", revokeGraceNeedsDynamic},
	{"B36", initFirst},
	{"B37", notifyHTTP},
	{"B38", onDefault(valueOf(registry.TLSReload))},
	{"B39", history},
	{"B40", canaryInit},
	{"B41", onDefault(valueOf(registry.Timeout))},
	{"B42", agentImage},
	{"B43", events},
	{"B44", onDefault(valueOf(registry.OnDrift))},
	{"B45", onDefault(valuesOf(registry.StartupPolicy, registry.OnDelete, registry.MaxDocumentBytes))},
	{"B46", revokeOnShutdownNeedsDynamic},
	{"B47", onDefault(valueOf(registry.Readiness))},
	{"B48", requireAck},
	{"B49", agentEnv},
	{"B50", injectContainers},
	{"B51", envInject},
	{"B52", onDefault(templateBoth)},
	{"B53", namedRenders},
	{"B54", alsoRenderings},
	{"B55", defaultPath},
	{"B56", outputDuplicate},
	{"B57", sourceRequired},
	{"B58", keyChecks},
	{"B59", sourceGates},
	{"B60", agentEnvGates},
}

// renderCheck is a check on one render.
type renderCheck func(s *state, r *render) *decision.Refusal

// onDefault runs render checks, in order, on the default render.
func onDefault(checks ...renderCheck) func(*state) *decision.Refusal {
	return func(s *state) *decision.Refusal {
		return runChecks(s, &s.def, checks)
	}
}

func runChecks(s *state, r *render, checks []renderCheck) *decision.Refusal {
	for _, c := range checks {
		if ref := c(s, r); ref != nil {
			return ref
		}
	}
	return nil
}

// valueOf is the key's own value check on the pod's annotation.
func valueOf(i registry.ID) renderCheck {
	return func(s *state, r *render) *decision.Refusal { return s.checkValue(r, i) }
}

// valuesOf is valueOf for several keys, in order.
func valuesOf(keys ...registry.ID) renderCheck {
	return func(s *state, r *render) *decision.Refusal {
		for _, i := range keys {
			if ref := s.checkValue(r, i); ref != nil {
				return ref
			}
		}
		return nil
	}
}

// pinOf is pin.<knob>.
func pinOf(i registry.ID) renderCheck {
	return func(s *state, r *render) *decision.Refusal { return s.checkPin(r, i) }
}

// pinOrder is the pin order of the store-shaped knobs (step B10), path included.
var pinOrder = []registry.ID{registry.Endpoint, registry.EndpointSecret, registry.Key, registry.Path, registry.TokenSecret, registry.PasswordSecret, registry.CAConfigMap,
	registry.TLSSecret, registry.SSHSecret, registry.AWSSecret, registry.Section, registry.Auth, registry.AuthMount, registry.AuthRole, registry.AuthUsername,
	registry.AuthTokenPath, registry.Namespace, registry.Ref, registry.APIURL, registry.Template, registry.TemplateConfigMap}

// storePins is pin.<knob> for the store-shaped knobs in pin order; named
// renders skip path (no tier answers it).
func storePins(withPath bool) renderCheck {
	return func(s *state, r *render) *decision.Refusal {
		for _, i := range pinOrder {
			if i == registry.Path && !withPath {
				continue
			}
			if ref := s.checkPin(r, i); ref != nil {
				return ref
			}
		}
		return nil
	}
}

// pairPins is pair-pin.endpoint then pair-pin.template.
func pairPins(s *state, r *render) *decision.Refusal {
	if ref := s.checkPairPin(r, registry.Endpoint, registry.EndpointSecret, "pair-pin.endpoint"); ref != nil {
		return ref
	}
	return s.checkPairPin(r, registry.Template, registry.TemplateConfigMap, "pair-pin.template")
}
