package certs

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

func TestAPoolFollowsItsFileAndKeepsTheLastGoodBundle(t *testing.T) {
	first, err := certstest.Write(t.TempDir(), "first", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	second, err := certstest.Write(t.TempDir(), "second", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(b *certstest.Bundle) *x509.Certificate {
		c, err := parsePEMCertificate(b.CertPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	trusts := func(pool *x509.CertPool, b *certstest.Bundle) bool {
		_, err := leaf(b).Verify(x509.VerifyOptions{Roots: pool})
		return err == nil
	}

	file := filepath.Join(t.TempDir(), "ca.crt")
	p := NewPool(file)
	if _, err := p.Get(); err == nil {
		t.Fatal("a pool whose file does not exist yet: no error")
	}
	for _, step := range []struct {
		name               string
		content            []byte
		trustFirst, trust2 bool
	}{
		{"the first bundle is read", first.CAPEM, true, false},
		{"a rewritten bundle is in force at the next call once it has settled", append(append([]byte{}, second.CAPEM...), first.CAPEM...), true, true},
		{"a bundle that dropped a CA no longer trusts it", second.CAPEM, false, true},
		{"a half-written file keeps the last good pool", []byte("-----BEGIN CERTIFICATE-----\nMIIB"), false, true},
	} {
		t.Run(step.name, func(t *testing.T) {
			before, _ := p.Get()
			if err := os.WriteFile(file, step.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if pool, _ := p.Get(); before != nil && pool != before {
				t.Error("a change was in force before it settled")
			}
			time.Sleep(stablefile.DefaultSettle)
			pool, err := p.Get()
			if err != nil {
				t.Fatal(err)
			}
			if got := trusts(pool, first); got != step.trustFirst {
				t.Errorf("trusts the first CA: %v, want %v", got, step.trustFirst)
			}
			if got := trusts(pool, second); got != step.trust2 {
				t.Errorf("trusts the second CA: %v, want %v", got, step.trust2)
			}
		})
	}
}

// parsePEMCertificate reads the first certificate of a PEM text.
func parsePEMCertificate(text []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(text)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	return x509.ParseCertificate(block.Bytes)
}
