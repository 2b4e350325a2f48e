package daemon

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

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// TestTheDeciderWaitsForItsPairAndReReadsItsClientCA is the decider under
// tls.mode selfRotate: with TLS.Wait it starts before the front door's CA
// leader has filled its Secret, and it re-reads the client CA bundle at
// every handshake, so a rotated CA is trusted from the next connection.
func TestTheDeciderWaitsForItsPairAndReReadsItsClientCA(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{TLS: TLS{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), ClientCA: filepath.Join(dir, "ca.crt")},
		Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := cfg.serverTLS(ctx); err == nil {
		t.Fatal("no pair and no TLS.Wait: no error")
	}
	cfg.TLS.Wait = true
	tc, err := cfg.serverTLS(ctx)
	if err != nil {
		t.Fatalf("TLS.Wait without the files: %v", err)
	}
	if tc.ClientAuth != tls.RequireAndVerifyClientCert || tc.GetConfigForClient == nil {
		t.Fatal("TLS.ClientCA does not require client certificates")
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
			if err := os.WriteFile(cfg.TLS.ClientCA, step.bundle, 0o600); err != nil {
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

// TestAnMTLSDeciderAnswersOnlyAClientItsCATrusts starts the decider with
// a serving pair and a client CA and calls it over real mTLS: with the
// CA's client certificate it answers; without one the handshake fails.
func TestAnMTLSDeciderAnswersOnlyAClientItsCATrusts(t *testing.T) {
	pki, err := certstest.Write(t.TempDir(), "leaf", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Start(t.Context(), Config{Installation: loading(writeDocument(t, "")), Addr: "127.0.0.1:0",
		TLS: TLS{CertFile: pki.CertFile, KeyFile: pki.KeyFile, ClientCA: pki.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Shutdown(time.Second)
	pair, err := tls.LoadX509KeyPair(pki.CertFile, pki.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	check := func(certificates []tls.Certificate) error {
		conn, err := grpc.NewClient(d.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
			RootCAs: pki.Pool(), Certificates: certificates, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}
	if err := check([]tls.Certificate{pair}); err != nil {
		t.Errorf("a client with the CA's certificate: %v", err)
	}
	if err := check(nil); err == nil {
		t.Error("a client without a certificate was answered")
	}
}
