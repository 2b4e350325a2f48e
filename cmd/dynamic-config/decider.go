package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/leader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/decider/service"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// certReloadInterval is how often the decider re-reads its serving pair.
const certReloadInterval = 10 * time.Second

// deciderFlags are the flags of `dynamic-config decider` (spec 07 §1.1).
type deciderFlags struct {
	global         globalFlags
	addr           string
	metricsAddr    string
	installation   string
	tlsCert        string
	tlsKey         string
	tlsClientCA    string
	tlsWait        bool
	plaintext      bool
	authTokenFile  string
	callers        string
	clusterName    string
	reflection     bool
	reloadInterval time.Duration
	maxRequest     int64
	maxRecvBytes   int64 // removed; refused when set
	shutdownGrace  time.Duration
	drainDelay     time.Duration
	maxConnAge     time.Duration
	maxConnAgeWait time.Duration
	classes        classesSetup
	pprof          bool
	follow         followFlags
	tracing        tracingFlags
}

func (d *deciderFlags) register(fs *flagSet) {
	d.global.register(fs, "json")
	fs.stringVar(&d.addr, "addr", "DYNAMIC_CONFIG_DECIDER_ADDR", "0.0.0.0:9090", "gRPC listener")
	fs.stringVar(&d.metricsAddr, "metrics-addr", "DYNAMIC_CONFIG_DECIDER_METRICS_ADDR", "0.0.0.0:9092", "plain HTTP listener for /metrics, /healthz, /readyz; empty = off")
	fs.stringVar(&d.installation, "installation", installation.DefaultsFileVariable, installation.DefaultDocumentPath, "the installation document")
	fs.stringVar(&d.tlsCert, "tls-cert", "DYNAMIC_CONFIG_DECIDER_TLS_CERT", "", "serving certificate (re-read on change)")
	fs.stringVar(&d.tlsKey, "tls-key", "DYNAMIC_CONFIG_DECIDER_TLS_KEY", "", "serving key (re-read on change)")
	fs.stringVar(&d.tlsClientCA, "tls-client-ca", "DYNAMIC_CONFIG_DECIDER_TLS_CLIENT_CA", "", "when set: mTLS, client certificates are required and verified against this CA")
	fs.boolVar(&d.tlsWait, "tls-wait", "DYNAMIC_CONFIG_DECIDER_TLS_WAIT", false, "start before the serving pair and the client CA exist and take them when they appear (tls.mode selfRotate: the front door issues them); handshakes fail until then")
	fs.boolVar(&d.plaintext, "plaintext", "DYNAMIC_CONFIG_DECIDER_PLAINTEXT", false, "serve gRPC without TLS")
	fs.stringVar(&d.authTokenFile, "auth-token-file", "DYNAMIC_CONFIG_DECIDER_TOKEN_FILE", "", "when set: every DeciderService call needs authorization: Bearer <token>")
	fs.stringVar(&d.callers, "callers", "DYNAMIC_CONFIG_DECIDER_CALLERS_FILE", "", "when set: the callers file — every DeciderService call must present a listed credential and may name only its caller's clusters (re-read on change; excludes --auth-token-file)")
	fs.stringVar(&d.clusterName, "cluster-name", "DYNAMIC_CONFIG_DECIDER_CLUSTER_NAME", "", "the decider's own cluster: the cluster of a request that names none (required with --callers)")
	fs.boolVar(&d.reflection, "reflection", "DYNAMIC_CONFIG_DECIDER_REFLECTION", true, "gRPC server reflection")
	fs.durationVar(&d.reloadInterval, "reload-interval", "DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL", installationloader.DefaultReloadInterval, "installation document poll interval")
	fs.int64Var(&d.maxRequest, "max-request-bytes", "DYNAMIC_CONFIG_DECIDER_MAX_REQUEST_BYTES", msgbudget.DefaultMaxRequestBytes, "the front door's AdmissionReview body limit (set both alike); the gRPC message limits are twice it")
	fs.int64Var(&d.maxRecvBytes, "max-recv-bytes", "DYNAMIC_CONFIG_DECIDER_MAX_RECV_BYTES", 0, "removed: use --max-request-bytes")
	fs.durationVar(&d.shutdownGrace, "shutdown-grace", "DYNAMIC_CONFIG_DECIDER_SHUTDOWN_GRACE", 30*time.Second, "graceful stop bound")
	fs.durationVar(&d.drainDelay, "drain-delay", "DYNAMIC_CONFIG_DECIDER_DRAIN_DELAY", server.DefaultDrainDelay, "on SIGTERM: serve this long as NOT_SERVING (health, /readyz) before the graceful stop; 0 = none")
	fs.durationVar(&d.maxConnAge, "max-connection-age", "DYNAMIC_CONFIG_DECIDER_MAX_CONNECTION_AGE", server.DefaultMaxConnectionAge, "close each client connection after this long (GOAWAY) so that clients re-resolve and find new replicas")
	fs.durationVar(&d.maxConnAgeWait, "max-connection-age-grace", "DYNAMIC_CONFIG_DECIDER_MAX_CONNECTION_AGE_GRACE", server.DefaultMaxConnectionAgeGrace, "what calls in flight get after that GOAWAY")
	fs.BoolVar(&d.classes.watch, "classes", false, "watch DynamicConfigClass and ClusterDynamicConfigClass objects through the API server (also on with $DYNAMIC_CONFIG_WEBHOOK_CLASSES=true)")
	fs.stringVar(&d.classes.kubeconfig, "kubeconfig", "", "", "kubeconfig for the classes watch (default: the in-cluster service account)")
	fs.stringVar(&d.classes.file, "classes-file", "", "", classesFileHelp)
	fs.boolVar(&d.pprof, "pprof", "DYNAMIC_CONFIG_DECIDER_PPROF", false, "serve net/http/pprof under /debug/pprof/ on the metrics listener")
	d.follow.register(fs)
	d.tracing.register(fs)
}

// runDecider is `dynamic-config decider`: the gRPC decider.
func runDecider(args []string, _ io.Reader, _, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return deciderMain(ctx, args, stderr)
}

// deciderMain runs the decider until ctx ends.
func deciderMain(ctx context.Context, args []string, stderr io.Writer) int {
	fs := newFlagSet("decider", stderr)
	var f deciderFlags
	f.register(fs)
	logger, code, done := parseArgs(fs, &f.global, args, stderr)
	if done {
		return code
	}
	if !f.valid(fs, stderr) || !f.tracing.valid(stderr, "decider") {
		return exitUsage
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr, err := f.tracing.start(ctx, fs, "dynamic-config-decider", logger)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	defer stopTracing(tr, logger)
	reg := prometheus.NewRegistry()
	certMetrics, err := certs.NewMetrics(reg)
	if err != nil {
		fmt.Fprintln(stderr, "decider: metrics: "+err.Error())
		return exitUsage
	}
	tlsConfig, err := deciderTLS(ctx, f, logger, certMetrics.Observer(certs.CertificateDeciderServing))
	if err != nil {
		fmt.Fprintln(stderr, "decider: "+err.Error())
		return exitUsage
	}

	// The default path may be missing (the empty document; Watch picks the
	// file up when it appears); a path named by flag or variable must exist.
	opts := installationloader.Options{
		DocumentPath:     f.installation,
		DocumentExplicit: fs.isSet("installation"),
		Environ:          os.Environ(),
	}
	d, err := startDecider(ctx, deciderSetup{
		logger:         logger,
		registry:       reg,
		installation:   opts,
		reloadInterval: f.reloadInterval,
		addr:           f.addr,
		classes:        f.classes,
		callers:        f.callers,
		cluster:        f.clusterName,
		follow:         f.follow.setup(f.maxRequest),
		tracing:        tr,
		server: server.Config{
			TLS:             tlsConfig,
			TokenFile:       f.authTokenFile,
			Reflection:      f.reflection,
			MaxMessageBytes: msgbudget.Bytes(f.maxRequest),

			MaxConnectionAge:      f.maxConnAge,
			MaxConnectionAgeGrace: f.maxConnAgeWait,
			DrainDelay:            f.drainDelay,
		},
	})
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}

	// The metrics listener outlives the gRPC drain, so /readyz answers 503
	// while the decider drains (07 §1.1) instead of refusing connections.
	opsCtx, stopOps := context.WithCancel(context.Background())
	defer stopOps()
	var metricsErr <-chan error
	if f.metricsAddr != "" {
		lis, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			d.shutdown(0)
			fmt.Fprintf(stderr, "decider: metrics listener: %v\n", err)
			return exitUsage
		}
		metricsErr = serveHTTP(opsCtx, lis, opsHandler(server.MetricsHandler(reg, d.server.Ready), f.pprof), logger, f.shutdownGrace)
		logger.Info("metrics listening", "addr", lis.Addr().String(), "pprof", f.pprof)
	}

	return waitDecider(ctx, logger, d, f.shutdownGrace, stopOps, metricsErr)
}

// deciderTLS builds the server TLS configuration from the flags (nil =
// plaintext); the serving pair is re-read while ctx lives.
func deciderTLS(ctx context.Context, f deciderFlags, logger *slog.Logger, observer certs.Observer) (*tls.Config, error) {
	hasPair := f.tlsCert != "" || f.tlsKey != ""
	switch {
	case f.plaintext && hasPair:
		return nil, errors.New("--plaintext and --tls-cert/--tls-key exclude each other")
	case f.plaintext && f.tlsClientCA != "":
		return nil, errors.New("--tls-client-ca needs --tls-cert/--tls-key; it cannot be used with --plaintext")
	case f.plaintext:
		return nil, nil
	case f.tlsCert == "" || f.tlsKey == "":
		if hasPair {
			return nil, errors.New("--tls-cert and --tls-key go together")
		}
		return nil, errors.New("no TLS pair at --tls-cert/--tls-key and --plaintext not set")
	}
	pair := certs.New(f.tlsCert, f.tlsKey, logger, observer)
	if err := pair.Load(); err != nil {
		if !f.tlsWait {
			return nil, fmt.Errorf("TLS pair: %w", err)
		}
		logger.Info("waiting for the serving pair (--tls-wait)", "cert_file", f.tlsCert, "error", err.Error())
	}
	go pair.Run(ctx, certReloadInterval)
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: pair.GetCertificate}
	if f.tlsClientCA == "" {
		return tc, nil
	}
	// The client CA bundle is re-read at every handshake (certs.Pool): a
	// rotated CA is trusted from the first handshake after its file changes.
	clientCAs := certs.NewPool(f.tlsClientCA)
	pool, err := clientCAs.Get()
	if err != nil && !f.tlsWait {
		return nil, fmt.Errorf("--tls-client-ca: %w", err)
	}
	tc.ClientCAs = pool
	tc.ClientAuth = tls.RequireAndVerifyClientCert
	tc.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pool, err := clientCAs.Get()
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		c := tc.Clone()
		c.GetConfigForClient = nil
		c.ClientCAs = pool
		if !slices.Contains(c.NextProtos, "h2") { // gRPC's ALPN, which credentials.NewTLS adds to tc only
			c.NextProtos = append(c.NextProtos, "h2")
		}
		return c, nil
	}
	return tc, nil
}

// deciderSetup is what startDecider needs (decider and serve).
type deciderSetup struct {
	logger         *slog.Logger
	registry       prometheus.Registerer
	installation   installationloader.Options
	reloadInterval time.Duration
	addr           string
	classes        classesSetup
	callers        string           // the callers file ("" = none)
	cluster        string           // the decider's own cluster name
	follow         *followSetup     // nil: a leader (its own installation)
	tracing        *tracing.Tracing // nil: off
	server         server.Config    // Logger, Metrics, Callers, ClassesSynced and Tracing are filled in
}

// runningDecider is a decider that loaded its installation and listens.
type runningDecider struct {
	store   *installationloader.Store
	classes *classes.Store // nil: classes off
	server  *server.Server
	metrics *metrics.Decider
	leader  *leader.Leader     // nil on a follower
	follow  *follower.Follower // nil on a leader
	addr    net.Addr
	done    chan struct{} // closed once the gRPC server stopped serving
	err     error         // the server's run-time failure; read after done
}

// startDecider loads and validates the installation (an invalid one is an
// *installation.Problems, printed as the report), listens on setup.addr,
// serves gRPC and watches the installation until ctx ends.
func startDecider(ctx context.Context, setup deciderSetup) (*runningDecider, error) {
	m := metrics.NewDecider(setup.registry)
	var (
		inst  *installation.Installation
		store *installationloader.Store
		fol   *follower.Follower
		lead  *leader.Leader
		srv   *server.Server
	)
	refreshed := make(chan struct{}) // closed once srv is set
	refresh := func() {
		select {
		case <-refreshed:
			srv.RefreshHealth()
		default:
		}
	}
	cfg := setup.server
	cfg.Logger, cfg.Metrics, cfg.Tracing = setup.logger, m, setup.tracing
	if setup.follow == nil {
		var err error
		inst, err = installationloader.LoadSettled(setup.installation)
		if err != nil {
			return nil, err
		}
		setup.logger.Info("installation loaded", "revision", inst.Revision, "document", inst.DocumentPath)
		store = installationloader.NewStore(inst)
		lead = leader.New(store, leader.Config{Cluster: setup.cluster, Logger: setup.logger, Metrics: metrics.NewLeader(setup.registry)})
		cfg.Sync = lead
		go lead.Run(ctx)
	} else {
		var err error
		store = installationloader.NewStore(nil)
		fol, err = setup.follow.start(store, setup, m, refresh)
		if err != nil {
			return nil, err
		}
		cfg.Serving = fol.Serving
		// The classes switch of a follower is its own --classes (the
		// leader's installation may turn it on too once it arrives).
		inst = store.Current()
		if inst == nil {
			inst = installation.Empty()
		}
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = msgbudget.Bytes(0)
	}
	if setup.callers != "" {
		opts := callers.Options{ClientCertificates: cfg.TLS != nil && cfg.TLS.ClientAuth == tls.RequireAndVerifyClientCert}
		file, err := callers.Open(setup.callers, opts, setup.logger, m)
		if err != nil {
			return nil, fmt.Errorf("decider: %w", err)
		}
		go file.Watch(ctx, callers.DefaultRecheck)
		cfg.Callers = file
	}
	cs, err := startClasses(ctx, setup.classes, inst, setup.registry, setup.logger, refresh)
	if err != nil {
		return nil, err
	}
	if cs != nil {
		cfg.ClassesSynced = cs.Synced
	}
	svc := service.New(store, setup.logger, m).WithCluster(setup.cluster).WithClasses(cs).LimitAnswers(cfg.MaxMessageBytes).WithTracing(setup.tracing)
	if fol != nil {
		svc.WithFollower(fol)
	} else {
		svc.WithLeader(lead)
	}
	srv, err = server.New(cfg, store, svc)
	close(refreshed)
	if err != nil {
		return nil, fmt.Errorf("decider: %w", err)
	}
	lis, err := net.Listen("tcp", setup.addr)
	if err != nil {
		return nil, fmt.Errorf("decider: %w", err)
	}
	role := "leader"
	if fol != nil {
		role = "follower"
		go fol.Run(ctx)
	} else {
		go installationloader.Watch(ctx, store, setup.installation, setup.reloadInterval, setup.logger, installationloader.Observers{m, lead})
	}

	d := &runningDecider{store: store, classes: cs, server: srv, metrics: m, leader: lead, follow: fol, addr: lis.Addr(), done: make(chan struct{})}
	go func() {
		d.err = srv.Serve(lis)
		close(d.done)
	}()
	mode := "plaintext"
	if cfg.TLS != nil {
		mode = "tls"
		if cfg.TLS.ClientAuth == tls.RequireAndVerifyClientCert {
			mode = "mtls"
		}
	}
	setup.logger.Info("decider listening", "addr", lis.Addr().String(), "transport", mode, "decider_role", role,
		"token", cfg.TokenFile != "", "callers", setup.callers != "", "cluster", setup.cluster, "reflection", cfg.Reflection, "revision", store.Revision())
	return d, nil
}

// shutdown stops the decider: health NOT_SERVING, drain up to grace, stop.
// It returns once the server stopped, and may be called again (or after the
// server failed on its own).
func (d *runningDecider) shutdown(grace time.Duration) {
	d.server.Shutdown(grace)
	<-d.done
}

// serveHTTP serves h on lis until ctx ends, then drains for up to grace.
// The returned channel yields the server's failure, or nil after the drain.
func serveHTTP(ctx context.Context, lis net.Listener, h http.Handler, logger *slog.Logger, grace time.Duration) <-chan error {
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

// checkCallerFlags validates --cluster-name and its pairing with --callers.
func checkCallerFlags(f deciderFlags) error {
	if problem := callers.CheckClusterName(f.clusterName); problem != "" {
		return errors.New("--cluster-name is " + problem)
	}
	if f.callers == "" {
		return nil
	}
	if f.authTokenFile != "" {
		return errors.New("--callers and --auth-token-file exclude each other; list the token's SHA-256 in the callers file as a caller's tokenSHA256")
	}
	if f.clusterName == "" {
		return errors.New("--callers needs --cluster-name: the decider's own cluster, which a request naming no cluster is decided for and checked against")
	}
	return nil
}

// valid checks the decider's flags, printing the first problem.
func (d *deciderFlags) valid(fs *flagSet, stderr io.Writer) bool {
	if !allPositive(stderr, "decider",
		durationFlag("reload-interval", d.reloadInterval),
		durationFlag("shutdown-grace", d.shutdownGrace),
		durationFlag("max-connection-age", d.maxConnAge),
		durationFlag("max-connection-age-grace", d.maxConnAgeWait)) {
		return false
	}
	if d.drainDelay < 0 {
		fmt.Fprintf(stderr, "decider: --drain-delay is %s: 0 or more\n", d.drainDelay)
		return false
	}
	if d.pprof && d.metricsAddr == "" {
		fmt.Fprintln(stderr, errPprofWithoutMetrics("decider").Error())
		return false
	}
	if fs.isSet("max-recv-bytes") {
		fmt.Fprintln(stderr, "decider: --max-recv-bytes is replaced by --max-request-bytes: set it to the front door's "+
			"--max-request-bytes; the gRPC message limits of both ends are twice it")
		return false
	}
	if err := msgbudget.Check(d.maxRequest); err != nil {
		fmt.Fprintln(stderr, "decider: "+err.Error())
		return false
	}
	if err := checkCallerFlags(*d); err != nil {
		fmt.Fprintln(stderr, "decider: "+err.Error())
		return false
	}
	if err := d.follow.check(fs, os.Environ()); err != nil {
		fmt.Fprintln(stderr, "decider: "+err.Error())
		return false
	}
	return true
}

// waitDecider serves until ctx ends (a graceful shutdown, exit 0) or the
// decider or its metrics listener stops on its own (exit 1).
func waitDecider(ctx context.Context, logger *slog.Logger, d *runningDecider, grace time.Duration, stopOps func(), metricsErr <-chan error) int {
	select {
	case <-ctx.Done():
	case <-d.done:
		logger.Error("decider stopped", "error", fmt.Sprint(d.err))
		return exitRefused
	case err := <-metricsErr:
		logger.Error("metrics listener stopped", "error", err.Error())
		d.shutdown(grace)
		return exitRefused
	}
	logger.Info("shutting down", "drain_delay", d.server.DrainDelay().String(), "grace", grace.String())
	d.shutdown(grace)
	stopOps()
	if metricsErr != nil {
		<-metricsErr //nolint:errcheck // waiting for the metrics listener to end; it logged its own failure
	}
	return exitOK
}
