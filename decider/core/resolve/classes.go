package resolve

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// resolveClass is B3 (spec 08 §3), run when the pod names a class and does
// not carry status: injected. Classes off is class.disabled; otherwise the
// class is looked up (namespaced, then cluster), admitted, and fills the
// default render's source, endpoint and token-secret where the pod is
// silent — unless the pod set endpoint-secret, which blocks the endpoint.
func (s *state) resolveClass() *decision.Refusal {
	v := s.class.value
	if s.classes == nil {
		return refuseAs(registry.Class.Row().Refusal, "class.disabled", s.class.key, "", "dynamic-config.rs/class is "+q(v)+
			", but classes are not enabled in this installation (webhook.classes.enabled): name the store with dynamic-config.rs/source and its address with dynamic-config.rs/endpoint instead")
	}
	ns := s.f.Namespace
	c := s.classes.Lookup(ns, v)
	if c == nil {
		return refuseAs(registry.Class.Row().Refusal, "class.not-found", s.class.key, "", "dynamic-config.rs/class is "+q(v)+
			", but no class of that name is visible from namespace "+ns+
			": list them with kubectl get dynamicconfigclasses,clusterdynamicconfigclasses")
	}
	if c.Cluster() {
		if !c.Admits(ns) {
			return refuseAs(registry.Class.Row().Refusal, "class.not-admitted", s.class.key, "", "dynamic-config.rs/class is "+q(v)+
				": the cluster class does not admit namespace "+ns)
		}
		if t := c.TokenSecret; t != nil && t.Namespace != ns {
			return refuseAs(registry.Class.Row().Refusal, "class.credential-elsewhere", s.class.key, "", "dynamic-config.rs/class is "+q(v)+
				": its token Secret lives in namespace "+t.Namespace+", and a pod can only mount Secrets of its own namespace ("+ns+")")
		}
	}
	if ref := classCredentialEndpoint(s, c); ref != nil {
		return ref
	}
	s.consulted = c
	ref := c.Ref()
	fill := func(i registry.ID, text string) {
		if text == "" || s.def.ann[i].set {
			return
		}
		s.def.ann[i] = annot{key: registry.Full(rows[i].Name, ""), value: text, set: true, class: ref}
	}
	fill(registry.Source, c.Source)
	if !s.def.ann[registry.EndpointSecret].set {
		fill(registry.Endpoint, c.Endpoint)
	}
	fill(registry.TokenSecret, c.TokenSecretRef())
	return nil
}

// classCredentialEndpoint is class.credential-endpoint (issue 23): a class's
// credential goes only to the class's endpoint, so a pod that chooses its own
// address (endpoint other than the class's, or endpoint-secret) while the
// class would fill token-secret is refused rather than combined with it.
func classCredentialEndpoint(s *state, c *classes.Class) *decision.Refusal {
	if c.TokenSecret == nil || s.def.ann[registry.TokenSecret].set {
		return nil // no class credential, or the pod brings its own
	}
	addr := s.def.ann[registry.EndpointSecret]
	if e := s.def.ann[registry.Endpoint]; e.set && !addr.set {
		if e.value == c.Endpoint {
			return nil // the class's own address, written out
		}
		addr = e
	}
	if !addr.set {
		return nil
	}
	tok := registry.Full(rows[registry.TokenSecret].Name, "")
	return refuseAs(registry.Class.Row().Refusal, "class.credential-endpoint", addr.key, "", addr.key+" is "+q(addr.value)+
		", but "+tok+" would come from the class "+c.ShortRef()+" ("+c.TokenSecretRef()+"), and a class's credential is used only with the class's endpoint ("+
		redact.URL(c.Endpoint)+"): drop "+addr.key+", or name a credential of your own with "+tok)
}
