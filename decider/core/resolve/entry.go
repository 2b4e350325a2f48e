package resolve

import (
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// The entry steps B1–B5 (spec 01 §8.1, spec 08 §3): is the pod asking, and
// may it? Each either passes, refuses, or ends the decision as a skip.

// noPrefixedAnnotation is B1: a pod without a prefixed annotation is not asking.
func noPrefixedAnnotation(s *state) decision.SkipReason {
	if !hasPrefixed(s.f.Annotations) {
		return decision.SkipNoAnnotations
	}
	return decision.SkipUnspecified
}

// notCreate is B2: pods cannot change their containers after creation.
func notCreate(s *state) decision.SkipReason {
	if op := s.f.Operation; op != decision.OperationCreate && op != decision.OperationUnspecified {
		return decision.SkipNotCreate
	}
	return decision.SkipUnspecified
}

// classStep is B3: the class the pod names (spec 08 §3), unless the pod
// carries status: injected; every step after it sees the values the class
// filled. A decision that consulted the class set names its revision.
func classStep(s *state) *decision.Refusal {
	if !s.class.set || (s.status.set && s.status.value == "injected") {
		return nil
	}
	if s.classes != nil {
		s.classesRevision = s.classes.Revision
	}
	return s.resolveClass()
}

// statusMark is B4's refusals: a status the webhook did not write, or the
// mark without the injected container it stands for.
func statusMark(s *state) *decision.Refusal {
	if !s.status.set {
		return nil
	}
	if s.status.value != "injected" {
		return refuse("status.value", s.status.key, "", "dynamic-config.rs/status is "+q(s.status.value)+
			", and it is not a pod's to set: the webhook writes it — drop the annotation")
	}
	if !s.hasAgentContainer() {
		return refuse("status.no-agent", s.status.key, "", `dynamic-config.rs/status is "injected" but this pod carries no injected container (dynamic-config-agent or dynamic-config-init): the mark is the webhook's, and a copied manifest kept it without what it stood for — drop the annotation`)
	}
	return nil
}

// alreadyInjected is B4's skip: a pod the webhook already injected.
func alreadyInjected(s *state) decision.SkipReason {
	if s.status.set {
		return decision.SkipAlreadyInjected
	}
	return decision.SkipUnspecified
}

// notAsking is B5's skip: inject absent or "false".
func notAsking(s *state) decision.SkipReason {
	if !s.inject.set || s.inject.value == "false" {
		return decision.SkipNotRequested
	}
	return decision.SkipUnspecified
}

// WarnInjectMisspelled is the code of the warning a pod gets when it is not
// asking but carries a misspelling of dynamic-config.rs/inject (issue 40).
const WarnInjectMisspelled = "inject-misspelled"

// skipWarnings are the warnings of a skip: a pod that does not ask because
// its only inject keys are misspellings (NOT_REQUESTED without inject) is
// told so, one warning per misspelt key in byte order, instead of passing
// untouched in silence.
func (s *state) skipWarnings(why decision.SkipReason) []decision.Warning {
	if why != decision.SkipNotRequested || s.inject.set {
		return nil
	}
	var keys []string
	for k := range s.f.Annotations {
		if registry.MisspelledInject(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []decision.Warning
	for _, k := range keys {
		out = append(out, decision.Warning{Code: WarnInjectMisspelled, Message: k +
			` is not part of the contract: did you mean dynamic-config.rs/inject? The pod was admitted without the agent, since only dynamic-config.rs/inject "true" asks for it`})
	}
	return out
}
