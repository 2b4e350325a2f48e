package resolve

import "github.com/dynamic-config-admission/dynamic-config/decider/decision"

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
	{"B8", onDefault(valueOf(iSource))},
	{"B9", onDefault(pinOf(iSource))},
	{"B10", onDefault(storePins(true))},
	{"B11", onDefault(pairPins)},
	{"B12", onDefault(valueOf(iMode), pinOf(iMode))},
	{"B13", onDefault(valueOf(iWatchSeconds), pinOf(iWatchSeconds))},
	{"B14", onDefault(valuesOf(iTokenSecret, iPasswordSecret, iEndpointSecret, iCAConfigMap, iSSHSecret,
		iSchemaConfigMap, iCanaryConfigMap, iTemplateConfigMap, iTLSSecret, iExtraSecret, iAWSSecret))},
	{"B15", endpointRequired},
	{"B16", onDefault(endpointBoth)},
	{"B17", onDefault(sshSecretAuth)},
	{"B18", onDefault(tlsSkipVerify)},
	{"B19", onDefault(valueOf(iVolumeMedium), pinOf(iVolumeMedium))},
	{"B20", onDefault(valueOf(iNativeSidecar), pinOf(iNativeSidecar))},
	{"B21", onDefault(pinOf(iCPURequest), pinOf(iMemoryRequest), pinOf(iCPULimit), pinOf(iMemoryLimit))},
	{"B22", ephemeralStorage},
	{"B23", onDefault(valuesOf(iCPURequest, iMemoryRequest, iCPULimit, iMemoryLimit), cpuRequestAboveLimit, memoryRequestAboveLimit)},
	{"B24", onDefault(valueOf(iFileMode), pinOf(iFileMode))},
	{"B25", onDefault(valueOf(iRunAsUser), pinOf(iRunAsUser), valueOf(iRunAsGroup), pinOf(iRunAsGroup))},
	{"B26", sameUser},
	{"B27", envInjectMode},
	{"B28", envRestart},
	{"B29", awsSecretSource},
	{"B30", onDefault(valueOf(iMetricsPort), pinOf(iMetricsPort))},
	{"B31", onDefault(valueOf(iMeta))},
	{"B32", onDefault(valueOf(iDynamic))},
	{"B33", onDefault(valueOf(iRevokeOnShutdown))},
	{"B34", revokeGrace},
	{"B35", revokeGraceNeedsDynamic},
	{"B36", initFirst},
	{"B37", notifyHTTP},
	{"B38", onDefault(valueOf(iTLSReload))},
	{"B39", history},
	{"B40", canaryInit},
	{"B41", onDefault(valueOf(iTimeout))},
	{"B42", agentImage},
	{"B43", events},
	{"B44", onDefault(valueOf(iOnDrift))},
	{"B45", onDefault(valuesOf(iStartupPolicy, iOnDelete, iMaxDocumentBytes))},
	{"B46", revokeOnShutdownNeedsDynamic},
	{"B47", onDefault(valueOf(iReadiness))},
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
func valueOf(i int) renderCheck {
	return func(s *state, r *render) *decision.Refusal { return s.checkValue(r, i) }
}

// valuesOf is valueOf for several keys, in order.
func valuesOf(keys ...int) renderCheck {
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
func pinOf(i int) renderCheck {
	return func(s *state, r *render) *decision.Refusal { return s.checkPin(r, i) }
}

// pinOrder is the pin order of the store-shaped knobs (step B10), path included.
var pinOrder = []int{iEndpoint, iEndpointSecret, iKey, iPath, iTokenSecret, iPasswordSecret, iCAConfigMap,
	iTLSSecret, iSSHSecret, iAWSSecret, iSection, iAuth, iAuthMount, iAuthRole, iAuthUsername,
	iAuthTokenPath, iNamespace, iRef, iAPIURL, iTemplate, iTemplateConfigMap}

// storePins is pin.<knob> for the store-shaped knobs in pin order; named
// renders skip path (no tier answers it).
func storePins(withPath bool) renderCheck {
	return func(s *state, r *render) *decision.Refusal {
		for _, i := range pinOrder {
			if i == iPath && !withPath {
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
	if ref := s.checkPairPin(r, iEndpoint, iEndpointSecret, "pair-pin.endpoint"); ref != nil {
		return ref
	}
	return s.checkPairPin(r, iTemplate, iTemplateConfigMap, "pair-pin.template")
}
