// Package opslistener serves a process's plain-HTTP operations listener —
// /metrics, /healthz and /readyz, and net/http/pprof under /debug/pprof/
// when asked (pprof.go) — with the fixed timeouts of every listener of the
// binary and a bounded drain when the process stops. The decider's metrics
// listener (decider/daemon), serve's shared one and the audit reporter's run
// on it; the front door's runs on its own server (frontdoor/httpserver), whose
// drain it shares with the admission listener.
package opslistener

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve serves h on lis until ctx ends, then drains for up to grace. The
// returned channel yields the server's failure, or nil after the drain.
// The server's own complaints (a bad request line, a TLS probe) go to
// logger at WARN.
func Serve(ctx context.Context, lis net.Listener, h http.Handler, logger *slog.Logger, grace time.Duration) <-chan error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	out := make(chan error, 1)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	go func() {
		select {
		case err := <-served:
			out <- err
			return
		case <-ctx.Done():
		}
		drain, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		if err := srv.Shutdown(drain); err != nil {
			srv.Close()
		}
		<-served //nolint:errcheck // waiting for Serve to return after Shutdown; its error is the shutdown's
		out <- nil
	}()
	return out
}
