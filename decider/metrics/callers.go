package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
)

// callerMetrics are the per-caller counters, present only with a callers
// file. Their caller label takes only the names of the callers file in force
// (SetCallers), so its values are bounded by the file.
type callerMetrics struct {
	decisions *prometheus.CounterVec
	denied    *prometheus.CounterVec
	names     []string
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
	}
}

// SetCallers puts the callers file's names in force as the caller label's
// values: their series are created, those of callers no longer in the file
// are removed.
func (m *Decider) SetCallers(names []string) {
	if m == nil {
		return
	}
	m.callersMu.Lock()
	defer m.callersMu.Unlock()
	for _, old := range m.callers.names {
		if !slices.Contains(names, old) {
			m.callers.decisions.DeletePartialMatch(prometheus.Labels{"caller": old})
			m.callers.denied.DeleteLabelValues(old)
		}
	}
	m.callers.names = slices.Clone(names)
	for _, n := range names {
		for _, o := range []string{OutcomeSkip, OutcomeInject, OutcomeRefuse, OutcomeAllow} {
			m.callers.decisions.WithLabelValues(n, o)
		}
		m.callers.denied.WithLabelValues(n)
	}
}

// known reports whether name is a caller in force; the caller holds callersMu.
func (m *Decider) known(name string) bool {
	return name != "" && slices.Contains(m.callers.names, name)
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
	m.callersMu.Lock()
	defer m.callersMu.Unlock()
	if m.known(caller) {
		m.callers.decisions.WithLabelValues(caller, o).Inc()
	}
}

// CallerDenied counts one call of caller refused for the cluster it named.
func (m *Decider) CallerDenied(caller string) {
	if m == nil {
		return
	}
	m.callersMu.Lock()
	defer m.callersMu.Unlock()
	if m.known(caller) {
		m.callers.denied.WithLabelValues(caller).Inc()
	}
}
