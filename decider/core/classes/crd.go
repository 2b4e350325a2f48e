package classes

import (
	"unicode/utf8"

	"github.com/dynamic-config-admission/dynamic-config/internal/dnsname"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// The CRDs' bounds (charts/dynamic-config/files/crds). FromObject holds every
// object to them and to the API server's naming rules, whether it comes
// from --classes-file or from the watch, so the file serves nothing the API
// server would have refused (issue 23).
const (
	// MaxKeyPrefixes is keyPrefixes' maxItems.
	MaxKeyPrefixes = 64
	// MaxKeyPrefixLength is a key prefix's maxLength, in characters.
	MaxKeyPrefixLength = 512
)

// checkNames holds metadata to the API server's rules for a custom
// resource: the name a DNS-1123 subdomain, the namespace a DNS-1123 label.
func checkNames(name, namespace string, report func(string, ...any)) {
	if name != "" && !dnsname.IsSubdomain(name) {
		report("metadata.name is %s: a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most %d characters)",
			redact.QuoteCut(name), dnsname.MaxSubdomain)
	}
	if namespace != "" && !dnsname.IsLabel(namespace) {
		report("metadata.namespace is %s: a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most %d characters)",
			redact.QuoteCut(namespace), dnsname.MaxLabel)
	}
}

// checkLists holds a cluster class's lists to the CRD: keyPrefixes at most
// MaxKeyPrefixes items of at most MaxKeyPrefixLength characters, namespaces
// a set (x-kubernetes-list-type: set, no item twice).
func checkLists(spec map[string]any, report func(string, ...any)) {
	if items, ok := spec["keyPrefixes"].([]any); ok {
		if len(items) > MaxKeyPrefixes {
			report("spec.keyPrefixes has %d items: at most %d", len(items), MaxKeyPrefixes)
		}
		for i, it := range items {
			if s, ok := it.(string); ok && utf8.RuneCountInString(s) > MaxKeyPrefixLength {
				report("spec.keyPrefixes[%d] is %d characters long: at most %d", i, utf8.RuneCountInString(s), MaxKeyPrefixLength)
			}
		}
	}
	if items, ok := spec["namespaces"].([]any); ok {
		seen := make(map[string]int, len(items))
		for i, it := range items {
			s, ok := it.(string)
			if !ok || s == "" {
				continue // stringList reports it
			}
			if first, twice := seen[s]; twice {
				report("spec.namespaces[%d] is %s, already spec.namespaces[%d]: the list is a set", i, redact.QuoteCut(s), first)
				continue
			}
			seen[s] = i
		}
	}
}
