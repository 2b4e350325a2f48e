// Package dnsname checks the DNS-1123 names Kubernetes gives its objects
// (a label: a namespace; a subdomain: most object names), by hand rather
// than by regular expression: the decider checks every cluster name of a
// callers file on each reload, and a regexp made that reload the slow part.
// It accepts exactly what k8s.io/apimachinery/pkg/util/validation accepts.
package dnsname

// Limits of the two forms.
const (
	MaxLabel     = 63
	MaxSubdomain = 253
)

// IsLabel reports whether s is a DNS-1123 label: lower-case letters, digits
// and '-', starting and ending with a letter or digit, at most 63 characters.
func IsLabel(s string) bool { return len(s) <= MaxLabel && isLabel(s) }

// IsSubdomain reports whether s is a DNS-1123 subdomain: labels joined by
// '.', at most 253 characters (a label of a subdomain is not held to 63).
func IsSubdomain(s string) bool {
	if len(s) > MaxSubdomain {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !isLabel(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

func isLabel(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
