package installationloader

import "github.com/dynamic-config-admission/dynamic-config/decider/core/installation"

// ReloadObserver is told about every installation put in force and every
// reload attempt (spec 02 §11). The decider metrics (spec 07 §5) implement it:
//
//	ReloadOK        → dynamic_config_installation_reloads_total{result="ok"}++,
//	                  dynamic_config_installation_reload_problems = 0
//	ReloadRejected  → dynamic_config_installation_reloads_total{result="error"}++,
//	                  dynamic_config_installation_reload_problems = problems
//	ReloadUnchanged → dynamic_config_installation_reloads_total{result="unchanged"}++,
//	                  dynamic_config_installation_reload_problems = 0
//	InForce         → dynamic_config_installation_info{revision} = 1 (one series),
//	                  dynamic_config_installation_loaded_timestamp_seconds = inst.LoadedAt
//
// Watch calls InForce once when it starts (for the installation already in
// force) and again after every successful swap, right after ReloadOK.
// Implementations must be safe for concurrent use.
type ReloadObserver interface {
	// ReloadOK reports a valid, changed installation that was swapped in.
	ReloadOK(oldRevision, newRevision string)
	// ReloadRejected reports an invalid (or deleted) document; the last good
	// installation stays in force.
	ReloadRejected(problems int)
	// ReloadUnchanged reports a document change that left the revision as it was.
	ReloadUnchanged()
	// InForce reports the installation now in force.
	InForce(inst *installation.Installation)
}

// NopObserver is a ReloadObserver that records nothing.
type NopObserver struct{}

// ReloadOK implements ReloadObserver.
func (NopObserver) ReloadOK(string, string) {}

// ReloadRejected implements ReloadObserver.
func (NopObserver) ReloadRejected(int) {}

// ReloadUnchanged implements ReloadObserver.
func (NopObserver) ReloadUnchanged() {}

// InForce implements ReloadObserver.
func (NopObserver) InForce(*installation.Installation) {}

// Observers tells every one of its observers, in order.
type Observers []ReloadObserver

// ReloadOK implements ReloadObserver.
func (o Observers) ReloadOK(oldRevision, newRevision string) {
	for _, x := range o {
		x.ReloadOK(oldRevision, newRevision)
	}
}

// ReloadRejected implements ReloadObserver.
func (o Observers) ReloadRejected(problems int) {
	for _, x := range o {
		x.ReloadRejected(problems)
	}
}

// ReloadUnchanged implements ReloadObserver.
func (o Observers) ReloadUnchanged() {
	for _, x := range o {
		x.ReloadUnchanged()
	}
}

// InForce implements ReloadObserver.
func (o Observers) InForce(inst *installation.Installation) {
	for _, x := range o {
		x.InForce(inst)
	}
}
