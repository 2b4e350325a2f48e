package httpserver

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs/certstest"
)

// start serves s on a loopback port and returns its address and a stop
// function that waits for Serve to return.
func start(t *testing.T, serve func(context.Context, net.Listener) error) (string, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, ln) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-errc
	}
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), stop
}

func get(t *testing.T, c *http.Client, url string) (int, string, *http.Response) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

func TestTLSServer(t *testing.T) {
	dir := t.TempDir()
	bundle, err := certstest.Write(dir, "tls", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cm, err := certs.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	pair := certs.New(bundle.CertFile, bundle.KeyFile, nil, cm.Observer(certs.CertificateFrontdoorServing))
	if err := pair.Load(); err != nil {
		t.Fatal(err)
	}
	admission := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "admission "+r.URL.Path) })
	s := New(Config{Admission: admission, Certs: pair, Gatherer: reg, Metrics: metrics.NewFrontdoor(reg)})
	addr, stop := start(t, s.Serve)
	client := &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: bundle.Pool()},
		ForceAttemptHTTP2: true,
	}}
	base := "https://" + addr

	t.Run("the admission paths reach the handler over HTTP/1.1", func(t *testing.T) {
		for _, p := range []string{"/mutate", "/validate"} {
			code, body, resp := get(t, client, base+p)
			if code != 200 || body != "admission "+p || resp.ProtoMajor != 1 {
				t.Fatalf("%s: %d %q over %s", p, code, body, resp.Proto)
			}
		}
	})
	t.Run("healthz and readyz answer ok with a pair loaded", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz"} {
			if code, body, _ := get(t, client, base+p); code != 200 || body != "ok" {
				t.Fatalf("%s: %d %q", p, code, body)
			}
		}
	})
	t.Run("metrics export the certificate expiry", func(t *testing.T) {
		code, body, _ := get(t, client, base+"/metrics")
		if code != 200 || !strings.Contains(body, `dynamic_config_certificate_expiration_timestamp_seconds{certificate="frontdoor-serving"} `) {
			t.Fatalf("metrics %d:\n%s", code, body)
		}
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "dynamic_config_certificate_expiration_timestamp_seconds" {
				if v := f.GetMetric()[0].GetGauge().GetValue(); v != float64(bundle.NotAfter.Unix()) {
					t.Fatalf("expiry gauge %v, want %d", v, bundle.NotAfter.Unix())
				}
				return
			}
		}
		t.Fatal("no expiry gauge")
	})
	t.Run("metrics count the webhook requests by webhook and code", func(t *testing.T) {
		_, body, _ := get(t, client, base+"/metrics")
		for _, want := range []string{
			`dynamic_config_webhook_requests_total{code="200",webhook="mutate"} 1`,
			`dynamic_config_webhook_requests_total{code="200",webhook="validate"} 1`,
			`dynamic_config_webhook_requests_in_flight{webhook="mutate"} 0`,
		} {
			if !strings.Contains(body, want+"\n") {
				t.Errorf("metrics lack %s:\n%s", want, body)
			}
		}
	})
	t.Run("TLS below 1.2 is refused", func(t *testing.T) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: bundle.Pool(), MaxVersion: tls.VersionTLS11}}}
		if _, err := c.Get(base + "/healthz"); err == nil {
			t.Fatal("a TLS 1.1 handshake succeeded")
		}
	})
	t.Run("stopping drains cleanly", func(t *testing.T) {
		if err := stop(); err != nil {
			t.Fatalf("Serve() = %v", err)
		}
	})
}

func TestReadinessWithoutPair(t *testing.T) {
	pair := certs.New("/nonexistent/tls.crt", "/nonexistent/tls.key", nil, nil)
	_ = pair.Load()
	h := OpsHandler(pair, prometheus.NewRegistry())
	addr, _ := start(t, func(ctx context.Context, ln net.Listener) error {
		srv := &http.Server{Handler: h}
		go func() { <-ctx.Done(); srv.Close() }()
		return srv.Serve(ln)
	})
	c := &http.Client{}
	if code, body, _ := get(t, c, "http://"+addr+"/readyz"); code != 503 || body != "no certificate loaded" {
		t.Fatalf("readyz without a pair: %d %q", code, body)
	}
	if code, body, _ := get(t, c, "http://"+addr+"/healthz"); code != 200 || body != "ok" {
		t.Fatalf("healthz: %d %q", code, body)
	}
	if code, _, _ := get(t, c, "http://"+addr+"/mutate"); code != 404 {
		t.Fatalf("the ops listener serves /mutate: %d", code)
	}
}

func TestPlaintextIsReady(t *testing.T) {
	s := New(Config{Gatherer: prometheus.NewRegistry()})
	addr, stop := start(t, s.Serve)
	if code, body, _ := get(t, &http.Client{}, "http://"+addr+"/readyz"); code != 200 || body != "ok" {
		t.Fatalf("plaintext readyz: %d %q", code, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestDrainWaitsForInFlightRequests(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		_, _ = io.WriteString(w, "done")
	})
	s := New(Config{Admission: slow, Gatherer: prometheus.NewRegistry(), ShutdownGrace: 5 * time.Second})
	addr, stop := start(t, s.Serve)
	got := make(chan string, 1)
	go func() {
		resp, err := http.Post("http://"+addr+"/mutate", "application/json", strings.NewReader("{}"))
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) before the in-flight request finished", err)
	default:
	}
	close(release)
	if body := <-got; body != "done" {
		t.Fatalf("in-flight request got %q", body)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve() = %v", err)
	}
}

// TestDrainTurnsReadinessOffAndClosesKeepAliveConnections: on shutdown the
// server keeps answering for the drain delay — /readyz 503, every response
// "Connection: close", so a client that reused an idle connection moves to
// a fresh one — and only then stops.
func TestDrainTurnsReadinessOffAndClosesKeepAliveConnections(t *testing.T) {
	admission := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "answered") })
	s := New(Config{Admission: admission, Gatherer: prometheus.NewRegistry(), DrainDelay: 2 * time.Second, ShutdownGrace: 5 * time.Second})
	addr, stop := start(t, s.Serve)
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer c.CloseIdleConnections()
	post := func() *http.Response {
		t.Helper()
		resp, err := c.Post("http://"+addr+"/mutate", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("POST /mutate: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if resp := post(); resp.Close {
		t.Fatal("before the drain, the answer closes the connection")
	}

	began := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	deadline := time.Now().Add(time.Second)
	for !s.Draining() {
		if time.Now().After(deadline) {
			t.Fatal("the server never began draining")
		}
		time.Sleep(5 * time.Millisecond)
	}

	t.Run("readyz answers 503 while draining", func(t *testing.T) {
		if code, body, _ := get(t, c, "http://"+addr+"/readyz"); code != http.StatusServiceUnavailable || body != "draining" {
			t.Errorf("/readyz = %d %q; want 503 \"draining\"", code, body)
		}
	})
	t.Run("admission answers still come, each with Connection: close", func(t *testing.T) {
		for range 3 {
			if resp := post(); !resp.Close || resp.StatusCode != http.StatusOK {
				t.Errorf("answer %d, close %v; want 200 with Connection: close", resp.StatusCode, resp.Close)
			}
		}
	})
	t.Run("the server stops after the drain delay", func(t *testing.T) {
		if err := <-stopped; err != nil {
			t.Fatalf("Serve() = %v", err)
		}
		if took := time.Since(began); took < 2*time.Second {
			t.Errorf("stopped %s after shutdown began; want the 2s drain delay first", took)
		}
	})
}

// Issue 23: the header block is bounded before any handler runs.
func TestAnOversizedHeaderBlockIsRefusedBeforeTheAdmissionHandler(t *testing.T) {
	var reached atomic.Bool
	s := New(Config{Admission: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Store(true) })})
	addr, _ := start(t, s.Serve)
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/mutate", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("a", 256<<10))
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || reached.Load() {
		t.Errorf("a 256 KiB header: %s, handler reached %v; want 431 before the handler", resp.Status, reached.Load())
	}
}
