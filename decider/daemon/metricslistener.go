package daemon

import (
	"context"
	"fmt"
	"net"

	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/internal/opslistener"
)

// ServeMetrics listens on addr and serves /metrics (the decider's
// registry), /healthz and /readyz — ready while the decider is and
// alsoReady holds (nil: no further condition) — with net/http/pprof when
// pprof is set, until ctx ends. It returns the bound address and a channel
// that yields the listener's failure, or nil after its drain. Start calls
// it for Config.MetricsAddr; serve calls it once its front door started, for
// the one metrics listener of both components (alsoReady: the front door's
// serving pair).
func (d *Decider) ServeMetrics(ctx context.Context, addr string, pprof bool, alsoReady func() bool) (net.Addr, <-chan error, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics listener: %v", err)
	}
	ready := d.server.Ready
	if alsoReady != nil {
		ready = func() bool { return d.server.Ready() && alsoReady() }
	}
	h := server.MetricsHandler(d.registry, ready)
	if pprof {
		h = opslistener.WithPprof(h)
	}
	errc := opslistener.Serve(ctx, lis, h, d.cfg.Logger, d.cfg.ShutdownGrace)
	d.cfg.Logger.Info("metrics listening", "addr", lis.Addr().String(), "pprof", pprof)
	return lis.Addr(), errc, nil
}
