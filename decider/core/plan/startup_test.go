package plan

import (
	"strings"
	"testing"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
)

// A native sidecar with a metrics port holds the app containers back until
// its first render with a startup probe on the agent's /readyz (issue 40,
// spec 03 §3.7 as docs/spec-changes.md extends it): the port and path the
// readiness probe uses.
func TestANativeSidecarWithAMetricsPortGetsAStartupProbe(t *testing.T) {
	named := Render{Name: "a", Values: values(map[string]string{"path": "/config/a.json", "metrics-port": "9111"})}
	byName := &decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/readyz", PortName: "metrics"}, PeriodSeconds: 2, FailureThreshold: 150}
	byNumber := &decision.Probe{HTTPGet: &decision.HTTPGetAction{Path: "/readyz", PortNumber: 9111}, PeriodSeconds: 2, FailureThreshold: 150}
	native := map[string]string{"native-sidecar": "true", "metrics-port": "9110"}
	cases := []struct {
		name   string
		values map[string]string
		policy string // the pod's restartPolicy
		agent  string
		want   *decision.Probe
	}{
		{"the default render's native sidecar is probed by the port's name", native, "", "dynamic-config-agent", byName},
		{"a named render's native sidecar is probed by number", native, "", "dynamic-config-agent-a", byNumber},
		{"a pod that must finish gets native sidecars, and so the probe", map[string]string{"metrics-port": "9110"}, "Never", "dynamic-config-agent", byName},
		{"mode both keeps the probe on the watcher", with(native, map[string]string{"mode": "both"}), "", "dynamic-config-agent", byName},
		{"an ordinary sidecar starts beside the app: no startup probe", map[string]string{"metrics-port": "9110"}, "", "dynamic-config-agent", nil},
		{"no metrics port, no probe", map[string]string{"native-sidecar": "true"}, "", "dynamic-config-agent", nil},
		{"readiness false turns off both probes on /readyz", with(native, map[string]string{"readiness": "false"}), "", "dynamic-config-agent", nil},
		{"require-ack keeps /readyz unready until the app acknowledges: no probe", with(native, map[string]string{"require-ack": "true"}), "", "dynamic-config-agent", nil},
		{"require-ack is the default render's: a named render keeps its probe", with(native, map[string]string{"require-ack": "true"}), "", "dynamic-config-agent-a", byNumber},
		{"one-shot agents never get probes", with(native, map[string]string{"mode": "both"}), "", "dynamic-config-init", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := input(with(consul(), tc.values), named)
			in.Facts.RestartPolicy = tc.policy
			equal(t, "startup probe", agent(t, Build(in), tc.agent).StartupProbe, tc.want)
		})
	}
}

// Without a startup probe nothing holds the app containers of a native
// sidecar's pod until the first render: the plan says so, and names the fix
// (issue 40). An ordinary sidecar starts beside the app whatever the plan
// does; the docs say so, and its plan says nothing.
func TestANativeSidecarWithoutAStartupProbeWarnsThatTheAppMayStartFirst(t *testing.T) {
	named := Render{Name: "a", Values: values(map[string]string{"path": "/config/a.json"})}
	cases := []struct {
		name   string
		values map[string]string
		policy string
		named  bool
		want   []string
	}{
		{"no metrics port: mode both or a port", map[string]string{"native-sidecar": "true"}, "", false, []string{
			`the native sidecar agent has no metrics port, so no startup probe holds the app until its first render: it may start before /config/rendered.toml exists; mode "both" renders it first in an init container, or a metrics-port adds the probe`}},
		{"a pod that must finish is warned the same", nil, "OnFailure", false, []string{
			`the native sidecar agent has no metrics port, so no startup probe holds the app until its first render: it may start before /config/rendered.toml exists; mode "both" renders it first in an init container, or a metrics-port adds the probe`}},
		{"readiness false: mode both or readiness true", map[string]string{"native-sidecar": "true", "metrics-port": "9110", "readiness": "false"}, "", false, []string{
			`the native sidecar agent has readiness "false", so no startup probe holds the app until its first render: it may start before /config/rendered.toml exists; mode "both" renders it first in an init container, or readiness "true" adds the probe`}},
		{"require-ack: mode both", map[string]string{"native-sidecar": "true", "metrics-port": "9110", "require-ack": "true"}, "", false, []string{
			`the native sidecar agent has require-ack "true" (its /readyz waits for the app), so no startup probe holds the app until its first render: it may start before /config/rendered.toml exists; mode "both" renders it first in an init container`}},
		{"a named render without a port is named", map[string]string{"native-sidecar": "true", "metrics-port": "9110"}, "", true, []string{
			`render "a": the native sidecar agent has no metrics port, so no startup probe holds the app until its first render: it may start before /config/a.json exists; mode "both" renders it first in an init container, or a metrics-port adds the probe`}},
		{"a startup probe holds them: no warning", map[string]string{"native-sidecar": "true", "metrics-port": "9110"}, "", false, nil},
		{"mode both renders first: no warning", map[string]string{"native-sidecar": "true", "mode": "both"}, "", false, nil},
		{"an ordinary sidecar: no warning", nil, "", false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in *Input
			if tc.named {
				in = input(with(consul(), tc.values), named)
			} else {
				in = input(with(consul(), tc.values))
			}
			in.Facts.RestartPolicy = tc.policy
			var got []string
			for _, w := range Warnings(in) {
				if w.Code == WarnAppStartsFirst {
					got = append(got, w.Message)
					if len(w.Message) > 256 {
						t.Errorf("warning of %d bytes: the API server passes on 256", len(w.Message))
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
