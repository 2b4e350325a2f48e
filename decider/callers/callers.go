// Package callers is the decider's caller registry (docs/multi-cluster.md):
// who may call the decider, with which credential, and for which clusters.
// A callers file names each caller, its credentials — a client-certificate
// identity (URI or DNS SAN) or the SHA-256 digest of a bearer token — and the
// clusters it may speak for. Every comparison against the file is constant
// time over digests, so neither content nor length leaks through timing.
package callers

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"slices"
)

// Credential kinds as the callers file spells them.
const (
	KindTokenSHA256 = "tokenSHA256"
	KindURISAN      = "uriSAN"
	KindDNSSAN      = "dnsSAN"
)

// Caller is one caller of the file.
type Caller struct {
	// Name is the caller's name (a DNS label); it is the metrics' caller label.
	Name string
	// Clusters are the cluster names the caller may speak for.
	Clusters []string

	clusterDigests [][sha256.Size]byte
}

// MaySpeakFor reports whether the caller may ask for decisions about
// cluster. It compares against every listed cluster in constant time.
func (c *Caller) MaySpeakFor(cluster string) bool {
	if c == nil {
		return false
	}
	want := sha256.Sum256([]byte(cluster))
	match := 0
	for i := range c.clusterDigests {
		match |= subtle.ConstantTimeCompare(want[:], c.clusterDigests[i][:])
	}
	return match == 1
}

// credential is one credential of one caller, kept as a digest.
type credential struct {
	kind   string
	digest [sha256.Size]byte
	caller int
}

// Set is a validated callers file.
type Set struct {
	callers     []*Caller
	credentials []credential
	certs       bool
	// tokens holds every token digest of the file under tokenKey, for
	// KnowsToken.
	tokens map[[sha256.Size]byte]struct{}
}

// KnowsToken reports whether token is one of the file's tokens: one digest
// and one map lookup, cheap enough for the transport's tap, which refuses an
// unknown token before the call's message is read (issue 38). Which caller
// it is, and whether a certificate agrees, is Authenticate's.
func (s *Set) KnowsToken(token string) bool {
	if s == nil || len(s.tokens) == 0 {
		return false
	}
	_, ok := s.tokens[tokenKey(sha256.Sum256([]byte(token)))]
	return ok
}

// keyOfTokens is this process's secret for tokenKey.
var keyOfTokens = func() (k [sha256.Size]byte) {
	_, _ = rand.Read(k[:]) // never fails (crypto/rand)
	return k
}()

// tokenKey is the map key of a token digest: a keyed hash of it. A map
// compares keys byte by byte, so the time of a lookup could tell how much
// of a listed digest a presented one shares; keyed with a secret of the
// process, the keys it compares say nothing about the listed digests.
func tokenKey(digest [sha256.Size]byte) [sha256.Size]byte {
	var b [2 * sha256.Size]byte
	copy(b[:sha256.Size], keyOfTokens[:])
	copy(b[sha256.Size:], digest[:])
	return sha256.Sum256(b[:])
}

// Names lists the callers' names in file order.
func (s *Set) Names() []string {
	names := make([]string, len(s.callers))
	for i, c := range s.callers {
		names[i] = c.Name
	}
	return names
}

// UsesCertificates reports whether any caller is identified by a client
// certificate.
func (s *Set) UsesCertificates() bool { return s != nil && s.certs }

// Presented is what one call presented: its bearer token (when it sent an
// authorization header) and the SANs of its verified client certificate.
type Presented struct {
	Token    string
	HasToken bool
	URIs     []string
	DNSNames []string
}

// Authenticate finds the caller the presented credentials identify. A
// presented token must be known; a certificate counts when one of its SANs
// is known. It fails when nothing is known, or when the credentials point at
// different callers. Every credential of the file is compared, in constant
// time, whatever matched first.
func (s *Set) Authenticate(p Presented) (*Caller, bool) {
	if s == nil {
		return nil, false
	}
	tokenCaller, certCallers := -1, []int(nil)
	var tokenDigest [sha256.Size]byte
	if p.HasToken {
		tokenDigest = sha256.Sum256([]byte(p.Token))
	}
	sans := make([][sha256.Size]byte, 0, len(p.URIs)+len(p.DNSNames))
	for _, u := range p.URIs {
		sans = append(sans, sanDigest(KindURISAN, u))
	}
	for _, d := range p.DNSNames {
		sans = append(sans, sanDigest(KindDNSSAN, d))
	}
	for i := range s.credentials {
		cred := &s.credentials[i]
		if cred.kind == KindTokenSHA256 {
			if p.HasToken && subtle.ConstantTimeCompare(tokenDigest[:], cred.digest[:]) == 1 {
				tokenCaller = cred.caller
			}
			continue
		}
		for j := range sans {
			if subtle.ConstantTimeCompare(sans[j][:], cred.digest[:]) == 1 && !slices.Contains(certCallers, cred.caller) {
				certCallers = append(certCallers, cred.caller)
			}
		}
	}
	switch {
	case p.HasToken && tokenCaller < 0:
		return nil, false // a token that is not known is never outvoted by a certificate
	case p.HasToken && len(certCallers) > 0 && (len(certCallers) > 1 || certCallers[0] != tokenCaller):
		return nil, false // the token and the certificate name different callers
	case p.HasToken:
		return s.callers[tokenCaller], true
	case len(certCallers) == 1:
		return s.callers[certCallers[0]], true
	}
	return nil, false
}

// sanDigest is the digest a certificate identity is kept and compared as.
func sanDigest(kind, value string) [sha256.Size]byte {
	return sha256.Sum256([]byte(kind + ":" + value))
}
