// Package daemon starts the front door (issue 37): a Config that says
// where to listen, with which serving pair (from files, or signed in memory
// under tls.mode selfRotate) and client CA, how to reach the decider, how
// to answer when it cannot, the metrics listener, tracing, the registry and
// the logger; and Start, which assembles the admission handler
// (frontdoor/handler) behind the HTTPS server (frontdoor/httpserver) with
// its decider client (frontdoor/client) and returns the running Frontdoor:
// its address, readiness and end. `dynamic-config frontdoor` and serve's
// front door start here from their flags.
package daemon

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/httpserver"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/promruntime"
)

// ErrClientCAWithoutTLS refuses a client CA over plain HTTP.
var ErrClientCAWithoutTLS = errors.New("--client-ca needs the serving pair (TLS); it cannot be used over plain HTTP")

// PairError is a serving pair that does not load.
type PairError struct {
	CertFile, KeyFile string
	Err               error
}

func (e *PairError) Error() string {
	return fmt.Sprintf("the serving pair at %s and %s does not load: %v", e.CertFile, e.KeyFile, e.Err)
}

func (e *PairError) Unwrap() error { return e.Err }

// Frontdoor is a running front door: it listens and answers admissions
// until the context Start was given ends.
type Frontdoor struct {
	lis, metricsLis net.Listener
	pair            *certs.Pair // nil: plain HTTP
	done            chan struct{}
	err             error
}

// Start builds the front door and serves it until ctx ends, then drains.
// A configuration that cannot start (a pair that does not load, a client
// CA that does not read, a listener that does not bind) is an error.
func Start(ctx context.Context, cfg Config) (*Frontdoor, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.TLS.ReloadInterval <= 0 {
		cfg.TLS.ReloadInterval = DefaultCertReloadInterval
	}
	logger, reg := cfg.Logger, cfg.Registry
	m := metrics.NewFrontdoor(reg)
	if err := promruntime.Register(reg); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	pair, clientCAs, err := cfg.serving(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	ccfg := cfg.Decider
	ccfg.Tracing = cfg.Tracing
	ccfg.WaitForFiles = ccfg.WaitForFiles || cfg.SelfRotate != nil
	dc, err := client.New(ccfg)
	if err != nil {
		cancel()
		return nil, err
	}
	if pair != nil && cfg.SelfRotate == nil {
		go pair.Run(ctx, cfg.TLS.ReloadInterval)
	}
	var cache *decisioncache.Cache
	if dcc := cfg.DecisionCache; !dcc.Off {
		cache = decisioncache.New(decisioncache.Config{MaxEntries: int(dcc.MaxEntries), MaxBytes: dcc.MaxBytes,
			StaleIfError: dcc.StaleIfError, Metrics: m})
		go cache.Watch(ctx, dc, cfg.Cluster, logger)
	}
	srv := httpserver.New(httpserver.Config{
		Admission: handler.New(handler.Config{
			Decider:                dc,
			Cluster:                cfg.Cluster,
			Timeout:                cfg.Timeout,
			OnDeciderError:         cfg.OnDeciderError,
			OnDeciderErrorValidate: cfg.OnDeciderErrorValidate,
			MaxRequestBytes:        cfg.MaxRequestBytes,
			Logger:                 logger,
			Metrics:                m,
			Tracing:                cfg.Tracing,
			Cache:                  cache,
			StaleIfError:           cfg.DecisionCache.StaleIfError,
		}),
		Certs:         pair,
		ClientCAs:     clientCAs,
		Gatherer:      reg,
		Metrics:       m,
		Logger:        logger,
		ShutdownGrace: cfg.ShutdownGrace,
		DrainDelay:    cfg.DrainDelay,
		Pprof:         cfg.Pprof,
	})
	f := &Frontdoor{pair: pair, done: make(chan struct{})}
	if err := f.listen(cfg); err != nil {
		cancel()
		dc.Close()
		return nil, err
	}
	go f.serve(ctx, cancel, srv, dc, logger)
	return f, nil
}

// listen binds the admission listener and, with MetricsAddr, the metrics
// listener.
func (f *Frontdoor) listen(cfg Config) (err error) {
	if f.lis = cfg.Listener; f.lis == nil {
		if f.lis, err = net.Listen("tcp", cfg.Addr); err != nil {
			return err
		}
	}
	if cfg.MetricsAddr == "" {
		return nil
	}
	if f.metricsLis, err = net.Listen("tcp", cfg.MetricsAddr); err != nil {
		f.lis.Close()
		return fmt.Errorf("metrics listener: %v", err)
	}
	cfg.Logger.Info("metrics listening", "addr", f.metricsLis.Addr().String(), "pprof", cfg.Pprof)
	return nil
}

// serve serves the admission listener (and the metrics listener) until
// ctx ends and both drained, or one fails while ctx lives: that failure is
// logged and is Err, and the other one is stopped.
func (f *Frontdoor) serve(ctx context.Context, cancel context.CancelFunc, srv *httpserver.Server, dc *client.Client, logger *slog.Logger) {
	errc := make(chan error, 2)
	running := 1
	go func() { errc <- srv.Serve(ctx, f.lis) }()
	if f.metricsLis != nil {
		running++
		go func() { errc <- srv.ServeOps(ctx, f.metricsLis) }()
	}
	for ; running > 0; running-- {
		if err := <-errc; err != nil && ctx.Err() == nil {
			logger.Error("frontdoor stopped", "error", err.Error())
			f.err = err
			break
		}
	}
	close(f.done)
	cancel()
	for ; running > 1; running-- {
		<-errc //nolint:errcheck // the other listener's drain after the failure reported above
	}
	dc.Close()
}

// Addr is the admission listener's address.
func (f *Frontdoor) Addr() net.Addr { return f.lis.Addr() }

// URL is the admission listener's base URL: https://host:port, or http://
// over plain HTTP.
func (f *Frontdoor) URL() string {
	if f.pair == nil {
		return "http://" + f.lis.Addr().String()
	}
	return "https://" + f.lis.Addr().String()
}

// TLS reports whether the admission listener serves TLS.
func (f *Frontdoor) TLS() bool { return f.pair != nil }

// MetricsAddr is the metrics listener's address (nil without one).
func (f *Frontdoor) MetricsAddr() net.Addr {
	if f.metricsLis == nil {
		return nil
	}
	return f.metricsLis.Addr()
}

// Ready reports what /readyz reports before the drain: a serving pair is
// in use, or the listener is plain HTTP. Whether the decider answers is
// deliberately no part of it (spec 07 §3.1).
func (f *Frontdoor) Ready() bool { return f.pair == nil || f.pair.Loaded() }

// Done is closed once the front door stopped: drained after its context
// ended, or failed (Err).
func (f *Frontdoor) Done() <-chan struct{} { return f.done }

// Err is the failure that stopped the front door (nil after a drain),
// once Done is closed.
func (f *Frontdoor) Err() error {
	<-f.done
	return f.err
}

// serving loads the serving pair (nil: plain HTTP) and the client CA that
// guards /mutate and /validate (nil: none). Under SelfRotate the pair is
// signed in memory by the rotator started here; /readyz says 503 until the
// first one is (the CA may not be minted yet).
func (cfg Config) serving(ctx context.Context) (*certs.Pair, *x509.CertPool, error) {
	var pair *certs.Pair
	if cfg.SelfRotate != nil || cfg.TLS.CertFile != "" || cfg.TLS.KeyFile != "" {
		certMetrics, err := certs.NewMetrics(cfg.Registry)
		if err != nil {
			return nil, nil, fmt.Errorf("metrics: %w", err)
		}
		pair = certs.New(cfg.TLS.CertFile, cfg.TLS.KeyFile, cfg.Logger, certMetrics.Observer(certs.CertificateFrontdoorServing))
	}
	switch {
	case cfg.SelfRotate != nil:
		rotator, err := cfg.SelfRotate.rotator(pair, cfg.Logger)
		if err != nil {
			return nil, nil, err
		}
		go rotator.Run(ctx)
	case pair != nil:
		if err := pair.Load(); err != nil {
			if !cfg.TLS.PlaintextWithoutPair {
				return nil, nil, &PairError{CertFile: cfg.TLS.CertFile, KeyFile: cfg.TLS.KeyFile, Err: err}
			}
			cfg.Logger.Warn("no serving certificate; serving plain HTTP (--plaintext)")
			pair = nil
		}
	}
	if cfg.TLS.ClientCA == "" {
		return pair, nil, nil
	}
	if pair == nil {
		return nil, nil, ErrClientCAWithoutTLS
	}
	pool, err := readClientCA(cfg.TLS.ClientCA)
	if err != nil {
		return nil, nil, err
	}
	return pair, pool, nil
}

// readClientCA reads the CA whose client certificates the front door
// accepts on /mutate and /validate (the API server's, issue 17). It is
// read at start; a new CA takes a restart.
func readClientCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--client-ca: %s holds no PEM certificate", path)
	}
	return pool, nil
}
