package metrics

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// Values of the reload result label.
const (
	ReloadResultOK        = "ok"
	ReloadResultError     = "error"
	ReloadResultUnchanged = "unchanged"
)

// The decider metrics are the installation's reload observer.
var _ installationloader.ReloadObserver = (*Decider)(nil)

// ReloadOK counts a valid, changed installation that was swapped in and
// clears the problem gauge.
func (m *Decider) ReloadOK(oldRevision, newRevision string) {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(ReloadResultOK).Inc()
	m.problems.Set(0)
}

// ReloadRejected counts a rejected reload and records its problem count.
func (m *Decider) ReloadRejected(problems int) {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(ReloadResultError).Inc()
	m.problems.Set(float64(problems))
}

// ReloadUnchanged counts a reload that left the revision as it was and
// clears the problem gauge.
func (m *Decider) ReloadUnchanged() {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(ReloadResultUnchanged).Inc()
	m.problems.Set(0)
}

// InForce records the installation now in force: one
// dynamic_config_installation_info series labelled with its revision, and
// its loaded timestamp.
func (m *Decider) InForce(inst *installation.Installation) {
	if m == nil || inst == nil {
		return
	}
	m.infoMu.Lock()
	m.info.Reset()
	m.info.WithLabelValues(inst.Revision).Set(1)
	m.infoMu.Unlock()
	m.loadedAt.Set(float64(inst.LoadedAt.UnixNano()) / 1e9)
}
