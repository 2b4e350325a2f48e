package dnsname

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

var samples = []string{
	"", "a", "a-b", "-a", "a-", "A", "a.b", "a..b", ".a", "a.", "a_b", "a/b", "../x", "b/c", "é",
	"1", "0-0", "a.b-c.d", strings.Repeat("a", 63), strings.Repeat("a", 64),
	strings.Repeat("a", 253), strings.Repeat("a", 254), strings.Repeat("a.", 126) + "a", "a%2eb",
}

func TestTheChecksAgreeWithTheAPIServers(t *testing.T) {
	for _, s := range samples {
		if got, want := IsLabel(s), len(validation.IsDNS1123Label(s)) == 0; got != want {
			t.Errorf("IsLabel(%q) = %v, the API server says %v", s, got, want)
		}
		if got, want := IsSubdomain(s), len(validation.IsDNS1123Subdomain(s)) == 0; got != want {
			t.Errorf("IsSubdomain(%q) = %v, the API server says %v", s, got, want)
		}
	}
}

func FuzzTheChecksAgreeWithTheAPIServers(f *testing.F) {
	for _, s := range samples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsLabel(s), len(validation.IsDNS1123Label(s)) == 0; got != want {
			t.Errorf("IsLabel(%q) = %v, the API server says %v", s, got, want)
		}
		if got, want := IsSubdomain(s), len(validation.IsDNS1123Subdomain(s)) == 0; got != want {
			t.Errorf("IsSubdomain(%q) = %v, the API server says %v", s, got, want)
		}
	})
}
