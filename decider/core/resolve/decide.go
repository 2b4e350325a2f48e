// Package resolve is the pure core of the decider: Decide turns an
// installation snapshot, the class set and a pod's facts into a Decision
// (spec 01 §8); DecidePlan is the same decision without the values'
// provenance, and Resolve with Staged.Plan the same in its two stages. The
// mutating path walks the evaluation order B1–B62 (first failure wins),
// resolves every knob over the tiers (annotation > per-store default >
// fleet default > built-in) with its provenance, and hands the resolved
// values to the plan builder; the validating path is the env policy's.
//
// Nothing here does I/O, logs, or knows about gRPC.
package resolve

import (
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/plan"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// Agent container names the status mark looks for (spec 01 §6).
const (
	agentContainer = "dynamic-config-agent"
	initContainer  = "dynamic-config-init"
)

// Decide is the one pure function of the decider: the installation, the
// class set (spec 08; nil when classes are off — an input like the
// installation, nothing is looked up) and the pod's facts make the decision.
// Purpose VALIDATE is the environment-variable policy (spec 05); MUTATE (or
// unspecified) is the annotation contract (spec 01). DecisionID is left
// empty.
func Decide(inst *installation.Installation, cls *classes.Set, f *decision.Facts) decision.Decision {
	st := Resolve(inst, cls, f, true)
	return st.Plan()
}

// DecidePlan is Decide without the per-value provenance: the renders carry
// their name, source and agent containers but no values. Everything else —
// outcome, refusals, warnings, audit annotations, plan, gates — is
// Decide's. It answers DECISION_VIEW_PLAN (spec 06 §2.1, docs/spec-changes.md),
// which never sends the values, so they are not computed.
func DecidePlan(inst *installation.Installation, cls *classes.Set, f *decision.Facts) decision.Decision {
	st := Resolve(inst, cls, f, false)
	return st.Plan()
}

// resolveSteps walks the evaluation order up to the plan (B1–B60); ok says
// the decision is final there (a refusal or a skip).
func (s *state) resolveSteps(d decision.Decision) (decision.Decision, bool) {
	for _, st := range steps {
		if st.do != nil {
			st.do(s)
		}
		if st.run != nil {
			if ref := st.run(s); ref != nil {
				return refused(s.stamp(d), ref), true
			}
		}
		if st.skip != nil {
			if why := st.skip(s); why != decision.SkipUnspecified {
				d = skip(s.stamp(d), why)
				d.Warnings = s.skipWarnings(why)
				return d, true
			}
		}
	}
	return d, false
}

// Staged is one decision taken in its two stages, for a caller that times
// them (decider/service's resolve and plan spans): Resolve walks the
// evaluation order up to the plan, Plan builds it. Decide is both at once.
type Staged struct {
	d decision.Decision
	s *state // nil: the decision was final after Resolve
}

// Resolve is the first stage of Decide (withValues) or DecidePlan: the
// validating path whole, or the mutating path's evaluation order B1–B60.
func Resolve(inst *installation.Installation, cls *classes.Set, f *decision.Facts, withValues bool) Staged {
	if inst == nil {
		inst = installation.Empty()
	}
	if f == nil {
		f = &decision.Facts{}
	}
	if f.Purpose == decision.PurposeValidate {
		return Staged{d: envpolicy.Decide(inst.EnvPolicy, inst.Revision, f)}
	}
	d := decision.New(inst.Revision)
	s := newState(inst, f, cls, withValues)
	if done, ok := s.resolveSteps(d); ok {
		s.release()
		return Staged{d: done}
	}
	return Staged{d: d, s: s}
}

// NeedsPlan reports whether the decision still has its plan stage (B61–B62).
func (st *Staged) NeedsPlan() bool { return st.s != nil }

// Plan is the second stage: it builds the plan when the decision needs one
// and returns the decision. It is called once: the state goes back to the
// pool, and a second call returns the decision before its plan.
func (st *Staged) Plan() decision.Decision {
	if st.s == nil {
		return st.d
	}
	s := st.s
	st.s = nil
	d := s.plan(st.d)
	s.release()
	return d
}

// plan is B61–B62: build the plan, check it against the pod, inject.
func (s *state) plan(d decision.Decision) decision.Decision {
	var in plan.Input
	s.planInput(&in)
	p := plan.Build(&in) // the plan builder (spec 03 §2–3, §6.1)
	if ref := conflicts(s, p); ref != nil {
		return refused(s.stamp(d), ref)
	}
	d = s.stampClasses(d)
	d.Outcome = decision.OutcomeInject
	d.Plan = p
	d.Gates = s.gates
	d.Renders = s.output(true)
	for i := range d.Renders {
		d.Renders[i].AgentContainers = plan.RenderAgents(p, d.Renders[i].Name)
	}
	d.Warnings = withDeprecations(plan.Warnings(&in), s)
	return d
}

func hasPrefixed(annotations map[string]string) bool {
	for k := range annotations {
		if annotation.Prefixed(k) {
			return true
		}
	}
	return false
}

// stamp adds what the steps so far found to d: the classes revision when the
// class set was consulted (B3), and, once the knobs are resolved, the gate
// rulings and the renders as looked up (unvalidated).
func (s *state) stamp(d decision.Decision) decision.Decision {
	d = s.stampClasses(d)
	if s.resolved {
		d.Gates = s.gates
		d.Renders = s.output(false)
	}
	return d
}

// stampClasses names the classes revision when B3 consulted the class set.
func (s *state) stampClasses(d decision.Decision) decision.Decision {
	if s.classesRevision != "" {
		d.ClassesRevision = s.classesRevision
		d.AuditAnnotations[annotation.AuditClassesRevision] = s.classesRevision
	}
	return d
}

func skip(d decision.Decision, why decision.SkipReason) decision.Decision {
	d.Outcome, d.SkipReason = decision.OutcomeSkip, why
	return d
}

func refused(d decision.Decision, r *decision.Refusal) decision.Decision {
	d.Outcome = decision.OutcomeRefuse
	d.Refusals = []decision.Refusal{*r}
	return d
}

// hasAgentContainer reports whether spec.containers or spec.initContainers
// hold an injected agent (dynamic-config-agent or dynamic-config-init).
func (s *state) hasAgentContainer() bool {
	for _, list := range [2][]decision.Container{s.f.Containers, s.f.InitContainers} {
		for i := range list {
			if n := list[i].Name; n == agentContainer || n == initContainer {
				return true
			}
		}
	}
	return false
}

// anyDeprecated says whether any registry row is deprecated (none in this version).
var anyDeprecated = func() bool {
	for i := range rows {
		if rows[i].Deprecated() {
			return true
		}
	}
	return false
}()

// withDeprecations inserts the deprecated-key warnings (spec 03 §6.1 rule 7)
// after the default render's warnings and before the named renders' ones.
func withDeprecations(warnings []decision.Warning, s *state) []decision.Warning {
	if !anyDeprecated {
		return warnings
	}
	var deprecated []decision.Warning
	for k := range s.f.Annotations {
		c := registry.Classify(k)
		if (c.Kind == registry.KindRegistry || c.Kind == registry.KindRendered) && rows[c.Row].Deprecated() {
			deprecated = append(deprecated, decision.Warning{Code: "deprecated-key", Message: rows[c.Row].DeprecationMessage(k)})
		}
	}
	if len(deprecated) == 0 {
		return warnings
	}
	sortWarnings(deprecated)
	at := firstNamedRenderWarning(warnings)
	out := make([]decision.Warning, 0, len(warnings)+len(deprecated))
	out = append(out, warnings[:at]...)
	out = append(out, deprecated...)
	return append(out, warnings[at:]...)
}

// firstNamedRenderWarning is the index of the first warning of a named
// render (its Render set), len(warnings) when there is none.
func firstNamedRenderWarning(warnings []decision.Warning) int {
	for i := range warnings {
		if warnings[i].Render != "" {
			return i
		}
	}
	return len(warnings)
}

func sortWarnings(w []decision.Warning) {
	slices.SortFunc(w, func(a, b decision.Warning) int { return strings.Compare(a.Message, b.Message) })
}
