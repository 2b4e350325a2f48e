// Package daemon starts the decider (issue 37): a Config that says where
// the installation comes from (a document watched, a leader followed, or
// one given), where and how to listen (address or listener, TLS and the
// client CA, a token or a callers file), the classes, the metrics
// listener, tracing, the registry and the logger; and Start, which
// assembles decider/server around decider/service with the leader or the
// follower, the classes and the callers, and returns the running Decider:
// its address, readiness and shutdown. `dynamic-config decider` and `serve`
// start the decider here from their flags, and doors/engine starts the
// offline doors' decider here over an in-memory listener, so every door
// answers from a decider assembled by the same code.
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/leader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// Decider is a running decider: it loaded its installation (or follows its
// leader) and serves gRPC.
type Decider struct {
	cfg      Config
	store    *installationloader.Store
	classes  *classes.Store // nil: classes off
	server   *server.Server
	registry *prometheus.Registry
	rollouts *rolloutstate.State
	addr     net.Addr
	done     chan struct{} // closed once the gRPC server stopped serving
	err      error         // the server's run-time failure; read after done

	// the loops that keep the installation, the callers file and the
	// follower's or leader's state in step; Shutdown ends them and waits
	stopLoops context.CancelFunc
	loops     *sync.WaitGroup

	// the metrics listener of Config.MetricsAddr (nil: none)
	metricsAddr net.Addr
	metricsErr  <-chan error
	stopMetrics context.CancelFunc
}

// Start loads and validates the installation (an invalid one is an
// *installation.Problems, the report of every problem) or starts following
// the leader, listens, serves gRPC, and keeps the installation, the
// classes, the callers file and the serving pair in step until ctx ends.
// The gRPC server stops with Shutdown, or when Run's context ends; after
// Shutdown none of the decider's loops runs any more (serve removes its
// temporary installation document after it).
func Start(ctx context.Context, cfg Config) (d *Decider, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.MessageBudget <= 0 {
		cfg.MessageBudget = msgbudget.Bytes(0)
	}
	logger, reg := cfg.Logger, cfg.Registry
	if err := cfg.checkRollout(); err != nil {
		return nil, err
	}
	loops := new(sync.WaitGroup)
	ctx, stopLoops := context.WithCancel(ctx)
	defer func() {
		if err != nil {
			stopLoops()
			loops.Wait()
		}
	}()
	tlsConfig, err := cfg.serverTLS(ctx)
	if err != nil {
		return nil, err
	}

	m := metrics.NewDecider(reg)
	var (
		inst  *installation.Installation
		store *installationloader.Store
		fol   *follower.Follower
		lead  *leader.Leader
		srv   *server.Server
		ro    rollouts
	)
	refreshed := make(chan struct{}) // closed once srv is set
	refresh := func() {
		select {
		case <-refreshed:
			srv.RefreshHealth()
		default:
		}
	}
	scfg := server.Config{
		TLS:                   tlsConfig,
		TokenFile:             cfg.TokenFile,
		Reflection:            cfg.Reflection,
		MaxMessageBytes:       cfg.MessageBudget,
		Logger:                logger,
		Metrics:               m,
		MaxConnectionAge:      cfg.MaxConnectionAge,
		MaxConnectionAgeGrace: cfg.MaxConnectionAgeGrace,
		DrainDelay:            cfg.DrainDelay,
		Tracing:               cfg.Tracing,
	}
	if cfg.Follow == nil {
		inst = cfg.Installation.Given
		if inst == nil {
			// Settled (issue 38): a document being written is not read as
			// its prefix, so a leader publishes only whole revisions.
			if inst, err = installationloader.LoadSettled(cfg.Installation.Load); err != nil {
				return nil, err
			}
		}
		logger.Info("installation loaded", "revision", inst.Revision, "document", inst.DocumentPath)
		store = installationloader.NewStore(inst)
		ro = cfg.startRollouts(store, m, logger)
		lead = leader.New(store, leader.Config{Cluster: cfg.Cluster, Logger: logger, Metrics: metrics.NewLeader(reg), Rollouts: ro.store})
		scfg.Sync = lead
		loops.Go(func() { lead.Run(ctx) })
	} else {
		store = installationloader.NewStore(nil)
		ro = cfg.startRollouts(store, m, logger)
		if fol, err = cfg.startFollower(store, ro, m, refresh); err != nil {
			return nil, err
		}
		scfg.Serving = fol.Serving
		// The classes switch of a follower is its own Classes (the
		// leader's installation may turn it on too once it arrives).
		inst = store.Current()
		if inst == nil {
			inst = installation.Empty()
		}
	}
	if cfg.Callers != "" {
		opts := callers.Options{ClientCertificates: mutualTLS(tlsConfig)}
		file, err := callers.Open(cfg.Callers, opts, logger, m)
		if err != nil {
			return nil, fmt.Errorf("decider: %w", err)
		}
		loops.Go(func() { file.Watch(ctx, callers.DefaultRecheck) })
		scfg.Callers = file
	}
	watchByInstallation := cfg.Installation.Given == nil && inst.ClassesEnabled
	cs, err := cfg.Classes.start(ctx, watchByInstallation, reg, logger, refresh)
	if err != nil {
		return nil, err
	}
	if cs != nil {
		scfg.ClassesSynced = cs.Synced
	}
	svc := service.New(store, logger, m).WithCluster(cfg.Cluster).WithClasses(cs).LimitAnswers(cfg.MessageBudget).WithTracing(cfg.Tracing).
		WithRollouts(ro.state).WithBuild(cfg.Version)
	if fol != nil {
		svc.WithFollower(fol)
	} else {
		svc.WithLeader(lead)
	}
	srv, err = server.New(scfg, store, svc)
	close(refreshed)
	if err != nil {
		return nil, fmt.Errorf("decider: %w", err)
	}
	lis := cfg.Listener
	if lis == nil {
		if lis, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, fmt.Errorf("decider: %w", err)
		}
	}
	role := "leader"
	if fol != nil {
		role = "follower"
		loops.Go(func() { fol.Run(ctx) })
	} else if cfg.Installation.Given == nil {
		loops.Go(func() {
			installationloader.Watch(ctx, store, cfg.Installation.Load, cfg.Installation.ReloadInterval, logger, installationloader.Observers{m, lead, ro.state})
		})
		ro.watch(ctx, cfg, loops, lead)
	}

	d = &Decider{cfg: cfg, store: store, classes: cs, server: srv, registry: reg, rollouts: ro.state, addr: lis.Addr(), done: make(chan struct{}), stopLoops: stopLoops, loops: loops}
	go func() {
		d.err = srv.Serve(lis)
		close(d.done)
	}()
	logger.Info("decider listening", "addr", d.addr.String(), "transport", transport(tlsConfig), "decider_role", role,
		"token", cfg.TokenFile != "", "callers", cfg.Callers != "", "cluster", cfg.Cluster, "reflection", cfg.Reflection, "revision", store.Revision())

	if cfg.MetricsAddr != "" {
		// The metrics listener outlives the gRPC drain (Run stops it
		// after), so /readyz answers 503 while the decider drains (07 §1.1)
		// instead of refusing connections.
		metricsCtx, stop := context.WithCancel(context.Background())
		d.metricsAddr, d.metricsErr, err = d.ServeMetrics(metricsCtx, cfg.MetricsAddr, cfg.Pprof, nil)
		if err != nil {
			stop()
			d.Shutdown(0)
			return nil, fmt.Errorf("decider: %w", err)
		}
		d.stopMetrics = stop
	}
	return d, nil
}

// mutualTLS reports whether tc requires and verifies client certificates.
func mutualTLS(tc *tls.Config) bool {
	return tc != nil && tc.ClientAuth == tls.RequireAndVerifyClientCert
}

// transport names the listener's transport for the log.
func transport(tc *tls.Config) string {
	switch {
	case mutualTLS(tc):
		return "mtls"
	case tc != nil:
		return "tls"
	}
	return "plaintext"
}

// Addr is the gRPC listener's address.
func (d *Decider) Addr() net.Addr { return d.addr }

// MetricsAddr is the metrics listener's address (nil without one).
func (d *Decider) MetricsAddr() net.Addr { return d.metricsAddr }

// Ready reports what health and /readyz report: an installation is held,
// the classes synced, a follower not stale, and the decider not draining.
func (d *Decider) Ready() bool { return d.server.Ready() }

// Store is the installation store the decider decides from; a caller may
// swap another installation in (tests, the two-door corpus).
func (d *Decider) Store() *installationloader.Store { return d.store }

// Classes is the class store (nil: classes off).
func (d *Decider) Classes() *classes.Store { return d.classes }

// Registry is the registry every metric of the decider is in.
func (d *Decider) Registry() *prometheus.Registry { return d.registry }

// Done is closed once the gRPC server stopped serving: after Shutdown, or
// on its own (Err says why).
func (d *Decider) Done() <-chan struct{} { return d.done }

// Err is the gRPC server's run-time failure, once Done is closed.
func (d *Decider) Err() error {
	<-d.done
	return d.err
}

// DrainDelay is how long Shutdown serves NOT_SERVING before it stops.
func (d *Decider) DrainDelay() time.Duration { return d.server.DrainDelay() }

// Shutdown stops the decider: health NOT_SERVING, the drain delay, then a
// graceful stop bounded by grace. It returns once the server stopped, and
// may be called again (or after the server failed on its own). The
// metrics listener is left to Run.
func (d *Decider) Shutdown(grace time.Duration) {
	d.server.Shutdown(grace)
	<-d.done
	d.stopLoops()
	d.loops.Wait()
}

// ErrStopped is Run's answer when the decider or its metrics listener
// stopped on its own (the log says why).
var ErrStopped = errors.New("decider: stopped on its own")

// Run serves until ctx ends, then shuts down gracefully within
// Config.ShutdownGrace, stops the metrics listener and returns nil; when
// the decider or its metrics listener stops on its own first, it logs why
// and returns ErrStopped.
func (d *Decider) Run(ctx context.Context) error {
	logger, grace := d.cfg.Logger, d.cfg.ShutdownGrace
	select {
	case <-ctx.Done():
	case <-d.done:
		logger.Error("decider stopped", "error", fmt.Sprint(d.err))
		return ErrStopped
	case err := <-d.metricsErr:
		logger.Error("metrics listener stopped", "error", err.Error())
		d.Shutdown(grace)
		return ErrStopped
	}
	logger.Info("shutting down", "drain_delay", d.DrainDelay().String(), "grace", grace.String())
	d.Shutdown(grace)
	if d.stopMetrics != nil {
		d.stopMetrics()
		<-d.metricsErr //nolint:errcheck // waiting for the metrics listener to end; it logged its own failure
	}
	return nil
}
