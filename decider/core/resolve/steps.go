package resolve

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// step is one row of the mutating path's evaluation order (spec 01 §8.1).
// run returns the first refusal among the step's checks (nil when they all
// pass); skip, when set, ends the decision as a skip for a pod that is not
// asking; do prepares the state for the steps after it (no verdict).
type step struct {
	id   string
	run  func(s *state) *decision.Refusal
	skip func(s *state) decision.SkipReason
	do   func(s *state)
}

// steps B1–B60 in order, the first refusal or skip ends the decision. B61
// (conflicts) runs on the plan, B62 builds it (decide.go). The two preparation
// rows read the annotations (before B3, the first step that needs them) and
// resolve every knob's ladder (before B6, the first that reads values). A
// step without a run here gets its checks from the registry rows placed at
// it (Row.Default, placeRows).
var steps = placeRows([]step{
	{id: "B1", skip: noPrefixedAnnotation},
	{id: "B2", skip: notCreate},
	{id: "read", do: (*state).read},
	{id: "B3", run: classStep},
	{id: "B4", run: statusMark, skip: alreadyInjected},
	{id: "B5", run: onDefault(valueOf(registry.Inject)), skip: notAsking}, // inject.value: the row's grammar
	{id: "resolve", do: (*state).resolveRenders},
	{id: "B6", run: unknownKey},
	{id: "B7", run: emptyValue},
	{id: "B8", run: onDefault(valueOf(registry.Source))},
	{id: "B9", run: onDefault(pinOf(registry.Source))},
	{id: "B10", run: onDefault(storePins(true))},
	{id: "B11", run: onDefault(pairPins)},
	{id: "B12"}, // mode: Row.Default
	{id: "B13"}, // watch-seconds
	{id: "B14", run: onDefault(valuesOf(registry.TokenSecret, registry.PasswordSecret, registry.EndpointSecret, registry.CAConfigMap, registry.SSHSecret,
		registry.SchemaConfigMap, registry.CanaryConfigMap, registry.TemplateConfigMap, registry.TLSSecret, registry.ExtraSecret, registry.AWSSecret))},
	{id: "B15", run: endpointRequired},
	{id: "B16", run: onDefault(endpointBoth)},
	{id: "B17", run: onDefault(sshSecretAuth)},
	{id: "B18", run: onDefault(tlsSkipVerify)},
	{id: "B19"}, // volume-medium
	{id: "B20"}, // native-sidecar
	{id: "B21", run: onDefault(pinOf(registry.AgentCPURequest), pinOf(registry.AgentMemoryRequest), pinOf(registry.AgentCPULimit), pinOf(registry.AgentMemoryLimit))},
	{id: "B22", run: ephemeralStorage},
	{id: "B23", run: onDefault(valuesOf(registry.AgentCPURequest, registry.AgentMemoryRequest, registry.AgentCPULimit, registry.AgentMemoryLimit), cpuRequestAboveLimit, memoryRequestAboveLimit)},
	{id: "B24"}, // file-mode
	{id: "B25"}, // agent-run-as-user, agent-run-as-group
	{id: "B26", run: sameUser},
	{id: "B27", run: envInjectMode},
	{id: "B28", run: envRestart},
	{id: "B29", run: awsSecretSource},
	{id: "B30"}, // metrics-port
	{id: "B31", run: onDefault(valueOf(registry.Meta))},
	{id: "B32", run: onDefault(valueOf(registry.Dynamic))},
	{id: "B33", run: onDefault(valueOf(registry.RevokeOnShutdown))},
	{id: "B34", run: revokeGrace},
	{id: "B35", run: revokeGraceNeedsDynamic},
	{id: "B36", run: initFirst},
	{id: "B37", run: notifyHTTP},
	{id: "B38", run: onDefault(valueOf(registry.TLSReload))},
	{id: "B39", run: history},
	{id: "B40", run: canaryInit},
	{id: "B41", run: onDefault(valueOf(registry.Timeout))},
	{id: "B42", run: agentImage},
	{id: "B43", run: events},
	{id: "B44", run: onDefault(valueOf(registry.OnDrift))},
	{id: "B45", run: onDefault(valuesOf(registry.StartupPolicy, registry.OnDelete, registry.MaxDocumentBytes))},
	{id: "B46", run: revokeOnShutdownNeedsDynamic},
	{id: "B47", run: onDefault(valueOf(registry.Readiness))},
	{id: "B48", run: requireAck},
	{id: "B49", run: agentEnv},
	{id: "B50", run: injectContainers},
	{id: "B51", run: envInject},
	{id: "B52", run: onDefault(templateBoth)},
	{id: "B53", run: namedRenders},
	{id: "B54", run: alsoRenderings},
	{id: "B55", run: defaultPath},
	{id: "B56", run: outputDuplicate},
	{id: "B57", run: sourceRequired},
	{id: "B58", run: keyChecks},
	{id: "B59", run: sourceGates},
	{id: "B60", run: agentEnvGates},
})

// placeRows appends to each step the value check and pin of every registry
// row placed at it (Row.Default), in Seq order, after the step's own run. A
// row placed at a step the list lacks is a bug of the table: it panics at
// start-up (and in every test).
func placeRows(list []step) []step {
	placed := map[string][]registry.ID{}
	for _, id := range registry.All {
		if at := id.Row().Default; at.N != 0 {
			placed["B"+strconv.Itoa(at.N)] = append(placed["B"+strconv.Itoa(at.N)], id)
		}
	}
	for i := range list {
		ids := placed[list[i].id]
		if len(ids) == 0 {
			continue
		}
		delete(placed, list[i].id)
		slices.SortStableFunc(ids, func(a, b registry.ID) int { return a.Row().Default.Seq - b.Row().Default.Seq })
		var checks []renderCheck
		for _, id := range ids {
			checks = append(checks, valueOf(id), pinOf(id))
		}
		own, rows := list[i].run, onDefault(checks...)
		list[i].run = rows
		if own != nil {
			list[i].run = func(s *state) *decision.Refusal {
				if ref := own(s); ref != nil {
					return ref
				}
				return rows(s)
			}
		}
	}
	for at, ids := range placed {
		panic(fmt.Sprintf("registry: %s is placed at %s, a step the default render does not have", ids[0].Row().Name, at))
	}
	return list
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
