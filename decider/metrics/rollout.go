package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
)

// Rollout is the rollout metrics of spec 10 §3–4:
// dynamic_config_rollout_decisions_total{candidate_revision,result} and
// dynamic_config_rollout_halted{candidate_revision}. The candidate_revision
// label takes one value at a time: the series of a candidate are created
// when it is put in force (every result at 0, halted 0) and deleted when
// another candidate, or none, takes its place. A nil *Rollout records
// nothing.
type Rollout struct {
	decisions *prometheus.CounterVec
	halted    *prometheus.GaugeVec

	mu      sync.Mutex
	current string // the candidate revision whose series exist
}

func newRollout() *Rollout {
	return &Rollout{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_rollout_decisions_total",
			Help: "Decisions compared under a rollout (spec 10 §3): the candidate installation's decision against the active's, by result.",
		}, []string{"candidate_revision", "result"}),
		halted: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_rollout_halted",
			Help: "1 while this decider has halted the rollout of the candidate (a canary decision newly refused a workload; spec 10 §4), else 0.",
		}, []string{"candidate_revision"}),
	}
}

// Rollout returns the rollout metrics of the decider (nil for a nil *Decider).
func (m *Decider) Rollout() *Rollout {
	if m == nil {
		return nil
	}
	return m.rollout
}

// RolloutSeries are one candidate's series, resolved once: Decided runs on
// every compared decision and looks no label up. A nil *RolloutSeries
// records nothing.
type RolloutSeries struct {
	results [6]prometheus.Counter
	halted  prometheus.Gauge
}

// Candidate makes candidateRevision the candidate whose series exist ("" =
// none): the previous candidate's series are deleted, the new one's created
// at 0. It returns the new series (nil for "").
func (m *Rollout) Candidate(candidateRevision string) *RolloutSeries {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.current != "" && m.current != candidateRevision {
		for _, r := range rollout.Results {
			m.decisions.DeleteLabelValues(m.current, r.String())
		}
		m.halted.DeleteLabelValues(m.current)
	}
	m.current = candidateRevision
	if candidateRevision == "" {
		return nil
	}
	s := &RolloutSeries{halted: m.halted.WithLabelValues(candidateRevision)}
	for _, r := range rollout.Results {
		s.results[r] = m.decisions.WithLabelValues(candidateRevision, r.String())
	}
	return s
}

// Decided counts one compared decision.
func (s *RolloutSeries) Decided(r rollout.Result) {
	if s == nil || r < 0 || int(r) >= len(s.results) {
		return
	}
	s.results[r].Inc()
}

// Halted sets the halted gauge.
func (s *RolloutSeries) Halted(halted bool) {
	if s == nil {
		return
	}
	v := 0.0
	if halted {
		v = 1
	}
	s.halted.Set(v)
}
