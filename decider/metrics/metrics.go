// Package metrics holds every decider metric of spec 07 §5: the decision
// counters and histogram, the env-policy findings, the installation reload
// metrics (it implements installationloader.ReloadObserver) and the gRPC server
// metrics of the go-grpc-middleware Prometheus provider, plus the Go runtime
// and process collectors. No metric carries a namespace, pod or value label.
// A nil *Decider is valid and records nothing (tests, the offline door).
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/internal/promruntime"
)

// DecisionBuckets are the decision-duration histogram buckets, in seconds (spec 07 §5).
var DecisionBuckets = []float64{0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05}

// Decider is the decider's metric set.
type Decider struct {
	decisions  *prometheus.CounterVec
	refusals   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	findings   *prometheus.CounterVec
	reloads    *prometheus.CounterVec
	problems   prometheus.Gauge
	info       *prometheus.GaugeVec
	loadedAt   prometheus.Gauge
	infoMu     sync.Mutex // keeps installation_info at one series
	grpcServer *GRPCServer
	callers    *callerMetrics
	callersMu  sync.Mutex // guards callers.known and callers.created
	rollout    *Rollout
	// decided are the per-decision series, resolved once from the enums:
	// Decided runs on every decision and looks no label up.
	decided decidedSeries
}

// decidedSeries are Decided's series by the core's enums.
type decidedSeries struct {
	duration map[decision.Purpose]prometheus.Observer
	outcomes map[purposeOutcome]prometheus.Counter
	refusals map[decision.Reason]prometheus.Counter
}

// purposeOutcome keys the decisions series.
type purposeOutcome struct {
	purpose decision.Purpose
	outcome decision.Outcome
}

// NewDecider creates the decider metrics and registers them, the gRPC server
// metrics and the Go runtime and process collectors with reg. Label values
// known up front are pre-created so every series is exported from the start.
// It panics when a decider metric is already registered with reg (a wiring bug);
// the runtime collectors may already be there (serve shares one registry).
func NewDecider(reg prometheus.Registerer) *Decider {
	m := &Decider{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_decisions_total",
			Help: "Decisions answered by the decider, by purpose and outcome.",
		}, []string{"purpose", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_decision_refusals_total",
			Help: "Refusing decisions, by refusal reason.",
		}, []string{"reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dynamic_config_decision_duration_seconds",
			Help:    "Time to decide one request, by purpose.",
			Buckets: DecisionBuckets,
		}, []string{"purpose"}),
		findings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_env_policy_findings_total",
			Help: "Environment-variable policy rules that rejected an object, by rule mode.",
		}, []string{"mode"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_installation_reloads_total",
			Help: "Installation reload attempts, by result.",
		}, []string{"result"}),
		problems: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_installation_reload_problems",
			Help: "Problems in the last rejected installation reload; 0 after a good one.",
		}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_installation_info",
			Help: "The installation in force: value 1, labelled with its revision.",
		}, []string{"revision"}),
		loadedAt: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_installation_loaded_timestamp_seconds",
			Help: "When the installation in force was put in force, in Unix seconds.",
		}),
		grpcServer: NewGRPCServer(),
		callers:    newCallerMetrics(),
		rollout:    newRollout(),
	}
	reg.MustRegister(m.decisions, m.refusals, m.duration, m.findings, m.reloads,
		m.problems, m.info, m.loadedAt, m.grpcServer, m.rollout.decisions, m.rollout.halted)
	reg.MustRegister(m.callers.collectors()...)
	if err := promruntime.Register(reg); err != nil {
		panic(err)
	}
	m.decided = decidedSeries{
		duration: make(map[decision.Purpose]prometheus.Observer),
		outcomes: make(map[purposeOutcome]prometheus.Counter),
		refusals: make(map[decision.Reason]prometheus.Counter),
	}
	for p, pl := range purposeLabels {
		m.decided.duration[p] = m.duration.WithLabelValues(pl)
	}
	for _, o := range []decision.Outcome{decision.OutcomeSkip, decision.OutcomeInject, decision.OutcomeRefuse} {
		m.decided.outcomes[purposeOutcome{decision.PurposeMutate, o}] = m.decisions.WithLabelValues(PurposeMutate, outcomeLabels[o])
	}
	for _, o := range []decision.Outcome{decision.OutcomeSkip, decision.OutcomeRefuse, decision.OutcomeAllow} {
		m.decided.outcomes[purposeOutcome{decision.PurposeValidate, o}] = m.decisions.WithLabelValues(PurposeValidate, outcomeLabels[o])
	}
	for r, rl := range reasonLabels {
		m.decided.refusals[r] = m.refusals.WithLabelValues(rl)
	}
	for _, mode := range []string{ModeEnforce, ModeWarn, ModeAudit} {
		m.findings.WithLabelValues(mode)
	}
	for _, r := range []string{ReloadResultOK, ReloadResultError, ReloadResultUnchanged} {
		m.reloads.WithLabelValues(r)
	}
	return m
}

// GRPCServer returns the gRPC server metrics (grpc_server_started_total,
// grpc_server_handled_total, grpc_server_handling_seconds) whose interceptor
// the server chains first. It is nil for a nil *Decider.
func (m *Decider) GRPCServer() *GRPCServer {
	if m == nil {
		return nil
	}
	return m.grpcServer
}
