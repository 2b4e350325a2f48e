package service

import (
	"context"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// SpanRollout is the span of the candidate's decision under a rollout.
const SpanRollout = "rollout.candidate"

// WithRollouts decides every request under the rollout st holds (spec 10
// §3–4): with a rollout in force whose candidate is not the active
// installation, each Decide decides with both, compares, counts, and
// answers with the active's decision, or in the canary slice with the
// candidate's (unless the guard falls back). nil = no rollouts. It returns s.
func (s *Service) WithRollouts(st *rolloutstate.State) *Service {
	s.rollouts = st
	return s
}

// Rollouts is the rollout state the service decides under (nil: none).
func (s *Service) Rollouts() *rolloutstate.State { return s.rollouts }

// underRollout decides the request with the rollout's candidate beside the
// active decision and returns the decision that answers and the route
// (spec 10 §3–4). The candidate decides with the request's view, so a
// canary answer carries what the request asked for; a PLAN request costs
// one more DecidePlan.
func (s *Service) underRollout(ctx context.Context, r *rollout.Rollout, t *rolloutstate.Tracker, cls *classes.Set,
	facts *decision.Facts, cluster string, active decision.Decision, view deciderv1.DecisionView) (decision.Decision, rollout.Comparison, rollout.Route) {
	decide := s.decide
	if view == deciderv1.DecisionView_DECISION_VIEW_PLAN {
		decide = s.decidePlan
	}
	var candidate decision.Decision
	if s.tracing == nil {
		candidate = decide(r.Candidate, cls, facts)
	} else {
		_, span := s.tracing.Start(ctx, SpanRollout)
		candidate = decide(r.Candidate, cls, facts)
		span.End()
	}
	if candidate.InstallationRevision == "" {
		candidate.InstallationRevision = r.Candidate.Revision
	}
	cmp := rollout.Compare(&active, &candidate)
	key := facts.Workload(cluster)
	route := r.Route(key, t.Halted(), cmp.Result)
	t.Record(key, purposeNames[facts.Purpose], cmp, route)
	switch route {
	case rollout.RouteCanary:
		return candidate, cmp, route
	case rollout.RouteFallback:
		t.Halt(key, cmp)
	}
	return active, cmp, route
}

// rolloutToProto fills GetInstallation.rollout.
func (s *Service) rolloutToProto(out *deciderv1.GetInstallationResponse) {
	if s.rollouts == nil {
		return
	}
	p := s.rollouts.Proto(true)
	if p == nil {
		return
	}
	if st, ok := s.rollouts.Status(); ok && st.LastReload != nil {
		p.LastReload = reloadToProto(st.LastReload)
	}
	out.Rollout = p
}
