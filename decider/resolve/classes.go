package resolve

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/registry"
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

// classKeyPrefix is class.key-prefix (spec 08 §4): a cluster class with
// keyPrefixes serves only keys under them, {namespace} being the pod's.
func classKeyPrefix(s *state) *decision.Refusal {
	c := s.consulted
	if c == nil || !c.Cluster() || len(c.KeyPrefixes) == 0 || !s.def.vals[registry.Key].set {
		return nil
	}
	k := s.def.vals[registry.Key].text
	prefixes := c.Prefixes(s.f.Namespace)
	for _, p := range prefixes {
		if strings.HasPrefix(k, p) {
			return nil
		}
	}
	return refuseAs(registry.Class.Row().Refusal, "class.key-prefix", key(&s.def, registry.Key), "", "dynamic-config.rs/key is "+q(k)+
		": the cluster class "+c.Name+" only serves keys under "+strings.Join(prefixes, ", "))
}

// keyChecks is B58: key.required, then the class guard class.key-prefix on
// the resolved key.
func keyChecks(s *state) *decision.Refusal {
	if ref := keyRequired(s); ref != nil {
		return ref
	}
	return classKeyPrefix(s)
}
