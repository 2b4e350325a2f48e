package classes

import (
	"strconv"
	"strings"
)

// The key guard (spec 08 §4, made segment-aware by issue 23) judges a store
// key as a path of "/"-separated segments, never as a raw string: a raw
// prefix lets "apps/billing/../payments/app" and "apps/billing/%2e%2e/…" pass
// "apps/{namespace}/" (the store or its HTTP layer resolves them), and lets
// namespace "bill" read "apps/billing/…".

// KeyNotPlain says why key cannot be judged by its segments — a "." or ".."
// segment, an empty segment (a double, or a trailing, "/") or a %-escape —
// and is "" for a plain key. One leading "/" is part of the key (etcd
// writes keys that way) and is matched literally, never dropped.
func KeyNotPlain(key string) string {
	if strings.Contains(key, "%") {
		return "a %-escape"
	}
	_, segs := segments(key)
	for _, s := range segs {
		switch s {
		case "":
			return "an empty segment"
		case ".", "..":
			return "a " + strconv.Quote(s) + " segment"
		}
	}
	return ""
}

// KeyUnder reports whether the plain key lies under prefix on segment
// boundaries: the prefix's segments are the key's first segments
// ("apps/{namespace}/" and "apps/{namespace}" both mean apps, <ns>; the key
// may equal the prefix). A leading "/" must match on both sides.
func KeyUnder(key, prefix string) bool {
	kAbs, k := segments(key)
	pAbs, p := segments(strings.TrimSuffix(prefix, "/"))
	if kAbs != pAbs || len(p) > len(k) {
		return false
	}
	for i := range p {
		if p[i] != k[i] {
			return false
		}
	}
	return true
}

// segments splits a key at "/" after its one optional leading "/" (abs); an
// empty key (or a lone "/") has no segments.
func segments(key string) (abs bool, segs []string) {
	rest, abs := strings.CutPrefix(key, "/")
	if rest == "" {
		return abs, nil
	}
	return abs, strings.Split(rest, "/")
}

// Guarding lists the guarded cluster classes (keyPrefixes set) whose token
// Secret is secretKey ("<secret>/<key>") in namespace ns: a render that
// names that Secret itself is judged by their key guard, as if it had named
// the class (issue 23).
func (s *Set) Guarding(ns, secretKey string) []*Class {
	var out []*Class
	for i := range s.list {
		c := &s.list[i]
		if c.Cluster() && len(c.KeyPrefixes) > 0 && c.TokenSecret != nil &&
			c.TokenSecret.Namespace == ns && c.TokenSecretRef() == secretKey {
			out = append(out, c)
		}
	}
	return out
}
