package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// The decider metrics are the callers file's observer.
var _ callers.Observer = (*Decider)(nil)

// callerMetrics are the per-caller counters and the callers-file reload
// metrics, present only with a callers file. The caller label takes only
// the names of the callers file in force, so its values are bounded by the
// file; a caller's series are created with its first call, never up front
// for every caller of the file.
type callerMetrics struct {
	decisions *prometheus.CounterVec
	denied    *prometheus.CounterVec
	reloads   *prometheus.CounterVec
	loadedAt  *prometheus.GaugeVec // no labels: one series once a file is in force

	known   map[string]struct{} // the names in force; guarded by Decider.callersMu
	created map[string]struct{} // the names that have series; guarded by Decider.callersMu
}

func newCallerMetrics() *callerMetrics {
	return &callerMetrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_caller_decisions_total",
			Help: "Decisions answered to a caller of the callers file, by caller and outcome.",
		}, []string{"caller", "outcome"}),
		denied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_caller_denied_total",
			Help: "Calls refused with PermissionDenied because the caller named a cluster it may not speak for, by caller.",
		}, []string{"caller"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_callers_reloads_total",
			Help: "Reloads of a changed or vanished callers file, by result.",
		}, []string{"result"}),
		loadedAt: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_callers_loaded_timestamp_seconds",
			Help: "When the callers set in force was put in force, in Unix seconds.",
		}, nil),
		known:   map[string]struct{}{},
		created: map[string]struct{}{},
	}
}

func (c *callerMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{c.decisions, c.denied, c.reloads, c.loadedAt}
}

// CallersInForce puts the callers file's names in force as the caller
// label's values: the series of callers no longer in the file are removed
// (series are created on first use), and the loaded timestamp is set. The
// first call also creates both reload series.
func (m *Decider) CallersInForce(names []string) {
	if m == nil {
		return
	}
	known := make(map[string]struct{}, len(names))
	for _, n := range names {
		known[n] = struct{}{}
	}
	m.callersMu.Lock()
	for old := range m.callers.created {
		if _, still := known[old]; !still {
			m.callers.decisions.DeletePartialMatch(prometheus.Labels{"caller": old})
			m.callers.denied.DeleteLabelValues(old)
			delete(m.callers.created, old)
		}
	}
	m.callers.known = known
	m.callersMu.Unlock()
	for _, r := range []string{ReloadResultOK, ReloadResultError} {
		m.callers.reloads.WithLabelValues(r)
	}
	m.callers.loadedAt.WithLabelValues().Set(float64(time.Now().UnixNano()) / 1e9)
}

// CallersReloaded counts one reload of the callers file by result.
func (m *Decider) CallersReloaded(ok bool) {
	if m == nil {
		return
	}
	result := ReloadResultError
	if ok {
		result = ReloadResultOK
	}
	m.callers.reloads.WithLabelValues(result).Inc()
}

// countCaller runs count on the caller's series when caller is in force,
// marking its series as created; the caller holds nothing.
func (m *Decider) countCaller(caller string, count func()) {
	m.callersMu.Lock()
	defer m.callersMu.Unlock()
	if _, ok := m.callers.known[caller]; !ok || caller == "" {
		return
	}
	m.callers.created[caller] = struct{}{}
	count()
}

// CallerDecided counts one decision answered to caller ("" = no callers
// file: not counted).
func (m *Decider) CallerDecided(caller string, d *decision.Decision) {
	if m == nil || d == nil {
		return
	}
	o, ok := outcomeLabels[d.Outcome]
	if !ok {
		return
	}
	m.countCaller(caller, func() { m.callers.decisions.WithLabelValues(caller, o).Inc() })
}

// CallerDenied counts one call of caller refused for the cluster it named.
func (m *Decider) CallerDenied(caller string) {
	if m == nil {
		return
	}
	m.countCaller(caller, func() { m.callers.denied.WithLabelValues(caller).Inc() })
}
