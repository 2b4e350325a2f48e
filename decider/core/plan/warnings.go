package plan

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// Warning codes (spec 06 §3.5) of the mutating path.
const (
	WarnVolumeDisk       = "volume-disk"
	WarnFileModeWorld    = "file-mode-world-readable"
	WarnWatchSecondsLow  = "watch-seconds-low"
	WarnTLSSkipVerify    = "tls-skip-verify"
	WarnRevokeOnShutdown = "revoke-on-shutdown-off"
	WarnHistoryVolume    = "history-volume"
	WarnDeprecatedKey    = "deprecated-key"
	// WarnNativeSidecarChosen and WarnPodNeverCompletes are the placement
	// warnings of a pod that must finish (issue 20).
	WarnNativeSidecarChosen = "native-sidecar-for-completion"
	WarnPodNeverCompletes   = "pod-never-completes"
	namedRenderPrefixStart  = "render \""
	namedRenderPrefixEnd    = "\": "
)

// warningRule is one row of spec 03 §6.1: a check on a render's resolved
// values that returns the warning text, or "" when the rule does not fire.
type warningRule struct {
	code string
	text func(v *view) string
}

// defaultRules are rules 1–6 in order; renderRules are the rules repeated for
// every named render (rule 8: rules 2, 3 and 4 with the render's values).
// Rule 7 (deprecated keys) has no row: no key is deprecated in this version.
var (
	defaultRules = []warningRule{
		{WarnVolumeDisk, volumeDisk},
		{WarnFileModeWorld, fileModeWorld},
		{WarnWatchSecondsLow, watchSecondsLow},
		{WarnTLSSkipVerify, tlsSkipVerify},
		{WarnRevokeOnShutdown, revokeOnShutdownOff},
		{WarnHistoryVolume, historyVolume},
	}
	renderRules = []warningRule{
		{WarnFileModeWorld, fileModeWorld},
		{WarnWatchSecondsLow, watchSecondsLow},
		{WarnTLSSkipVerify, tlsSkipVerify},
	}
)

// Warnings returns the mutating-path warnings of spec 03 §6.1, in order,
// computed from resolved values (any tier). A named render's warnings name
// it in Render and are prefixed `render "<n>": ` (renderWarning).
func Warnings(in *Input) []decision.Warning {
	dir := sharedDir(in)
	var warnings []decision.Warning
	v := view{in: in, render: &in.Default, dir: dir}
	for _, rule := range defaultRules {
		if text := rule.text(&v); text != "" {
			warnings = append(warnings, decision.Warning{Code: rule.code, Message: text})
		}
	}
	for i := range in.Named {
		v := view{in: in, render: &in.Named[i], name: in.Named[i].Name, dir: dir}
		for _, rule := range renderRules {
			if text := rule.text(&v); text != "" {
				warnings = append(warnings, renderWarning(rule.code, v.name, text))
			}
		}
	}
	return append(warnings, podWarnings(in)...)
}

// renderWarning is a warning of render name: a named render's names it in
// Render and its message starts with `render "<name>": ` (spec 03 §6.1
// rule 8); the default render's ("") is text alone.
func renderWarning(code, name, text string) decision.Warning {
	if name == "" {
		return decision.Warning{Code: code, Message: text}
	}
	return decision.Warning{Code: code, Render: name, Message: namedRenderPrefixStart + name + namedRenderPrefixEnd + text}
}

func volumeDisk(v *view) string {
	if s, _ := v.pod(registry.VolumeMedium); s != "disk" {
		return ""
	}
	return "volume-medium=disk keeps the rendered document on node-backed storage, where it outlives the pod"
}

func fileModeWorld(v *view) string {
	normalised, ok := v.render.Values.Get(registry.FileMode)
	if !ok || v.render.Values.Number(registry.FileMode)&0o007 == 0 {
		return ""
	}
	return "file-mode is world-readable (" + normalised + "): anything that can read the volume can read the rendered document; 0640 or 0600 keeps it to owner and group"
}

func watchSecondsLow(v *view) string {
	n, ok := v.number(registry.WatchSeconds)
	if !ok || n >= 5 {
		return ""
	}
	return "watch-seconds is " + itoa(n) + " — every replica polls the store that often; mind the store's load and its bill"
}

func tlsSkipVerify(v *view) string {
	if !v.is(registry.TLSSkipVerify) {
		return ""
	}
	return "tls-skip-verify is on: the store's certificate is not authenticated, so anyone on the path can stand in for it"
}

func revokeOnShutdownOff(v *view) string {
	if !dynamicWithoutRevoke(v) {
		return ""
	}
	return `revoke-on-shutdown is "false": the dynamic credential stays valid after this pod is gone, until its lease runs out`
}

// historyVolume fires when the watching agent keeps n earlier documents of up
// to b bytes each and n × b exceeds the 16Mi shared volume.
func historyVolume(v *view) string {
	if mode, _ := v.pod(registry.Mode); mode == "init" {
		return ""
	}
	if !v.render.Values.Has(registry.History) {
		return ""
	}
	n := v.render.Values.Number(registry.History)
	if n == 0 {
		return ""
	}
	b := uint64(agentDefaultMaxDocumentBytes)
	bText := itoa(b)
	if s, ok := v.render.Values.Get(registry.MaxDocumentBytes); ok {
		b, bText = v.render.Values.Number(registry.MaxDocumentBytes), s
	}
	// n × b > limit without overflow: b > ⌊limit / n⌋.
	if b <= sharedVolumeBytes/n {
		return ""
	}
	return "history keeps " + itoa(n) + " earlier documents of up to " + bText + " bytes each, more than the 16Mi shared volume holds: the kubelet evicts the pod when the volume outgrows its sizeLimit — lower history or max-document-bytes"
}
