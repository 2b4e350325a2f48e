// Package httpserver is the front door's HTTP(S) server (spec 07 §3):
// /mutate and /validate (the admission handler), /healthz, /readyz and
// /metrics, served over TLS 1.2+ with HTTP/1.1 from a reloading key pair,
// with fixed timeouts and a graceful drain on shutdown.
package httpserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/logsample"
	"github.com/dynamic-config-admission/dynamic-config/internal/opslistener"
)

// Timeouts of the admission listener (spec 07 §3.3).
const (
	ReadHeaderTimeout    = 10 * time.Second
	ReadTimeout          = 30 * time.Second
	WriteTimeout         = 30 * time.Second
	IdleTimeout          = 120 * time.Second
	DefaultShutdownGrace = 30 * time.Second
	DefaultDrainDelay    = 5 * time.Second
	// MaxHeaderBytes bounds a request's header block (issue 23): the API
	// server sends a few hundred bytes; net/http's default is 1 MiB per
	// connection, read before any handler (or --client-ca) runs.
	MaxHeaderBytes = 32 << 10
)

// Config configures a Server.
type Config struct {
	// Admission serves /mutate and /validate (handler.New).
	Admission http.Handler
	// Certs is the serving pair; nil serves plain HTTP (--plaintext, tests, serve).
	Certs *certs.Pair
	// Gatherer backs /metrics (nil = prometheus.DefaultGatherer).
	Gatherer prometheus.Gatherer
	// Logger receives server errors (nil = discard).
	Logger *slog.Logger
	// Metrics counts the webhook requests in flight and by status code (nil = none).
	Metrics *metrics.Frontdoor
	// ShutdownGrace bounds the drain on shutdown (default 30s).
	ShutdownGrace time.Duration
	// DrainDelay is how long the server keeps answering after shutdown
	// began, with /readyz 503 and "Connection: close" on every response,
	// before it stops accepting (0 = stop at once). The endpoint list drops
	// the replica in that time and the API server stops reusing its idle
	// keep-alive connections to it (kubernetes #127335).
	DrainDelay time.Duration
	// ClientCAs, when set (--client-ca), authenticates the API server:
	// /mutate and /validate answer only a caller whose TLS client
	// certificate verifies against it (401 otherwise); /healthz, /readyz
	// and /metrics stay open to the kubelet's probes. It needs Certs.
	ClientCAs *x509.CertPool
	// Now is the clock of the sampled log lines (nil = time.Now; tests).
	Now func() time.Time
	// Pprof adds net/http/pprof under /debug/pprof/ on the ops listener
	// (ServeOps) only (--pprof).
	Pprof bool
}

// Server is the admission server.
type Server struct {
	cfg      Config
	mux      *http.ServeMux
	draining *atomic.Bool
}

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.Gatherer == nil {
		cfg.Gatherer = prometheus.DefaultGatherer
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	draining := new(atomic.Bool)
	mux := http.NewServeMux()
	if cfg.Admission != nil {
		admission := cfg.Admission
		if cfg.ClientCAs != nil {
			admission = requireClientCertificate(admission, cfg.Logger, logsample.New(refusedLogInterval, cfg.Now))
		}
		// counted outside the client-certificate check, so a refused caller's 401 counts too
		mux.Handle("/mutate", cfg.Metrics.Instrument(metrics.WebhookMutate, admission))
		mux.Handle("/validate", cfg.Metrics.Instrument(metrics.WebhookValidate, admission))
	}
	addOps(mux, cfg.Certs, cfg.Gatherer, draining)
	return &Server{cfg: cfg, mux: mux, draining: draining}
}

// Draining reports whether shutdown began (/readyz answers 503).
func (s *Server) Draining() bool { return s.draining.Load() }

// Handler is every endpoint of the admission listener.
func (s *Server) Handler() http.Handler { return s.mux }

// OpsHandler serves /metrics, /healthz and /readyz only: the extra plain
// listener of --metrics-addr.
func OpsHandler(pair *certs.Pair, g prometheus.Gatherer) http.Handler {
	if g == nil {
		g = prometheus.DefaultGatherer
	}
	mux := http.NewServeMux()
	addOps(mux, pair, g, new(atomic.Bool))
	return mux
}

func addOps(mux *http.ServeMux, pair *certs.Pair, g prometheus.Gatherer, draining *atomic.Bool) {
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		text(w, http.StatusOK, "ok")
	})
	// Readiness is "a serving pair is loaded (or the server is plaintext)".
	// Reachability of the decider is deliberately NOT part of it (spec 07
	// §3.1): the API server only calls ready endpoints, so tying readiness
	// to the decider would turn a decider outage into "no endpoints", and
	// the webhook's failurePolicy would answer instead of this front door —
	// bypassing --on-decider-error / --on-decider-error-validate, their
	// messages, warnings, audit annotations and metrics.
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if draining.Load() {
			text(w, http.StatusServiceUnavailable, "draining")
			return
		}
		if pair != nil && !pair.Loaded() {
			text(w, http.StatusServiceUnavailable, "no certificate loaded")
			return
		}
		text(w, http.StatusOK, "ok")
	})
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
}

// closeWhileDraining answers with "Connection: close" once the drain began,
// so that the client (the API server) stops reusing the connection.
func closeWhileDraining(h http.Handler, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

func text(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body) // a client that went away has nothing left to tell
}

// httpServer builds the net/http server with the fixed timeouts, HTTP/1.1 only.
func (s *Server) httpServer(h http.Handler) *http.Server {
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	return &http.Server{
		Handler:           closeWhileDraining(h, s.draining),
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		Protocols:         &protocols,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
}

// Serve serves the admission endpoints on ln (TLS when a pair is configured)
// until ctx ends, then stops accepting, drains in-flight requests for up to
// the shutdown grace, and closes what is left. It returns nil after a clean
// drain.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.cfg.Certs != nil {
		tc := s.cfg.Certs.ServerConfig()
		if s.cfg.ClientCAs != nil {
			// Verified when given; required on the admission paths only
			// (requireClientCertificate), so the kubelet's probes still pass.
			tc.ClientAuth, tc.ClientCAs = tls.VerifyClientCertIfGiven, s.cfg.ClientCAs
		}
		ln = tls.NewListener(ln, tc)
	}
	return s.serve(ctx, s.httpServer(s.mux), ln)
}

// ServeOps serves /metrics, /healthz and /readyz in plain HTTP on ln until
// ctx ends (its /readyz turns 503 with the admission listener's).
func (s *Server) ServeOps(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	addOps(mux, s.cfg.Certs, s.cfg.Gatherer, s.draining)
	var h http.Handler = mux
	if s.cfg.Pprof {
		h = opslistener.WithPprof(h)
	}
	return s.serve(ctx, s.httpServer(h), ln)
}

// ListenAndServe listens on addr (TCP) and calls Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln)
}

// serve runs srv on ln until ctx ends, then drains: readiness off at once
// and every further response says "Connection: close" (each keep-alive
// connection is closed by the server right after its next answer, never
// while the client may be writing a request on it); new connections are
// still answered for the drain delay; then keep-alives off and a graceful
// shutdown bounded by the grace.
func (s *Server) serve(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.draining.Store(true)
	if s.cfg.DrainDelay > 0 {
		select {
		case err := <-errc:
			return err
		case <-time.After(s.cfg.DrainDelay):
		}
	}
	srv.SetKeepAlivesEnabled(false)
	drain, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	err := srv.Shutdown(drain)
	if err != nil {
		srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// bodyClientCertificateRequired answers an admission request that did not
// present a verified client certificate.
const bodyClientCertificateRequired = "a client certificate is required: this front door authenticates the API server (--client-ca)"

// refusedLogInterval bounds the refused-certificate WARN line (issue 23):
// anyone who reaches the port can make it, so the first is written, then
// at most one per interval with the count suppressed in between.
const refusedLogInterval = 10 * time.Second

// requireClientCertificate serves next only to a caller whose TLS client
// certificate verified against the configured CA; anyone else gets 401.
func requireClientCertificate(next http.Handler, logger *slog.Logger, sampler *logsample.Sampler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			if write, suppressed := sampler.Allow(); write {
				logger.Warn("admission request without a client certificate refused", "path", r.URL.Path, "remote", r.RemoteAddr, "suppressed", suppressed)
			}
			w.Header().Set("X-Content-Type-Options", "nosniff")
			text(w, http.StatusUnauthorized, bodyClientCertificateRequired)
			return
		}
		next.ServeHTTP(w, r)
	})
}
