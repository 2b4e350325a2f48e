// Package classes holds the class set of spec 08: DynamicConfigClass
// (namespaced) and ClusterDynamicConfigClass (cluster) objects, validated
// into plain values, with the set's revision and lookup, and the set of a
// decoded --classes-file (file.go). It does no I/O and decodes no text: cmd
// reads the file, decider/classloader decodes it (Parse) and follows the API
// server (Watch).
package classes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
)

// API group, version and kinds (spec 08 §1).
const (
	Group      = "dynamic-config.rs"
	Version    = "v1alpha1"
	APIVersion = Group + "/" + Version

	KindNamespaced = "DynamicConfigClass"
	KindCluster    = "ClusterDynamicConfigClass"

	// DefaultTokenKey is the Secret key a class token comes from by default.
	DefaultTokenKey = "token"
	// NamespacePlaceholder is replaced by the pod's namespace in keyPrefixes.
	NamespacePlaceholder = "{namespace}"
)

// TokenSecret is a class's token Secret.
type TokenSecret struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
}

// Class is one validated class; a namespaced class's TokenSecret lives in its
// own namespace with key "token".
type Class struct {
	Kind        string       `json:"kind"`
	Namespace   string       `json:"namespace,omitempty"` // "" for a cluster class
	Name        string       `json:"name"`
	Source      string       `json:"source"`
	Endpoint    string       `json:"endpoint"`
	TokenSecret *TokenSecret `json:"tokenSecret,omitempty"`
	Namespaces  []string     `json:"namespaces,omitempty"`  // cluster classes only
	KeyPrefixes []string     `json:"keyPrefixes,omitempty"` // cluster classes only
}

// Cluster reports whether c is a ClusterDynamicConfigClass.
func (c *Class) Cluster() bool { return c.Kind == KindCluster }

// Ref names the class as provenance does: "DynamicConfigClass billing/team-vault"
// or "ClusterDynamicConfigClass infra-consul".
func (c *Class) Ref() string { return c.Kind + " " + c.ShortRef() }

// ShortRef is "billing/team-vault" or "infra-consul".
func (c *Class) ShortRef() string {
	if c.Namespace == "" {
		return c.Name
	}
	return c.Namespace + "/" + c.Name
}

// TokenSecretRef is the token-secret annotation value the class fills
// ("<secret>/<key>"), "" when the class names no token Secret.
func (c *Class) TokenSecretRef() string {
	if c.TokenSecret == nil {
		return ""
	}
	return c.TokenSecret.Name + "/" + c.TokenSecret.Key
}

// Admits reports whether a cluster class admits namespace ns (an empty
// namespaces list admits every namespace; a namespaced class admits its own).
func (c *Class) Admits(ns string) bool {
	return len(c.Namespaces) == 0 || slices.Contains(c.Namespaces, ns)
}

// Prefixes are the keyPrefixes with {namespace} replaced by ns.
func (c *Class) Prefixes(ns string) []string {
	out := make([]string, len(c.KeyPrefixes))
	for i, p := range c.KeyPrefixes {
		out[i] = strings.ReplaceAll(p, NamespacePlaceholder, ns)
	}
	return out
}

// Set is one immutable class set. A nil *Set means classes are off.
type Set struct {
	// Revision is "sha256:<hex>" of the canonical form.
	Revision   string
	list       []Class
	namespaced map[string]*Class // "ns/name"
	cluster    map[string]*Class // "name"
}

// NewSet builds the set of list (a later duplicate of the same kind,
// namespace and name replaces an earlier one) and computes its revision.
func NewSet(list []Class) *Set {
	s := &Set{namespaced: map[string]*Class{}, cluster: map[string]*Class{}}
	byID := map[string]Class{}
	for _, c := range list {
		byID[c.Kind+"\x00"+c.Namespace+"\x00"+c.Name] = c
	}
	s.list = make([]Class, 0, len(byID))
	for _, c := range byID {
		s.list = append(s.list, c)
	}
	slices.SortFunc(s.list, func(a, b Class) int {
		if x := strings.Compare(a.Kind, b.Kind); x != 0 {
			return x
		}
		if x := strings.Compare(a.Namespace, b.Namespace); x != 0 {
			return x
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i := range s.list {
		c := &s.list[i]
		if c.Cluster() {
			s.cluster[c.Name] = c
		} else {
			s.namespaced[c.Namespace+"/"+c.Name] = c
		}
	}
	canonical, err := json.Marshal(s.list)
	if err != nil {
		panic("classes: canonical form: " + err.Error()) // plain strings only: cannot fail
	}
	sum := sha256.Sum256(canonical)
	s.Revision = "sha256:" + hex.EncodeToString(sum[:])
	return s
}

// Lookup finds the class a pod of namespace ns names with name: the
// namespaced class of ns first, then the cluster class (spec 08 §3 step 2).
func (s *Set) Lookup(ns, name string) *Class {
	if c := s.namespaced[ns+"/"+name]; c != nil {
		return c
	}
	return s.cluster[name]
}

// All lists the classes sorted by kind, namespace and name.
func (s *Set) All() []Class { return s.list }

// Count is the number of classes of kind.
func (s *Set) Count(kind string) int {
	if kind == KindCluster {
		return len(s.cluster)
	}
	return len(s.namespaced)
}
