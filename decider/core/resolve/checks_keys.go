package resolve

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/knob"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// unknownKey is key.unknown (B6): the first unknown key in byte order.
func unknownKey(s *state) *decision.Refusal {
	if !s.hasUnknown {
		return nil
	}
	if meant, ok := registry.Suggest(s.unknownKey); ok {
		return refuse("key.unknown", s.unknownKey, "", s.unknownKey+" is not part of the contract: did you mean "+meant+"?")
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
	if r.vals[registry.Endpoint].set || r.vals[registry.EndpointSecret].set {
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
	if !r.ann[registry.Endpoint].set || !r.ann[registry.EndpointSecret].set {
		return nil
	}
	k1, k2 := r.ann[registry.Endpoint].key, r.ann[registry.EndpointSecret].key
	return refuse("endpoint.both", k1, r.name, k1+" and "+k2+" are both set: one address, one place — keep one")
}

// templateBoth is template.both: the pod answered both template keys.
func templateBoth(s *state, r *render) *decision.Refusal {
	if !r.ann[registry.Template].set || !r.ann[registry.TemplateConfigMap].set {
		return nil
	}
	k1, k2 := r.ann[registry.Template].key, r.ann[registry.TemplateConfigMap].key
	return refuse("template.both", k1, r.name, k1+" and "+k2+" are both set: one template, one place")
}

// tierKey names a resolved reference in a message: its key when the pod set
// it, else "the store default <knob>".
func tierKey(r *render, i registry.ID) string {
	if fromPod(r.vals[i].tier) {
		return r.ann[i].key
	}
	return "the store default " + rows[i].Name
}

// sshSecretAuth is ssh-secret.auth: an ssh key with a resolved auth other than ssh-key.
func sshSecretAuth(s *state, r *render) *decision.Refusal {
	ssh, auth := &r.vals[registry.SSHSecret], &r.vals[registry.Auth]
	if !ssh.set || !auth.set || auth.text == "ssh-key" {
		return nil
	}
	name, _, _ := strings.Cut(ssh.text, "/")
	k := key(r, registry.SSHSecret)
	if ssh.tier != decision.TierAnnotation && auth.tier == decision.TierAnnotation {
		k = r.ann[registry.Auth].key // the pod's half of the contradiction
	}
	return refuse("ssh-secret.auth", k, r.name,
		tierKey(r, registry.SSHSecret)+" ("+redact.URL(name)+") with auth "+q(auth.text)+`: an ssh key is auth "ssh-key"`)
}

// tlsSkipVerify is bool.value, tls-skip-verify.not-offered, tls-skip-verify.with-ca.
func tlsSkipVerify(s *state, r *render) *decision.Refusal {
	if ref := s.checkValue(r, registry.TLSSkipVerify); ref != nil {
		return ref
	}
	a := &r.ann[registry.TLSSkipVerify]
	if !a.set || a.value != "true" {
		return nil
	}
	if !s.inst.AllowTLSSkipVerify {
		return refuse("tls-skip-verify.not-offered", a.key, r.name,
			a.key+` is "true", which is not available in this installation: the installer opens it with webhook.allowTlsSkipVerify: true`)
	}
	if r.vals[registry.CAConfigMap].set {
		return refuse("tls-skip-verify.with-ca", a.key, r.name,
			a.key+` is "true" while `+tierKey(r, registry.CAConfigMap)+` is set: contradictory — trust that CA, or trust nothing, not both`)
	}
	return nil
}

// ephemeralStorage is B22: quantity.value on the ephemeral request, then the
// limit, then agent-ephemeral.request-above-limit.
func ephemeralStorage(s *state) *decision.Refusal {
	r := &s.def
	if ref := s.checkValue(r, registry.AgentEphemeralRequest); ref != nil {
		return ref
	}
	if ref := s.checkValue(r, registry.AgentEphemeralLimit); ref != nil {
		return ref
	}
	req, lim := &r.ann[registry.AgentEphemeralRequest], &r.ann[registry.AgentEphemeralLimit]
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
	return requestAboveLimit(r, registry.AgentCPURequest, registry.AgentCPULimit, "cpu", "agent-cpu.request-above-limit")
}

func memoryRequestAboveLimit(s *state, r *render) *decision.Refusal {
	return requestAboveLimit(r, registry.AgentMemoryRequest, registry.AgentMemoryLimit, "memory", "agent-memory.request-above-limit")
}

// requestAboveLimit compares the RESOLVED request and limit when at least one
// came from the pod (installation combinations are checked at load).
func requestAboveLimit(r *render, ir, il registry.ID, resourceName, check string) *decision.Refusal {
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
