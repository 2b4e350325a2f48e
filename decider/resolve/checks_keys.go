package resolve

import (
	"strconv"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/redact"
	"github.com/dynamic-config-admission/dynamic-config/decider/registry"
	"k8s.io/apimachinery/pkg/api/resource"
)

// unknownKey is key.unknown (B6): the first unknown key in byte order.
func unknownKey(s *state) *decision.Refusal {
	if !s.hasUnknown {
		return nil
	}
	return refuse("key.unknown", s.unknownKey, "", s.unknownKey+` is not part of the contract; check its spelling against the annotation reference (a named render's key is <key>.<name>, with a name of 1-32 characters from a-z, 0-9 and "-")`)
}

// emptyValue is value.empty (B7): the first empty value in byte order whose
// key's own grammar does not already refuse it.
func emptyValue(s *state) *decision.Refusal {
	if !s.hasEmpty {
		return nil
	}
	return refuse("value.empty", s.emptyKey, renderOfKey(s.emptyKey), s.emptyKey+" is empty: give it a value or drop it")
}

// renderOfKey is the named render a key belongs to, "" otherwise.
func renderOfKey(k string) string {
	if c := registry.Classify(k); c.Kind == registry.KindRendered {
		return c.Name
	}
	return ""
}

// endpointRequired is endpoint.required (B15).
func endpointRequired(s *state) *decision.Refusal {
	r := &s.def
	if r.vals[iEndpoint].set || r.vals[iEndpointSecret].set {
		return nil
	}
	k := registry.Full("endpoint", "")
	if r.source == "" {
		return refuse("endpoint.required", k, "", "dynamic-config.rs/endpoint is required: set dynamic-config.rs/endpoint or dynamic-config.rs/endpoint-secret on the pod — and name the store with dynamic-config.rs/source, since no per-store default can answer without one")
	}
	return refuse("endpoint.required", k, "", "dynamic-config.rs/endpoint is required: set dynamic-config.rs/endpoint or dynamic-config.rs/endpoint-secret on the pod, or give the store a per-store default endpoint (agent.defaults.perStore)")
}

// endpointBoth is endpoint.both: the pod answered both halves.
func endpointBoth(s *state, r *render) *decision.Refusal {
	if !r.ann[iEndpoint].set || !r.ann[iEndpointSecret].set {
		return nil
	}
	k1, k2 := r.ann[iEndpoint].key, r.ann[iEndpointSecret].key
	return refuse("endpoint.both", k1, r.name, k1+" and "+k2+" are both set: one address, one place — keep one")
}

// templateBoth is template.both: the pod answered both template keys.
func templateBoth(s *state, r *render) *decision.Refusal {
	if !r.ann[iTemplate].set || !r.ann[iTemplateConfigMap].set {
		return nil
	}
	k1, k2 := r.ann[iTemplate].key, r.ann[iTemplateConfigMap].key
	return refuse("template.both", k1, r.name, k1+" and "+k2+" are both set: one template, one place")
}

// tierKey names a resolved reference in a message: its key when the pod set
// it, else "the store default <knob>".
func tierKey(r *render, i int) string {
	if fromPod(r.vals[i].tier) {
		return r.ann[i].key
	}
	return "the store default " + rows[i].Name
}

// sshSecretAuth is ssh-secret.auth: an ssh key with a resolved auth other than ssh-key.
func sshSecretAuth(s *state, r *render) *decision.Refusal {
	ssh, auth := &r.vals[iSSHSecret], &r.vals[iAuth]
	if !ssh.set || !auth.set || auth.text == "ssh-key" {
		return nil
	}
	name, _, _ := strings.Cut(ssh.text, "/")
	k := key(r, iSSHSecret)
	if ssh.tier != decision.TierAnnotation && auth.tier == decision.TierAnnotation {
		k = r.ann[iAuth].key // the pod's half of the contradiction
	}
	return refuse("ssh-secret.auth", k, r.name,
		tierKey(r, iSSHSecret)+" ("+redact.URL(name)+") with auth "+q(auth.text)+`: an ssh key is auth "ssh-key"`)
}

// tlsSkipVerify is bool.value, tls-skip-verify.not-offered, tls-skip-verify.with-ca.
func tlsSkipVerify(s *state, r *render) *decision.Refusal {
	if ref := s.checkValue(r, iTLSSkipVerify); ref != nil {
		return ref
	}
	a := &r.ann[iTLSSkipVerify]
	if !a.set || a.value != "true" {
		return nil
	}
	if !s.inst.AllowTLSSkipVerify {
		return refuse("tls-skip-verify.not-offered", a.key, r.name,
			a.key+` is "true", which is not available in this installation: the installer opens it with webhook.allowTlsSkipVerify: true`)
	}
	if r.vals[iCAConfigMap].set {
		return refuse("tls-skip-verify.with-ca", a.key, r.name,
			a.key+` is "true" while `+tierKey(r, iCAConfigMap)+` is set: contradictory — trust that CA, or trust nothing, not both`)
	}
	return nil
}

// ephemeralStorage is B22: quantity.value on the ephemeral request, then the
// limit, then agent-ephemeral.request-above-limit.
func ephemeralStorage(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, iEphemeralRequest); ref != nil {
		return ref
	}
	if ref := s.checkValue(r, iEphemeralLimit); ref != nil {
		return ref
	}
	req, lim := &r.ann[iEphemeralRequest], &r.ann[iEphemeralLimit]
	if !req.set || !lim.set || !plainQuantity(req.value) || !plainQuantity(lim.value) {
		return nil
	}
	qr, err1 := resource.ParseQuantity(req.value)
	ql, err2 := resource.ParseQuantity(lim.value)
	if err1 != nil || err2 != nil || qr.Cmp(ql) <= 0 {
		return nil
	}
	return refuse("agent-ephemeral.request-above-limit", req.key, "",
		"dynamic-config.rs/agent-ephemeral-request is "+q(req.value)+", above dynamic-config.rs/agent-ephemeral-limit "+
			q(lim.value)+": a request cannot exceed its limit")
}

// plainQuantity is a decimal number ([0-9]+(\.[0-9]+)?) with an optional
// suffix from Ki Mi Gi k M G: the ephemeral comparison is skipped otherwise.
func plainQuantity(v string) bool {
	for _, sfx := range [...]string{"Ki", "Mi", "Gi", "k", "M", "G"} {
		if strings.HasSuffix(v, sfx) {
			v = v[:len(v)-len(sfx)]
			break
		}
	}
	whole, frac, dotted := strings.Cut(v, ".")
	if !knob.IsDigits(whole) {
		return false
	}
	return !dotted || knob.IsDigits(frac)
}

func cpuRequestAboveLimit(s *state, r *render) *decision.Refusal {
	return requestAboveLimit(r, iCPURequest, iCPULimit, "cpu", "agent-cpu.request-above-limit")
}

func memoryRequestAboveLimit(s *state, r *render) *decision.Refusal {
	return requestAboveLimit(r, iMemoryRequest, iMemoryLimit, "memory", "agent-memory.request-above-limit")
}

// requestAboveLimit compares the RESOLVED request and limit when at least one
// came from the pod (installation combinations are checked at load).
func requestAboveLimit(r *render, ir, il int, resourceName, check string) *decision.Refusal {
	req, lim := &r.vals[ir], &r.vals[il]
	if !req.set || !lim.set {
		return nil
	}
	fromPodR, fromPodL := req.tier == decision.TierAnnotation, lim.tier == decision.TierAnnotation
	if !fromPodR && !fromPodL {
		return nil
	}
	qr, err1 := resource.ParseQuantity(req.text)
	ql, err2 := resource.ParseQuantity(lim.text)
	if err1 != nil || err2 != nil || qr.Cmp(ql) <= 0 {
		return nil
	}
	if fromPodR {
		return refuse(check, r.ann[ir].key, "", r.ann[ir].key+" is "+q(req.text)+", above the "+resourceName+" limit "+
			q(lim.text)+" from "+tierPhrase(lim)+": a request cannot exceed its limit")
	}
	return refuse(check, r.ann[il].key, "", r.ann[il].key+" is "+q(lim.text)+", below the "+resourceName+" request "+
		q(req.text)+" from "+tierPhrase(req)+": a request cannot exceed its limit")
}

// tierPhrase is the {tier} of the request-above-limit messages.
func tierPhrase(v *value) string {
	switch v.tier {
	case decision.TierAnnotation:
		return "the pod"
	case decision.TierStoreDefault:
		return "the store default for " + strconv.Quote(v.store)
	case decision.TierFleetDefault:
		return "the fleet default"
	}
	return "the built-in default"
}

// sameUser is B26: agent-run-as-same-user checks 1–6 (spec 01 §3.6); on
// success the agent's UID comes from the pod spec (tier POD_SPEC).
func sameUser(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, iSameUser); ref != nil {
		return ref
	}
	a := &r.ann[iSameUser]
	if !a.set || a.value != "true" {
		return nil
	}
	if r.ann[iRunAsUser].set {
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
	if iv, _, _, ok := s.silent(r, iRunAsUser); ok && iv.Pinned && !knob.Equal("agent-run-as-user", n, iv.Text) {
		return refuse("pin.agent-run-as-same-user", a.key, "", "dynamic-config.rs/agent-run-as-same-user gives the agent UID "+n+" from "+where+
			", but the installation pins agent-run-as-user to "+pinnedText(iRunAsUser, iv.Text)+" — match it or drop the annotation")
	}
	r.vals[iRunAsUser] = value{text: n, set: true, tier: decision.TierPodSpec, note: "inherited from " + where}
	return nil
}

// mode is the default render's resolved mode.
func (s *state) mode() string { return s.def.vals[iMode].text }

// envInjectMode is env-inject.mode (B27).
func envInjectMode(s *state) *decision.Refusal {
	a := &s.def.ann[iEnvInject]
	if !a.set || s.mode() != "sidecar" {
		return nil
	}
	return refuse("env-inject.mode", a.key, "", `dynamic-config.rs/env-inject needs dynamic-config.rs/mode "init" or "both" — the file must exist before the container starts; the mode here is "sidecar"`)
}

// envRestart is B28.
func envRestart(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, iEnvRestart); ref != nil {
		return ref
	}
	a := &r.ann[iEnvRestart]
	if !a.set || a.value != "true" {
		return nil
	}
	if !r.ann[iEnvInject].set {
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
	if !r.vals[iAWSSecret].set || r.source == "s3" {
		return nil
	}
	src := "unset"
	if r.source != "" {
		src = r.source
	}
	return refuse("aws-secret.source", key(r, iAWSSecret), "", "dynamic-config.rs/aws-secret is the s3 source's flag; the source here is "+q(src))
}

// revokeGrace is B34: value, zero, above-grace.
func revokeGrace(s *state) *decision.Refusal {
	r := &s.def
	a := &r.ann[iRevokeGrace]
	if !a.set {
		return nil
	}
	n, f := rows[iRevokeGrace].Check(a.value)
	if f != nil {
		return failed(r, iRevokeGrace, f)
	}
	grace := int64(30)
	if s.f.TerminationGracePeriodSeconds != nil {
		grace = *s.f.TerminationGracePeriodSeconds
	}
	secs, _ := knob.ParseUint(n)
	if grace >= 0 && secs <= uint64(grace) {
		return nil
	}
	return refuse("revoke-grace.above-grace", a.key, "", "dynamic-config.rs/revoke-grace is "+n+"s, longer than the pod's terminationGracePeriodSeconds ("+
		strconv.FormatInt(grace, 10)+"): the kubelet would SIGKILL the agent before it finished revoking")
}

// revokeGraceNeedsDynamic is B35.
func revokeGraceNeedsDynamic(s *state) *decision.Refusal {
	a := &s.def.ann[iRevokeGrace]
	if !a.set || s.def.vals[iDynamic].text == "true" {
		return nil
	}
	return refuse("revoke-grace.needs-dynamic", a.key, "", `dynamic-config.rs/revoke-grace is set, but dynamic-config.rs/dynamic is not "true": only dynamic credentials are revoked on shutdown`)
}

// initFirst is B36.
func initFirst(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, iInitFirst); ref != nil {
		return ref
	}
	a := &r.ann[iInitFirst]
	if a.set && a.value == "true" && s.mode() == "sidecar" {
		return refuse("init-first.sidecar", a.key, "", `dynamic-config.rs/init-first is "true" with mode "sidecar": there is no init container to put first`)
	}
	return nil
}

// needsWatching refuses knob i under mode "init" (no watching agent).
func needsWatching(s *state, i int, check string) *decision.Refusal {
	a := &s.def.ann[i]
	if !a.set || s.mode() != "init" {
		return nil
	}
	return refuse(check, a.key, "", a.key+` needs a watching agent, and mode "init" has none`)
}

// notifyHTTP is B37: notify-http.init, then notify-http.url.
func notifyHTTP(s *state) *decision.Refusal {
	if ref := needsWatching(s, iNotifyHTTP, "notify-http.init"); ref != nil {
		return ref
	}
	return s.checkValue(&s.def, iNotifyHTTP)
}

// history is B39.
func history(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, iHistory); ref != nil {
		return ref
	}
	a := &r.ann[iHistory]
	if a.set && r.vals[iVolumeMedium].text == "disk" {
		return refuse("history.disk", a.key, "", "dynamic-config.rs/history keeps earlier documents beside the rendered one, and volume-medium disk would leave them on node storage that outlives the pod: use memory")
	}
	return nil
}

// canaryInit is canary-configmap.init (B40).
func canaryInit(s *state) *decision.Refusal {
	return needsWatching(s, iCanaryConfigMap, "canary-configmap.init")
}

// agentImage is agent-image.not-allowed (B42).
func agentImage(s *state) *decision.Refusal {
	a := &s.def.ann[iAgentImage]
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
	if ref := s.checkValue(r, iEvents); ref != nil {
		return ref
	}
	a := &r.ann[iEvents]
	if a.set && a.value == "true" && !s.inst.AllowEvents {
		return refuse("events.not-offered", a.key, "", `dynamic-config.rs/events is "true", which is not available in this installation: the installer opens it with agent.events.enabled: true (webhook.allowEvents)`)
	}
	return nil
}

// revokeOnShutdownNeedsDynamic is B46.
func revokeOnShutdownNeedsDynamic(s *state) *decision.Refusal {
	a := &s.def.ann[iRevokeOnShutdown]
	if !a.set || a.value != "false" || s.def.vals[iDynamic].text == "true" {
		return nil
	}
	return refuse("revoke-on-shutdown.needs-dynamic", a.key, "", `dynamic-config.rs/revoke-on-shutdown is "false", but dynamic-config.rs/dynamic is not "true": only dynamic credentials have a lease to revoke`)
}

// requireAck is B48.
func requireAck(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, iRequireAck); ref != nil {
		return ref
	}
	a := &r.ann[iRequireAck]
	if !a.set || a.value != "true" {
		return nil
	}
	if r.vals[iReadiness].text == "false" {
		return refuse("require-ack.readiness-off", a.key, "", `dynamic-config.rs/require-ack is "true" with dynamic-config.rs/readiness "false": the acknowledgement is reported through the readiness probe`)
	}
	return needsWatching(s, iRequireAck, "require-ack.init")
}
