package resolve

import (
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/registry"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// keyChecks is B58: key.required, then the class key guard on the resolved
// keys.
func keyChecks(s *state) *decision.Refusal {
	if ref := keyRequired(s); ref != nil {
		return ref
	}
	return classKeyGuard(s)
}

// keyGuard is one class guard a render's key must pass: the prefixes it
// must lie under and how the refusal says whose they are.
type keyGuard struct {
	prefixes []string
	// serves completes "… only serves keys under P" for what ("keys under
	// P", "plain keys under P").
	serves func(what string) string
}

// classKeyGuard is the key guard of spec 08 §4, made sound by issue 23. A
// render's key is guarded by the cluster class the pod named (the default
// render), and by every guarded cluster class whose token Secret the render
// names itself (any render, any tier) — naming the Secret instead of the
// class does not skip the guard. A guarded key must be plain (class.key-segment)
// and lie under a prefix on segment boundaries (class.key-prefix).
func classKeyGuard(s *state) *decision.Refusal {
	for r := range s.renders {
		k := r.vals[registry.Key]
		if !k.set {
			continue
		}
		for _, g := range s.keyGuards(r) {
			if ref := g.judge(r, k.text); ref != nil {
				return ref
			}
		}
	}
	return nil
}

// keyGuards are the guards of render r, the named class's first. A guard
// found through a named Secret marks the decision as having consulted the
// class set (it carries classes_revision).
func (s *state) keyGuards(r *render) []keyGuard {
	if s.classes == nil {
		return nil
	}
	ns := s.f.Namespace
	var out []keyGuard
	named := s.consulted
	if r != &s.def || named == nil || !named.Cluster() || len(named.KeyPrefixes) == 0 {
		named = nil
	}
	if named != nil {
		out = append(out, keyGuard{prefixes: named.Prefixes(ns), serves: func(what string) string {
			return "the cluster class " + named.Name + " only serves " + what
		}})
	}
	for _, i := range []registry.ID{registry.TokenSecret, registry.PasswordSecret} {
		v := r.vals[i]
		if !v.set {
			continue
		}
		guarding := slices.DeleteFunc(s.classes.Guarding(ns, v.text), func(c *classes.Class) bool { return c == named })
		if len(guarding) == 0 {
			continue
		}
		s.classesRevision = s.classes.Revision // the class set judged this render
		names, prefixes := make([]string, 0, len(guarding)), []string{}
		for _, c := range guarding {
			names = append(names, c.Name)
			for _, p := range c.Prefixes(ns) {
				if !slices.Contains(prefixes, p) {
					prefixes = append(prefixes, p)
				}
			}
		}
		of := "the cluster class " + names[0]
		if len(names) > 1 {
			of = "the cluster classes " + strings.Join(names, ", ")
		}
		credential := key(r, i) + " names " + v.text + ", the token Secret of " + of
		out = append(out, keyGuard{prefixes: prefixes, serves: func(what string) string {
			return credential + ", and with it only " + what + " are served"
		}})
	}
	return out
}

// judge refuses key on render r unless it is plain and under a prefix.
func (g keyGuard) judge(r *render, k string) *decision.Refusal {
	under := redact.List(g.prefixes) // cut to the message limit: prefixes come from the class
	rk := key(r, registry.Key)
	if why := classes.KeyNotPlain(k); why != "" {
		return refuseAs(registry.Class.Row().Refusal, "class.key-segment", rk, r.name, rk+" is "+q(k)+": it has "+why+", and "+
			g.serves("plain keys under "+under)+` (no "." or ".." segment, no empty segment, no %-escape)`)
	}
	for _, p := range g.prefixes {
		if classes.KeyUnder(k, p) {
			return nil
		}
	}
	return refuseAs(registry.Class.Row().Refusal, "class.key-prefix", rk, r.name, rk+" is "+q(k)+": "+g.serves("keys under "+under))
}
