package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/certs/certstest"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// TestTheDeciderWaitsForItsPairAndReReadsItsClientCA is the decider under
// tls.mode selfRotate: with --tls-wait it starts before the front door's CA
// leader has filled its Secret, and it re-reads the client CA bundle at
// every handshake, so a rotated CA is trusted from the next connection.
func TestTheDeciderWaitsForItsPairAndReReadsItsClientCA(t *testing.T) {
	dir := t.TempDir()
	f := deciderFlags{tlsCert: filepath.Join(dir, "tls.crt"), tlsKey: filepath.Join(dir, "tls.key"), tlsClientCA: filepath.Join(dir, "ca.crt")}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.DiscardHandler)
	if _, err := deciderTLS(ctx, f, logger, nil); err == nil {
		t.Fatal("no pair and no --tls-wait: no error")
	}
	f.tlsWait = true
	tc, err := deciderTLS(ctx, f, logger, nil)
	if err != nil {
		t.Fatalf("--tls-wait without the files: %v", err)
	}
	if tc.ClientAuth != tls.RequireAndVerifyClientCert || tc.GetConfigForClient == nil {
		t.Fatal("--tls-client-ca does not require client certificates")
	}
	if _, err := tc.GetConfigForClient(&tls.ClientHelloInfo{}); err == nil {
		t.Fatal("a handshake before the client CA exists is accepted")
	}

	first, err := certstest.Write(t.TempDir(), "first", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	second, err := certstest.Write(t.TempDir(), "second", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	trusts := func(b *certstest.Bundle) bool {
		t.Helper()
		c, err := tc.GetConfigForClient(&tls.ClientHelloInfo{})
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(b.CertPEM)
		leaf, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		_, err = leaf.Verify(x509.VerifyOptions{Roots: c.ClientCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err == nil
	}
	for _, step := range []struct {
		name          string
		bundle        []byte
		first, second bool
	}{
		{"the client CA is taken when it appears", first.CAPEM, true, false},
		{"a rotated bundle holding both CAs trusts both", append(append([]byte{}, second.CAPEM...), first.CAPEM...), true, true},
		{"a bundle that dropped the old CA trusts only the new one", second.CAPEM, false, true},
	} {
		t.Run(step.name, func(t *testing.T) {
			if err := os.WriteFile(f.tlsClientCA, step.bundle, 0o600); err != nil {
				t.Fatal(err)
			}
			// A rewritten bundle is taken once it has settled (issue 38): the
			// handshake that sees the change, then one a settle interval later.
			trusts(first)
			time.Sleep(stablefile.DefaultSettle)
			if got := trusts(first); got != step.first {
				t.Errorf("trusts the first CA's client: %v, want %v", got, step.first)
			}
			if got := trusts(second); got != step.second {
				t.Errorf("trusts the second CA's client: %v, want %v", got, step.second)
			}
		})
	}
}
