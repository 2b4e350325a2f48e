package podaudit

import (
	"context"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/internal/opslistener"
)

// serveShutdownGrace bounds the metrics listener's drain when Serve ends.
const serveShutdownGrace = 5 * time.Second

// Serve is the audit reporter as a process (audit-reporter): it runs the
// reporter and serves its Handler (reg's metrics) on lis until ctx ends
// (nil), or until the caches cannot sync or the listener fails, which is
// logged and returned.
func (r *Reporter) Serve(ctx context.Context, lis net.Listener, reg prometheus.Gatherer) error {
	logger := r.cfg.Logger
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	served := opslistener.Serve(ctx, lis, r.Handler(reg), logger, serveShutdownGrace)
	logger.Info("audit reporter started", "metrics_addr", lis.Addr().String(), "webhook_configuration", r.cfg.Configuration, "interval", r.cfg.Interval.String())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	var err error
	select {
	case err = <-ran:
		if err != nil {
			logger.Error("audit reporter stopped", "error", err)
		}
		stop()
		<-served //nolint:errcheck // the drain after the stop; the reporter's end is what is reported
	case err = <-served:
		if err != nil {
			logger.Error("metrics listener failed", "error", err)
		}
		stop()
	}
	logger.Info("audit reporter stopped")
	return err
}
