// Package service is the decider's gRPC service (spec 06): it checks the
// request, takes one installation snapshot per call, converts the facts,
// runs the pure resolver, names the decision, converts it back, and logs and
// counts it. It holds no state beyond the installation store.
package service

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/resolve"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// Service implements deciderv1.DeciderServiceServer.
type Service struct {
	deciderv1.UnimplementedDeciderServiceServer

	store   *installationloader.Store
	classes *classes.Store // nil: classes off
	logger  *slog.Logger
	metrics *metrics.Decider
	// cluster is the decider's own cluster name (WithCluster).
	cluster string
	// decide is the pure resolver (resolve.Decide); decidePlan
	// answers the plan view without computing the values it would not send
	// (resolve.DecidePlan).
	decide, decidePlan func(*installation.Installation, *classes.Set, *decision.Facts) decision.Decision
	// leader and follower are the role's registries (WithLeader, WithFollower; nil = none).
	leader   Leader
	follower Follower
	// maxAnswer bounds an answer's encoded size (0 = unbounded); see LimitAnswers.
	maxAnswer int
	// tracing times the resolver's two stages (WithTracing; nil = off).
	tracing *tracing.Tracing
	// rollouts is the rollout state decisions are made under (WithRollouts; nil = none).
	rollouts *rolloutstate.State
	// watch serves the WatchRevision streams (watchrevision.go).
	watch revisionWatch
}

var _ deciderv1.DeciderServiceServer = (*Service)(nil)

// New returns the service over store. A nil logger discards; nil metrics
// record nothing.
func New(store *installationloader.Store, logger *slog.Logger, m *metrics.Decider) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: store, logger: logger, metrics: m, decide: resolve.Decide, decidePlan: resolve.DecidePlan}
}

// WithClasses turns classes on with the set cs holds (spec 08 §2): while cs
// holds no set yet (the watch's first sync), Decide answers Unavailable.
func (s *Service) WithClasses(cs *classes.Store) *Service {
	s.classes = cs
	return s
}

// WithTracing gives every Decide its resolve and plan spans, children of
// the call's server span (the server's otelgrpc stats handler), and the
// call's attributes (outcome, revision, decision id). nil = off. It returns s.
func (s *Service) WithTracing(t *tracing.Tracing) *Service {
	s.tracing = t
	return s
}

// LimitAnswers bounds the encoded size of every Decide answer to budget
// bytes, the message budget both ends of the gRPC hop hold to
// (msgbudget.Bytes of --max-request-bytes): an answer above it is replaced by
// a DynamicConfigMalformed refusal of the pod, so that a big pod is refused
// for what it is instead of looking like a decider outage at the front door.
// It returns s.
func (s *Service) LimitAnswers(budget int) *Service {
	s.maxAnswer = budget
	return s
}

// Decide answers one admission question (spec 06 §2–3, §6).
func (s *Service) Decide(ctx context.Context, req *deciderv1.DecisionRequest) (resp *deciderv1.DecisionResponse, err error) {
	start := time.Now()
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	caller, cluster, err := s.callerAndCluster(ctx, req)
	if err != nil {
		return nil, err
	}
	inst := s.store.Current()
	if inst == nil {
		return nil, errNoInstallation
	}
	if s.follower != nil && s.follower.Stale() {
		return nil, errStale
	}
	cls := s.classes.Current()
	if s.classes.Enabled() && cls == nil {
		return nil, errClassesNotSynced
	}
	// A panic from here on is recovered by the server's interceptor, which
	// answers and logs it under this decision id (Recovered).
	id := DecisionID(ctx)

	facts := FactsFromProto(req.GetPurpose(), req.GetPod())
	if facts.Purpose == decision.PurposeMutate && facts.ResourceKind == decision.KindUnspecified {
		facts.ResourceKind = decision.KindPod // 06 §6: unspecified is read as POD
	}
	var d decision.Decision
	if s.tracing == nil {
		decide := s.decide
		if req.GetView() == deciderv1.DecisionView_DECISION_VIEW_PLAN {
			decide = s.decidePlan
		}
		d = decide(inst, cls, facts)
	} else {
		d = s.decideTraced(ctx, inst, cls, facts, req.GetView() != deciderv1.DecisionView_DECISION_VIEW_PLAN)
	}
	if d.InstallationRevision == "" {
		d.InstallationRevision = inst.Revision
	}
	var under rolloutLine
	if r, t := s.rollouts.Current(inst.Revision); r != nil {
		// spec 10 §3–4: the candidate decides too; the route says who answers.
		d, under.cmp, under.route = s.underRollout(ctx, r, t, cls, facts, cluster, d, req.GetView())
		under.on = true
	}
	d.DecisionID = id
	d.Cluster, d.Caller = cluster, caller
	// Every answer names the installation that decided (the core wrote it,
	// decision.New) and the decision, so an audit-log line leads straight to
	// the decision's log line: this is the one writer of the decision id.
	annotations := make(map[string]string, len(d.AuditAnnotations)+5)
	for k, v := range d.AuditAnnotations {
		annotations[k] = v
	}
	annotations[annotation.AuditDecisionID] = id
	// The cluster is written only when known: named by the request or
	// the decider's own --cluster-name (docs/multi-cluster.md).
	if cluster != "" && annotations[annotation.AuditCluster] == "" {
		annotations[annotation.AuditCluster] = cluster
	}
	if s.follower != nil { // spec 09 §3: the leader's revision, and who decided
		annotations[annotation.AuditDeciderRole] = RoleFollower
		annotations[annotation.AuditFollowerID] = s.follower.ID()
	}
	if under.on && under.route != rollout.RouteShadow { // spec 10 §4: the canary's answer, or the guard's
		annotations[annotation.AuditRollout] = under.route.String()
	}
	d.AuditAnnotations = annotations
	resp = &deciderv1.DecisionResponse{Decision: DecisionToProtoView(&d, req.GetView())}
	if s.maxAnswer > 0 {
		if size := resp.SizeVT(); size > s.maxAnswer { // proto.Size, without reflection
			d = oversized(&d, size, s.maxAnswer)
			resp = &deciderv1.DecisionResponse{Decision: DecisionToProtoView(&d, req.GetView())}
		}
	}

	elapsed := time.Since(start)
	s.metrics.Decided(facts.Purpose, &d, elapsed)
	s.metrics.CallerDecided(caller, &d)
	var traceID, spanID string
	if s.tracing != nil {
		s.traced(ctx, facts, &d)
		traceID, spanID = tracing.IDs(ctx)
	}
	logDecision(ctx, s.logger, facts, &d, elapsed, s.follower, traceID, spanID, under)
	return resp, nil
}

// decideTraced is the resolver in its two stages, each in its span: resolve
// (the evaluation order, or the whole validating path) and plan (B61–B62,
// only when the decision gets that far).
func (s *Service) decideTraced(ctx context.Context, inst *installation.Installation, cls *classes.Set, facts *decision.Facts, withValues bool) decision.Decision {
	_, span := s.tracing.Start(ctx, SpanResolve)
	staged := resolve.Resolve(inst, cls, facts, withValues)
	span.End()
	if !staged.NeedsPlan() {
		return staged.Plan()
	}
	_, span = s.tracing.Start(ctx, SpanPlan)
	d := staged.Plan()
	span.End()
	return d
}

// Span names of the decider's own spans (docs/tracing.md).
const (
	SpanResolve = "resolve"
	SpanPlan    = "plan"
)

// traced sets the decision's attributes on the call's server span: ids,
// slugs and names only, never a value or a message.
func (s *Service) traced(ctx context.Context, f *decision.Facts, d *decision.Decision) {
	span := tracing.FromContext(ctx)
	if !span.Recording() {
		return
	}
	var reason, check string
	if len(d.Refusals) > 0 {
		reason, check = d.Refusals[0].Slug, d.Refusals[0].Check
	}
	span.SetAttributes(
		attribute.String(tracing.AttrDecisionID, d.DecisionID),
		attribute.String(tracing.AttrPurpose, purposeNames[f.Purpose]),
		attribute.String(tracing.AttrOutcome, outcomeNames[d.Outcome]),
		attribute.String(tracing.AttrReason, reason),
		attribute.String(tracing.AttrCheck, check),
		attribute.String(tracing.AttrRevision, d.InstallationRevision),
		attribute.String(tracing.AttrCluster, d.Cluster),
	)
}

// GetInstallation returns the effective installation and the last reload (spec 06 §5).
func (s *Service) GetInstallation(context.Context, *deciderv1.GetInstallationRequest) (*deciderv1.GetInstallationResponse, error) {
	inst := s.store.Current()
	if inst == nil {
		return nil, errNoInstallation
	}
	out := installationToProto(inst, s.store.LastReload())
	if set := s.classes.Current(); set != nil {
		out.Classes, out.ClassesRevision = classesToProto(set), set.Revision
	}
	s.roleToProto(out)
	s.rolloutToProto(out)
	return out, nil
}

// CheckAnswerSize is the check id of the refusal of an answer above the
// message budget.
const CheckAnswerSize = "answer.size"

// oversized is the refusal that replaces an answer of size bytes above the
// budget: the same decision id, revision and audit annotations, no plan.
func oversized(d *decision.Decision, size, budget int) decision.Decision {
	return decision.Decision{
		DecisionID:           d.DecisionID,
		InstallationRevision: d.InstallationRevision,
		AuditAnnotations:     d.AuditAnnotations,
		Outcome:              decision.OutcomeRefuse,
		Refusals: []decision.Refusal{{
			Reason:   decision.ReasonMalformed,
			Slug:     resolve.SlugMalformed,
			HTTPCode: 400,
			Check:    CheckAnswerSize,
			Message: fmt.Sprintf("dynamic-config.rs: the decision for this pod is %d bytes, above the %d-byte message budget "+
				"(twice --max-request-bytes); the values its annotations carry are too large", size, budget),
		}},
	}
}
