package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// Restart policies of a pod that must finish (spec-changes, issue 20).
const (
	restartNever     = "Never"
	restartOnFailure = "OnFailure"
)

// mustFinish reports whether the pod's restartPolicy lets it complete: a
// classic sidecar that never exits keeps such a pod running forever.
func mustFinish(in *Input) bool {
	p := in.pod().RestartPolicy
	return p == restartNever || p == restartOnFailure
}

// watches reports whether the plan places watching agents (mode sidecar or both).
func watches(in *Input) bool {
	mode, _ := lookup(&in.Default, registry.Mode)
	return mode == "sidecar" || mode == "both"
}

// nativeWatchers reports whether the watching agents go to initContainers as
// native sidecars: native-sidecar is true, or the pod must finish and did
// not choose the placement itself (issue 20).
func nativeWatchers(in *Input) bool {
	if native, _ := lookup(&in.Default, registry.NativeSidecar); native == "true" {
		return true
	}
	return mustFinish(in) && !in.PlacementExplicit
}

// placementWarning is the warning of a pod that must finish and has
// watching agents: why they became native sidecars, or that the pod, which
// chose classic sidecars, will never complete. "" when neither applies.
func placementWarning(in *Input) (code, text string) {
	if !watches(in) || !mustFinish(in) {
		return "", ""
	}
	if native, _ := lookup(&in.Default, registry.NativeSidecar); native == "true" {
		return "", ""
	}
	policy := in.pod().RestartPolicy
	if in.PlacementExplicit {
		return WarnPodNeverCompletes, `native-sidecar is "false" on a pod with restartPolicy ` + policy +
			`: the watching agent runs in containers and never exits, so the pod will never complete; native-sidecar "true" or mode "init" lets it complete`
	}
	return WarnNativeSidecarChosen, "restartPolicy is " + policy +
		`: the watching agent runs as a native sidecar (in initContainers with restartPolicy Always) so that the pod can complete; in containers it would never exit`
}
