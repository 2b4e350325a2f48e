package classes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// Problem is one reason an object is not a valid class.
type Problem = string

// FromObject validates one class object (a decoded JSON/YAML document, or an
// unstructured object from the API server) against spec 08 §1. It returns
// the class, or every problem found (never both).
func FromObject(obj map[string]any) (Class, []Problem) {
	var problems []Problem
	report := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	c := Class{}
	apiVersion, _ := obj["apiVersion"].(string)
	c.Kind, _ = obj["kind"].(string)
	if apiVersion != APIVersion {
		report("apiVersion is %s: want %s", redact.QuoteCut(apiVersion), APIVersion)
	}
	if c.Kind != KindNamespaced && c.Kind != KindCluster {
		report("kind is %s: want %s or %s", redact.QuoteCut(c.Kind), KindNamespaced, KindCluster)
		return Class{}, problems
	}
	meta, _ := obj["metadata"].(map[string]any)
	c.Name, _ = meta["name"].(string)
	c.Namespace, _ = meta["namespace"].(string)
	if c.Name == "" {
		report("metadata.name is required")
	}
	switch {
	case c.Kind == KindNamespaced && c.Namespace == "":
		report("metadata.namespace is required: a %s lives in a namespace", KindNamespaced)
	case c.Kind == KindCluster && c.Namespace != "":
		report("metadata.namespace is %s: a %s is cluster-scoped and has none", redact.QuoteCut(c.Namespace), KindCluster)
	}

	checkNames(c.Name, c.Namespace, report)

	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		report("spec is required (source and endpoint)")
		return Class{}, problems
	}
	allowed := []string{"source", "endpoint", "tokenSecret"}
	if c.Kind == KindCluster {
		allowed = append(allowed, "namespaces", "keyPrefixes")
	}
	for _, k := range sortedKeys(spec) {
		if !slices.Contains(allowed, k) {
			report("spec.%s is not a field of a %s: %s", k, c.Kind, strings.Join(allowed, ", "))
		}
	}

	c.Source = requiredString(spec, "source", report)
	if c.Source != "" && !slices.Contains(installation.Stores, c.Source) {
		report("spec.source is %s: one of %s", redact.QuoteCut(c.Source), strings.Join(installation.Stores, ", "))
	}
	c.Endpoint = requiredString(spec, "endpoint", report)

	if raw, present := spec["tokenSecret"]; present {
		if c.Kind == KindNamespaced {
			name, ok := raw.(string)
			switch {
			case !ok:
				report("spec.tokenSecret is not a string: the name of a Secret in namespace %s (key %s)", c.Namespace, DefaultTokenKey)
			case name == "":
				report("spec.tokenSecret is empty: name a Secret, or drop the field")
			default:
				c.TokenSecret = &TokenSecret{Name: name, Namespace: c.Namespace, Key: DefaultTokenKey}
			}
		} else {
			c.TokenSecret = clusterTokenSecret(raw, report)
		}
	}
	if c.Kind == KindCluster {
		c.Namespaces = stringList(spec, "namespaces", report, nil)
		c.KeyPrefixes = stringList(spec, "keyPrefixes", report, checkPrefix)
		checkLists(spec, report)
	}
	if len(problems) > 0 {
		return Class{}, problems
	}
	return c, nil
}

func requiredString(spec map[string]any, field string, report func(string, ...any)) string {
	raw, present := spec[field]
	if !present {
		report("spec.%s is required", field)
		return ""
	}
	s, ok := raw.(string)
	switch {
	case !ok:
		report("spec.%s is not a string", field)
	case s == "":
		report("spec.%s is empty", field)
	}
	return s
}

func clusterTokenSecret(raw any, report func(string, ...any)) *TokenSecret {
	m, ok := raw.(map[string]any)
	if !ok {
		report("spec.tokenSecret is not an object: {name, namespace, key}")
		return nil
	}
	t := &TokenSecret{Key: DefaultTokenKey}
	for _, k := range sortedKeys(m) {
		if k != "name" && k != "namespace" && k != "key" {
			report("spec.tokenSecret.%s is not a field: name, namespace, key", k)
		}
	}
	for _, f := range []struct {
		name     string
		dst      *string
		required bool
	}{{"name", &t.Name, true}, {"namespace", &t.Namespace, true}, {"key", &t.Key, false}} {
		v, present := m[f.name]
		if !present {
			if f.required {
				report("spec.tokenSecret.%s is required", f.name)
			}
			continue
		}
		s, ok := v.(string)
		switch {
		case !ok:
			report("spec.tokenSecret.%s is not a string", f.name)
		case s == "":
			report("spec.tokenSecret.%s is empty", f.name)
		default:
			*f.dst = s
		}
	}
	return t
}

func stringList(spec map[string]any, field string, report func(string, ...any), check func(string) string) []string {
	raw, present := spec[field]
	if !present || raw == nil {
		return nil
	}
	items, ok := raw.([]any)
	if !ok {
		report("spec.%s is not a list of strings", field)
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		switch {
		case !ok:
			report("spec.%s[%d] is not a string", field, i)
		case s == "":
			report("spec.%s[%d] is empty", field, i)
		default:
			if check != nil {
				if p := check(s); p != "" {
					report("spec.%s[%d] is %s: %s", field, i, redact.QuoteCut(s), p)
					continue
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// checkPrefix allows {namespace} as the only placeholder.
func checkPrefix(p string) string {
	if strings.ContainsAny(strings.ReplaceAll(p, NamespacePlaceholder, ""), "{}") {
		return "the only placeholder a key prefix may hold is " + NamespacePlaceholder
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
