package resolve

// The checks of the agents' behaviour (B26–B48): same-user, env-inject and
// env-restart, dynamic credentials, notify, history, canary, image, events.

import (
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
)

// sameUser is B26: agent-run-as-same-user checks 1–6 (spec 01 §3.6); on
// success the agent's UID comes from the pod spec (tier POD_SPEC).
func sameUser(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, registry.AgentRunAsSameUser); ref != nil {
		return ref
	}
	a := &r.ann[registry.AgentRunAsSameUser]
	if !a.set || a.value != "true" {
		return nil
	}
	if r.ann[registry.AgentRunAsUser].set {
		return refuse("same-user.both", a.key, "", "dynamic-config.rs/agent-run-as-same-user and dynamic-config.rs/agent-run-as-user are both set: one identity, one place — keep one")
	}
	var uid *int64
	where := ""
	if len(s.f.Containers) > 0 && s.f.Containers[0].RunAsUser != nil {
		uid, where = s.f.Containers[0].RunAsUser, "spec.containers[0].securityContext.runAsUser"
	} else if s.f.RunAsUser != nil {
		uid, where = s.f.RunAsUser, "spec.securityContext.runAsUser"
	}
	if uid == nil {
		return refuse("same-user.no-uid", a.key, "", `dynamic-config.rs/agent-run-as-same-user is "true", but the pod has no runAsUser to inherit (neither spec.containers[0].securityContext.runAsUser nor spec.securityContext.runAsUser)`)
	}
	n := strconv.FormatInt(*uid, 10)
	if *uid < 0 || *uid > 2147483647 {
		return refuse("same-user.range", a.key, "", "dynamic-config.rs/agent-run-as-same-user inherits runAsUser "+n+" from "+where+", which is not a UID the agent can take (1 to 2147483647)")
	}
	if *uid == 0 {
		return refuse("same-user.root", a.key, "", "dynamic-config.rs/agent-run-as-same-user inherits runAsUser 0 from "+where+": the agent stays nonroot in every configuration")
	}
	// n is a UID in range: its own normalised text, compared as a number
	if iv, _, _, ok := s.silent(r, registry.AgentRunAsUser); ok && iv.Pinned && n != iv.Text && n != installed(iv).Text {
		return refuseAs(registry.RefusePinned, "pin.agent-run-as-same-user", a.key, "", "dynamic-config.rs/agent-run-as-same-user gives the agent UID "+n+" from "+where+
			", but the installation pins agent-run-as-user to "+pinnedText(iv)+" — match it or drop the annotation")
	}
	r.vals[registry.AgentRunAsUser] = value{text: n, p: knob.Value{Text: n, Number: uint64(*uid)}, set: true, tier: decision.TierPodSpec, note: "inherited from " + where}
	return nil
}

// mode is the default render's resolved mode.
func (s *state) mode() string { return s.def.vals[registry.Mode].text }

// envInjectMode is env-inject.mode (B27).
func envInjectMode(s *state) *decision.Refusal {
	a := &s.def.ann[registry.EnvInject]
	if !a.set || s.mode() != "sidecar" {
		return nil
	}
	return refuse("env-inject.mode", a.key, "", `dynamic-config.rs/env-inject needs dynamic-config.rs/mode "init" or "both" — the file must exist before the container starts; the mode here is "sidecar"`)
}

// envRestart is B28.
func envRestart(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, registry.EnvRestart); ref != nil {
		return ref
	}
	a := &r.ann[registry.EnvRestart]
	if !a.set || a.value != "true" {
		return nil
	}
	if !r.ann[registry.EnvInject].set {
		return refuse("env-restart.needs-env-inject", a.key, "", `dynamic-config.rs/env-restart is "true" without dynamic-config.rs/env-inject: there is no injected environment to restart for`)
	}
	if m := s.mode(); m != "both" {
		return refuse("env-restart.needs-both", a.key, "", `dynamic-config.rs/env-restart needs dynamic-config.rs/mode "both" — an init agent writes the first file, a watching agent notices changes; the mode here is `+q(m))
	}
	return nil
}

// awsSecretSource is aws-secret.source (B29).
func awsSecretSource(s *state) *decision.Refusal {
	r := &s.def
	if !r.vals[registry.AWSSecret].set || r.source == "s3" {
		return nil
	}
	src := "unset"
	if r.source != "" {
		src = r.source
	}
	return refuse("aws-secret.source", key(r, registry.AWSSecret), "", "dynamic-config.rs/aws-secret is the s3 source's flag; the source here is "+q(src))
}

// revokeGrace is B34: value, zero, above-grace.
func revokeGrace(s *state) *decision.Refusal {
	r := &s.def
	a := &r.ann[registry.RevokeGrace]
	if !a.set {
		return nil
	}
	p, f := r.parse(registry.RevokeGrace)
	if f != nil {
		return failed(r, registry.RevokeGrace, f)
	}
	grace := int64(30)
	if s.f.TerminationGracePeriodSeconds != nil {
		grace = *s.f.TerminationGracePeriodSeconds
	}
	if grace >= 0 && p.Number <= uint64(grace) {
		return nil
	}
	return refuse("revoke-grace.above-grace", a.key, "", "dynamic-config.rs/revoke-grace is "+p.Text+"s, longer than the pod's terminationGracePeriodSeconds ("+
		strconv.FormatInt(grace, 10)+"): the kubelet would SIGKILL the agent before it finished revoking")
}

// revokeGraceNeedsDynamic is B35.
func revokeGraceNeedsDynamic(s *state) *decision.Refusal {
	a := &s.def.ann[registry.RevokeGrace]
	if !a.set || s.def.vals[registry.Dynamic].text == "true" {
		return nil
	}
	return refuse("revoke-grace.needs-dynamic", a.key, "", `dynamic-config.rs/revoke-grace is set, but dynamic-config.rs/dynamic is not "true": only dynamic credentials are revoked on shutdown`)
}

// initFirst is B36.
func initFirst(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, registry.InitFirst); ref != nil {
		return ref
	}
	a := &r.ann[registry.InitFirst]
	if a.set && a.value == "true" && s.mode() == "sidecar" {
		return refuse("init-first.sidecar", a.key, "", `dynamic-config.rs/init-first is "true" with mode "sidecar": there is no init container to put first`)
	}
	return nil
}

// needsWatching refuses knob i under mode "init" (no watching agent).
func needsWatching(s *state, i registry.ID, check string) *decision.Refusal {
	a := &s.def.ann[i]
	if !a.set || s.mode() != "init" {
		return nil
	}
	return refuse(check, a.key, "", a.key+` needs a watching agent, and mode "init" has none`)
}

// notifyHTTP is B37: notify-http.init, then notify-http.url.
func notifyHTTP(s *state) *decision.Refusal {
	if ref := needsWatching(s, registry.NotifyHTTP, "notify-http.init"); ref != nil {
		return ref
	}
	return s.checkValue(&s.def, registry.NotifyHTTP)
}

// history is B39.
func history(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, registry.History); ref != nil {
		return ref
	}
	a := &r.ann[registry.History]
	if a.set && r.vals[registry.VolumeMedium].text == "disk" {
		return refuse("history.disk", a.key, "", "dynamic-config.rs/history keeps earlier documents beside the rendered one, and volume-medium disk would leave them on node storage that outlives the pod: use memory")
	}
	return nil
}

// canaryInit is canary-configmap.init (B40).
func canaryInit(s *state) *decision.Refusal {
	return needsWatching(s, registry.CanaryConfigMap, "canary-configmap.init")
}

// agentImage is agent-image.not-allowed (B42).
func agentImage(s *state) *decision.Refusal {
	a := &s.def.ann[registry.AgentImage]
	if !a.set {
		return nil
	}
	for _, prefix := range s.inst.AgentImageAllow {
		if prefix != "" && strings.HasPrefix(a.value, prefix) {
			return nil
		}
	}
	return refuse("agent-image.not-allowed", a.key, "", "dynamic-config.rs/agent-image is "+q(a.value)+
		", which this installation does not allow: images must start with a prefix listed in webhook.agentImageAllow (DYNAMIC_CONFIG_WEBHOOK_AGENT_IMAGE_ALLOW)")
}

// events is B43.
func events(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, registry.Events); ref != nil {
		return ref
	}
	a := &r.ann[registry.Events]
	if a.set && a.value == "true" && !s.inst.AllowEvents {
		return refuse("events.not-offered", a.key, "", `dynamic-config.rs/events is "true", which is not available in this installation: the installer opens it with agent.events.enabled: true (webhook.allowEvents)`)
	}
	return nil
}

// revokeOnShutdownNeedsDynamic is B46.
func revokeOnShutdownNeedsDynamic(s *state) *decision.Refusal {
	a := &s.def.ann[registry.RevokeOnShutdown]
	if !a.set || a.value != "false" || s.def.vals[registry.Dynamic].text == "true" {
		return nil
	}
	return refuse("revoke-on-shutdown.needs-dynamic", a.key, "", `dynamic-config.rs/revoke-on-shutdown is "false", but dynamic-config.rs/dynamic is not "true": only dynamic credentials have a lease to revoke`)
}

// requireAck is B48.
func requireAck(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, registry.RequireAck); ref != nil {
		return ref
	}
	a := &r.ann[registry.RequireAck]
	if !a.set || a.value != "true" {
		return nil
	}
	if r.vals[registry.Readiness].text == "false" {
		return refuse("require-ack.readiness-off", a.key, "", `dynamic-config.rs/require-ack is "true" with dynamic-config.rs/readiness "false": the acknowledgement is reported through the readiness probe`)
	}
	return needsWatching(s, registry.RequireAck, "require-ack.init")
}
