package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
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

// WarnAppStartsFirst is the warning of a native sidecar that nothing makes
// the app containers wait for (issue 40).
const WarnAppStartsFirst = "app-starts-before-render"

// appStartsFirst: a watching agent placed as a native sidecar holds the app
// containers back until its first render only through its startup probe;
// without one, and without an init agent (mode "both") to render first, the
// app may start before its file exists. One warning per render, in render
// order, naming what is missing and the fix.
func appStartsFirst(in *Input) []decision.Warning {
	if mode, _ := lookup(&in.Default, registry.Mode); mode != "sidecar" || !nativeWatchers(in) {
		return nil
	}
	dir := sharedDir(in)
	var out []decision.Warning
	for i := -1; i < len(in.Named); i++ {
		v := view{in: in, render: &in.Default, dir: dir}
		if i >= 0 {
			v = view{in: in, render: &in.Named[i], name: in.Named[i].Name, dir: dir}
		}
		file, _ := v.render.Values.Get(registry.Path)
		var why, fix string
		switch {
		case metricsPort(&v) == 0:
			why, fix = "has no metrics port", ", or a metrics-port adds the probe"
		case !v.podIs(registry.Readiness):
			why, fix = `has readiness "false"`, `, or readiness "true" adds the probe`
		case !startupProbed(&v):
			why = `has require-ack "true" (its /readyz waits for the app)`
		default:
			continue
		}
		out = append(out, renderWarning(WarnAppStartsFirst, v.name, "the native sidecar agent "+why+
			", so no startup probe holds the app until its first render: it may start before "+file+
			` exists; mode "both" renders it first in an init container`+fix))
	}
	return out
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
