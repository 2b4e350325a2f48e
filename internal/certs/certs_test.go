package certs

import (
	"bytes"
	"encoding/pem"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

type recorder struct {
	loaded  []time.Time
	reloads []bool
}

func (r *recorder) CertificateLoaded(t time.Time) { r.loaded = append(r.loaded, t) }
func (r *recorder) CertificateReload(ok bool)     { r.reloads = append(r.reloads, ok) }

func TestPairReload(t *testing.T) {
	dir := t.TempDir()
	first, err := certstest.Write(dir, "tls", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p := New(first.CertFile, first.KeyFile, nil, rec)

	if _, err := p.Certificate(); !errors.Is(err, ErrNoCertificate) {
		t.Fatalf("before Load: Certificate() error = %v, want ErrNoCertificate", err)
	}
	if err := p.Load(); err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if !p.Loaded() || !p.NotAfter().Equal(first.NotAfter) {
		t.Fatalf("after Load: loaded=%v notAfter=%v, want true %v", p.Loaded(), p.NotAfter(), first.NotAfter)
	}
	if len(rec.loaded) != 1 || len(rec.reloads) != 0 {
		t.Fatalf("the first load is reported as loaded but not as a reload: %+v", rec)
	}

	t.Run("an unchanged pair is neither parsed nor counted", func(t *testing.T) {
		changed, err := p.reload()
		if changed || err != nil || len(rec.reloads) != 0 {
			t.Fatalf("reload() = %v, %v; reloads %v", changed, err, rec.reloads)
		}
	})

	t.Run("a half-written pair keeps the last good pair and is counted once", func(t *testing.T) {
		if err := os.WriteFile(first.CertFile, first.CertPEM[:len(first.CertPEM)/2], 0o600); err != nil {
			t.Fatal(err)
		}
		changed, err := settledReload(t, p)
		if !changed || err == nil {
			t.Fatalf("reload() = %v, %v; want changed with an error", changed, err)
		}
		again, errAgain := p.reload()
		if again {
			t.Fatal("the same broken pair was reported twice")
		}
		if errAgain != err {
			t.Fatalf("the same broken pair was parsed again (error %v, first %v): only a change is parsed", errAgain, err)
		}
		cert, err := p.Certificate()
		if err != nil || !bytes.Equal(cert.Certificate[0], mustLeaf(t, first)) {
			t.Fatalf("the last good pair was not kept: %v", err)
		}
		if len(rec.reloads) != 1 || rec.reloads[0] {
			t.Fatalf("reloads = %v, want [false]", rec.reloads)
		}
	})

	t.Run("a new valid pair replaces the old one", func(t *testing.T) {
		second, err := certstest.Write(t.TempDir(), "tls", 2*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(first.KeyFile, second.KeyPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(first.CertFile, second.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		changed, err := settledReload(t, p)
		if !changed || err != nil {
			t.Fatalf("reload() = %v, %v", changed, err)
		}
		if !p.NotAfter().Equal(second.NotAfter) {
			t.Fatalf("notAfter = %v, want %v", p.NotAfter(), second.NotAfter)
		}
		if len(rec.reloads) != 2 || !rec.reloads[1] || len(rec.loaded) != 2 {
			t.Fatalf("events = %+v", rec)
		}
	})
}

// settledReload reloads p after a write: the change is not taken before it
// settled (issue 38), then it is.
func settledReload(t *testing.T, p *Pair) (bool, error) {
	t.Helper()
	if changed, err := p.reload(); changed {
		t.Fatalf("a change was taken before it settled: %v", err)
	}
	time.Sleep(stablefile.DefaultSettle)
	return p.reload()
}

func TestLoadFailsWithoutFiles(t *testing.T) {
	p := New("/nonexistent/tls.crt", "/nonexistent/tls.key", nil, nil)
	if err := p.Load(); err == nil {
		t.Fatal("Load() of missing files succeeded")
	}
	if p.Loaded() {
		t.Fatal("a pair is loaded after a failed Load")
	}
	cfg := p.ServerConfig()
	if cfg.MinVersion != 0x0303 || len(cfg.NextProtos) != 1 || cfg.NextProtos[0] != "http/1.1" {
		t.Fatalf("server config = min %x protos %v", cfg.MinVersion, cfg.NextProtos)
	}
	if _, err := cfg.GetCertificate(nil); !errors.Is(err, ErrNoCertificate) {
		t.Fatalf("GetCertificate() error = %v", err)
	}
}

func mustLeaf(t *testing.T, b *certstest.Bundle) []byte {
	t.Helper()
	block, _ := pem.Decode(b.CertPEM)
	if block == nil {
		t.Fatal("no PEM block")
	}
	return block.Bytes
}
