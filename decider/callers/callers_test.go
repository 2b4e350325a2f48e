package callers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func digestOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func TestParse(t *testing.T) {
	good := `callers:
  - name: east-frontdoor
    clusters: [east]
    credentials:
      - uriSAN: spiffe://east.example/ns/dynamic-config/sa/frontdoor
  - name: west-frontdoor
    clusters: [west, west-canary]
    credentials:
      - tokenSHA256: ` + digestOf("old") + `
      - tokenSHA256: ` + strings.ToUpper(digestOf("new")) + `
      - dnsSAN: frontdoor.west.example
`
	t.Run("a valid file lists its callers in order", func(t *testing.T) {
		set, err := Parse([]byte(good), "callers.yaml", Options{ClientCertificates: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(set.Names(), ","); got != "east-frontdoor,west-frontdoor" || !set.UsesCertificates() {
			t.Errorf("names %q, certificates %v", got, set.UsesCertificates())
		}
	})

	for _, tc := range []struct {
		name, file string
		opts       Options
		want       []string
	}{
		{"a typo in every place is reported, each problem with its line", `callers:
  - nmae: east
    clusters: [east]
    credentials:
      - tokenSHA256: ` + digestOf("a") + `
  - name: West
    cluster: [west]
    credentials:
      - tokenSHA: abc
      - tokenSHA256: not-hex
      - uriSAN: "no scheme"
extra: 1
`, Options{ClientCertificates: true}, []string{
			"line 2: callers[0].name: missing",
			"line 2: callers[0].nmae: unknown key; accepted: name, clusters, credentials",
			`line 6: callers[1].name: "West" is not a caller name: lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`,
			"line 6: callers[1].clusters: missing; list the clusters this caller may speak for",
			"line 7: callers[1].cluster: unknown key; accepted: name, clusters, credentials",
			"line 9: callers[1].credentials[0].tokenSHA: unknown credential kind; accepted: tokenSHA256, uriSAN, dnsSAN",
			"line 10: callers[1].credentials[1].tokenSHA256: 64 hexadecimal digits, the SHA-256 of the token (sha256sum of the token without its newline); never the token itself",
			"line 11: callers[1].credentials[2].uriSAN: a URI with a scheme, e.g. spiffe://west.example/ns/dynamic-config/sa/frontdoor",
			"line 12: extra: unknown key; the only key is callers",
		}},
		{"duplicate names, clusters and credentials are refused", `callers:
  - name: a
    clusters: [x, x]
    credentials: [{tokenSHA256: ` + digestOf("t") + `}]
  - name: a
    clusters: [y]
    credentials: [{tokenSHA256: ` + digestOf("t") + `}]
`, Options{}, []string{
			`line 3: callers[0] (a).clusters[1]: "x" is listed twice`,
			`line 5: callers[1].name: "a" is already the name of the caller on line 2; names are unique`,
			"line 7: callers[1] (a).credentials[0].tokenSHA256: the same credential is already listed at line 4; a credential identifies one caller",
		}},
		{"a certificate identity without client-certificate verification can never match", `callers:
  - name: a
    clusters: [x]
    credentials: [{dnsSAN: a.example}]
`, Options{}, []string{
			"line 4: callers[0] (a).credentials[0].dnsSAN: the decider does not verify client certificates (no --tls-client-ca), so this identity can never be presented; set --tls-client-ca or use tokenSHA256",
		}},
		{"an empty file asks for the list", "", Options{}, []string{"the file is empty; it needs a callers: list"}},
		{"an empty list is refused", "callers: []\n", Options{}, []string{"line 1: callers: a non-empty list of callers (name, clusters, credentials)"}},
		{"a credential with two kinds is refused", `callers:
  - name: a
    clusters: [x]
    credentials: [{tokenSHA256: ` + digestOf("t") + `, uriSAN: "spiffe://a"}]
`, Options{ClientCertificates: true}, []string{
			"line 4: callers[0] (a).credentials[0]: a credential is a map with exactly one of tokenSHA256, uriSAN or dnsSAN",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), "callers.yaml", tc.opts)
			var problems *Problems
			if !errors.As(err, &problems) {
				t.Fatalf("err = %v, want *Problems", err)
			}
			if strings.Join(problems.List, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(problems.List, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
	t.Run("the digest of the empty token is refused", func(t *testing.T) {
		_, err := Parse([]byte("callers:\n  - name: a\n    clusters: [x]\n    credentials: [{tokenSHA256: "+digestOf("")+"}]\n"), "f", Options{})
		if err == nil || !strings.Contains(err.Error(), "the SHA-256 of the empty token") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a token pasted where its digest belongs is never echoed", func(t *testing.T) {
		_, err := Parse([]byte("callers:\n  - name: a\n    clusters: [x]\n    credentials: [{tokenSHA256: s3cr3t-token}]\n"), "f", Options{})
		if err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("err = %v; want a problem without the value", err)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	set, err := Parse([]byte(`callers:
  - name: east
    clusters: [east]
    credentials: [{uriSAN: "spiffe://e/fd"}, {tokenSHA256: `+digestOf("e-token")+`}]
  - name: west
    clusters: [west]
    credentials: [{dnsSAN: fd.west.example}, {tokenSHA256: `+digestOf("w-token")+`}]
`), "f", Options{ClientCertificates: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    Presented
		want string // "" = unauthenticated
	}{
		{"a known token identifies its caller", Presented{Token: "w-token", HasToken: true}, "west"},
		{"a known URI SAN identifies its caller", Presented{URIs: []string{"spiffe://e/fd"}}, "east"},
		{"a known DNS SAN identifies its caller", Presented{DNSNames: []string{"other", "fd.west.example"}}, "west"},
		{"a token and a certificate of the same caller agree", Presented{Token: "e-token", HasToken: true, URIs: []string{"spiffe://e/fd"}}, "east"},
		{"a token and a certificate of different callers are refused", Presented{Token: "w-token", HasToken: true, URIs: []string{"spiffe://e/fd"}}, ""},
		{"an unknown token is refused even with a known certificate", Presented{Token: "x", HasToken: true, URIs: []string{"spiffe://e/fd"}}, ""},
		{"a certificate naming two callers is refused", Presented{URIs: []string{"spiffe://e/fd"}, DNSNames: []string{"fd.west.example"}}, ""},
		{"a DNS name is not matched as a URI", Presented{URIs: []string{"fd.west.example"}}, ""},
		{"nothing presented is refused", Presented{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := set.Authenticate(tc.p)
			got := ""
			if ok {
				got = c.Name
			}
			if got != tc.want {
				t.Errorf("caller %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("the tap knows exactly the listed tokens, whatever the certificates", func(t *testing.T) {
		for token, want := range map[string]bool{"w-token": true, "e-token": true, "x": false, "": false, "w-token ": false,
			"spiffe://e/fd": false, "fd.west.example": false, digestOf("w-token"): false} {
			if got := set.KnowsToken(token); got != want {
				t.Errorf("KnowsToken(%q) = %v, want %v", token, got, want)
			}
		}
		var none *Set
		if none.KnowsToken("w-token") {
			t.Error("no set knows a token")
		}
	})
	t.Run("a caller may speak only for its listed clusters", func(t *testing.T) {
		c, _ := set.Authenticate(Presented{Token: "w-token", HasToken: true})
		if !c.MaySpeakFor("west") || c.MaySpeakFor("east") || c.MaySpeakFor("") || c.MaySpeakFor("wes") {
			t.Errorf("MaySpeakFor is wrong for %v", c.Clusters)
		}
	})
}
