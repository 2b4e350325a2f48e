package main

// serve's running parts: the front door in front of the in-process decider,
// the metrics listener, the announcement of the bound addresses, the wait.

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/certs"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/httpserver"
	fmetrics "github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// servingFrontdoor is serve's front door: its HTTP server, listener, serving
// pair (nil: plain HTTP) and decider client.
type servingFrontdoor struct {
	srv    *httpserver.Server
	lis    net.Listener
	pair   *certs.Pair
	client *client.Client
}

// startFrontdoor builds the front door in front of d and binds its listener.
func (s *serveFlags) startFrontdoor(ctx context.Context, d *runningDecider, reg *prometheus.Registry, logger *slog.Logger,
	tr *tracing.Tracing, certFile, keyFile, tokenFile string, budget int) (*servingFrontdoor, error) {
	m := fmetrics.NewFrontdoor(reg)
	fd := &servingFrontdoor{}
	if certFile != "" {
		certMetrics, err := certs.NewMetrics(reg)
		if err != nil {
			return nil, errors.New("serve: metrics: " + err.Error())
		}
		fd.pair = certs.New(certFile, keyFile, logger, certMetrics.Observer(certs.CertificateFrontdoorServing))
		if err := fd.pair.Load(); err != nil {
			return nil, fmt.Errorf("serve: the serving pair at %s and %s does not load: %v", certFile, keyFile, err)
		}
		go fd.pair.Run(ctx, 10*time.Second)
	}
	var clientCAs *x509.CertPool
	if s.clientCA != "" {
		if fd.pair == nil {
			return nil, errors.New("serve: --client-ca needs TLS (--tls-cert/--tls-key or --tls-generate)")
		}
		var err error
		if clientCAs, err = loadClientCA(s.clientCA); err != nil {
			return nil, errors.New("serve: " + err.Error())
		}
	}
	dc, err := client.New(client.Config{Target: d.addr.String(), Plaintext: true, TokenFile: tokenFile, MaxMessageBytes: budget, Tracing: tr})
	if err != nil {
		return nil, errors.New("serve: " + err.Error())
	}
	fd.client = dc
	fd.srv = httpserver.New(httpserver.Config{
		Admission: handler.New(handler.Config{
			Decider:                dc,
			OnDeciderError:         s.onDeciderError,
			OnDeciderErrorValidate: s.onDeciderErrorValidate,
			MaxRequestBytes:        s.maxRequestBytes,
			Logger:                 logger,
			Metrics:                m,
			Tracing:                tr,
		}),
		Certs:         fd.pair,
		ClientCAs:     clientCAs,
		Gatherer:      reg,
		Metrics:       m,
		Logger:        logger,
		ShutdownGrace: serveShutdownGrace,
	})
	if fd.lis, err = net.Listen("tcp", s.addr); err != nil {
		dc.Close()
		return nil, fmt.Errorf("serve: %v", err)
	}
	return fd, nil
}

// serveMetrics serves metrics (and pprof) on --metrics-addr when given,
// returning the bound address ("" when none) and the server's end.
func (s *serveFlags) serveMetrics(ctx context.Context, d *runningDecider, pair *certs.Pair, reg *prometheus.Registry, logger *slog.Logger) (string, <-chan error, error) {
	if s.metricsAddr == "" {
		return "", nil, nil
	}
	mlis, err := net.Listen("tcp", s.metricsAddr)
	if err != nil {
		return "", nil, fmt.Errorf("serve: metrics listener: %v", err)
	}
	// The bound address: with port 0 only it says where to scrape.
	metricsAddr := mlis.Addr().String()
	ready := func() bool { return d.server.Ready() && (pair == nil || pair.Loaded()) }
	metricsErr := serveHTTP(ctx, mlis, opsHandler(server.MetricsHandler(reg, ready), s.pprof), logger, serveShutdownGrace)
	logger.Info("metrics listening", "addr", metricsAddr, "pprof", s.pprof)
	return metricsAddr, metricsErr, nil
}

// announce writes the bound addresses to --addr-file and logs them.
func (s *serveFlags) announce(logger *slog.Logger, fd *servingFrontdoor, d *runningDecider, metricsAddr string) error {
	scheme := "http"
	if fd.pair != nil {
		scheme = "https"
	}
	frontdoorURL := scheme + "://" + fd.lis.Addr().String()
	if s.addrFile != "" {
		content := "frontdoor=" + frontdoorURL + "\ndecider=" + d.addr.String() + "\n"
		if metricsAddr != "" {
			content += "metrics=" + metricsAddr + "\n"
		}
		if err := writeFileAtomic(s.addrFile, []byte(content)); err != nil {
			return fmt.Errorf("serve: --addr-file: %v", err)
		}
	}
	serving := []any{"frontdoor", frontdoorURL, "decider", d.addr.String()}
	if metricsAddr != "" {
		serving = append(serving, "metrics", metricsAddr)
	}
	logger.Info("serving", append(serving, "revision", d.store.Revision())...)
	return nil
}

// waitServing serves the front door until ctx ends (exit 0) or a component
// stops on its own (exit 1).
func waitServing(ctx context.Context, logger *slog.Logger, fd *servingFrontdoor, d *runningDecider, metricsErr <-chan error) int {
	errc := make(chan error, 1)
	go func() { errc <- fd.srv.Serve(ctx, fd.lis) }()
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
		<-errc //nolint:errcheck // waiting for Serve to return; a cancelled serve has nothing to report
		return exitOK
	case err := <-errc:
		if ctx.Err() != nil {
			return exitOK
		}
		logger.Error("frontdoor stopped", "error", fmt.Sprint(err))
	case <-d.done:
		logger.Error("decider stopped", "error", fmt.Sprint(d.err))
	case err := <-metricsErr:
		logger.Error("metrics listener stopped", "error", fmt.Sprint(err))
	}
	return exitRefused
}
