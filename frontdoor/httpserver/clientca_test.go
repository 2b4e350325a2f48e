package httpserver

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

// Issue 17: with --client-ca the front door answers /mutate and /validate
// only to a caller presenting a client certificate of that CA (the API
// server, through its AdmissionConfiguration kubeconfig).
func TestAClientCARequiresTheAPIServersCertificateOnTheAdmissionPaths(t *testing.T) {
	serving, err := certstest.Write(t.TempDir(), "tls", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	apiserver, err := certstest.Write(t.TempDir(), "apiserver", time.Hour) // the client CA and its client pair
	if err != nil {
		t.Fatal(err)
	}
	stranger, err := certstest.Write(t.TempDir(), "stranger", time.Hour) // another CA's client pair
	if err != nil {
		t.Fatal(err)
	}
	pair := certs.New(serving.CertFile, serving.KeyFile, nil, nil)
	if err := pair.Load(); err != nil {
		t.Fatal(err)
	}
	admission := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "admission") })
	s := New(Config{Admission: admission, Certs: pair, ClientCAs: apiserver.Pool()})
	addr, _ := start(t, s.Serve)
	clientWith := func(b *certstest.Bundle) *http.Client {
		tc := &tls.Config{RootCAs: serving.Pool()}
		if b != nil {
			cert, err := tls.X509KeyPair(b.CertPEM, b.KeyPEM)
			if err != nil {
				t.Fatal(err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	}

	t.Run("the API server's certificate reaches the handler", func(t *testing.T) {
		for _, p := range []string{"/mutate", "/validate"} {
			if code, body, _ := get(t, clientWith(apiserver), "https://"+addr+p); code != 200 || body != "admission" {
				t.Errorf("%s: %d %q", p, code, body)
			}
		}
	})
	t.Run("a request without a certificate is refused with 401", func(t *testing.T) {
		for _, p := range []string{"/mutate", "/validate"} {
			if code, body, _ := get(t, clientWith(nil), "https://"+addr+p); code != 401 || body != bodyClientCertificateRequired {
				t.Errorf("%s: %d %q", p, code, body)
			}
		}
	})
	t.Run("a certificate of another CA is refused", func(t *testing.T) {
		resp, err := clientWith(stranger).Get("https://" + addr + "/mutate")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("a stranger's certificate was served: %s", resp.Status)
			}
		}
	})
	t.Run("the probes stay open without a certificate", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz"} {
			if code, _, _ := get(t, clientWith(nil), "https://"+addr+p); code != 200 {
				t.Errorf("%s: %d", p, code)
			}
		}
	})
}

// Issue 23: anyone who reaches the port can make the refused-certificate
// WARN line; it is written first, then once per interval with a count.
func TestTheRefusedClientCertificateLineIsSampled(t *testing.T) {
	var log bytes.Buffer
	now := time.Unix(1000, 0)
	s := New(Config{
		Admission: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}),
		ClientCAs: x509.NewCertPool(),
		Logger:    slog.New(slog.NewJSONHandler(&log, nil)),
		Now:       func() time.Time { return now },
	})
	refuse := func(n int) {
		for range n {
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", nil))
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("code %d, want 401", rec.Code)
			}
		}
	}
	lines := func() []string { return strings.Split(strings.TrimSpace(log.String()), "\n") }

	refuse(1000)
	t.Run("a burst writes its first refusal only", func(t *testing.T) {
		if got := lines(); len(got) != 1 || !strings.Contains(got[0], `"suppressed":0`) {
			t.Errorf("lines %q", got)
		}
	})
	now = now.Add(refusedLogInterval)
	refuse(1)
	t.Run("the next line after the interval carries the suppressed count", func(t *testing.T) {
		if got := lines(); len(got) != 2 || !strings.Contains(got[1], `"suppressed":999`) {
			t.Errorf("lines %q", got)
		}
	})
}
