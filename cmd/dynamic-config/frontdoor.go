package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/httpserver"
	fmetrics "github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
	"github.com/dynamic-config-admission/dynamic-config/internal/promruntime"
)

// frontdoorFlags are the flags of `dynamic-config frontdoor` (spec 07 §1.2).
type frontdoorFlags struct {
	global                 globalFlags
	addr                   string
	metricsAddr            string
	tlsCert, tlsKey        string
	clientCA               string
	plaintext              bool
	deciderTarget          string
	decider                deciderClientFlags
	deciderTimeout         time.Duration
	clusterName            string
	onDeciderError         string
	onDeciderErrorValidate string
	maxRequestBytes        int64
	certReloadInterval     time.Duration
	shutdownGrace          time.Duration
	drainDelay             time.Duration
	pprof                  bool
	selfRotate             selfRotateFlags
	tracing                tracingFlags
}

func (d *frontdoorFlags) register(fs *flagSet) {
	d.global.register(fs, "json")
	fs.stringVar(&d.addr, "addr", "DYNAMIC_CONFIG_WEBHOOK_ADDR", "0.0.0.0:8443", "admission listener (HTTPS)")
	fs.stringVar(&d.metricsAddr, "metrics-addr", "DYNAMIC_CONFIG_WEBHOOK_METRICS_ADDR", "", "extra plain HTTP listener for /metrics, /healthz, /readyz; empty = off")
	fs.stringVar(&d.tlsCert, "tls-cert", "DYNAMIC_CONFIG_WEBHOOK_TLS_CERT", "/tls/tls.crt", "serving certificate (re-read on change)")
	fs.stringVar(&d.tlsKey, "tls-key", "DYNAMIC_CONFIG_WEBHOOK_TLS_KEY", "/tls/tls.key", "serving key (re-read on change)")
	fs.stringVar(&d.clientCA, "client-ca", "DYNAMIC_CONFIG_WEBHOOK_CLIENT_CA", "", "when set: /mutate and /validate require a client certificate verified against this CA (the API server's, from its AdmissionConfiguration kubeconfig)")
	fs.boolVar(&d.plaintext, "plaintext", "DYNAMIC_CONFIG_WEBHOOK_PLAINTEXT", false, "serve plain HTTP when there is no TLS material (tests only)")
	fs.stringVar(&d.deciderTarget, "decider-target", "DYNAMIC_CONFIG_DECIDER_TARGET", "", "decider gRPC target, e.g. dns:///dynamic-config-decider.dynamic-config.svc:9090 (required)")
	d.decider.register(fs, "decider", "DYNAMIC_CONFIG_DECIDER_", "the decider", "the target's host")
	fs.durationVar(&d.deciderTimeout, "decider-timeout", "DYNAMIC_CONFIG_DECIDER_TIMEOUT", handler.DefaultTimeout, "per-call deadline; keep it below the webhook timeoutSeconds")
	fs.stringVar(&d.clusterName, "cluster-name", "DYNAMIC_CONFIG_FRONTDOOR_CLUSTER_NAME", "", "the cluster this front door admits for, sent with every decision request (empty = the decider's own cluster)")
	fs.stringVar(&d.onDeciderError, "on-decider-error", "DYNAMIC_CONFIG_ON_DECIDER_ERROR", handler.OnErrorDeny, "deny or allow on /mutate when the decider gives no usable answer")
	fs.stringVar(&d.onDeciderErrorValidate, "on-decider-error-validate", "DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE", "", "deny or allow on /validate (default: the value of --on-decider-error)")
	fs.completeValues("on-decider-error", handler.OnErrorDeny, handler.OnErrorAllow)
	fs.completeValues("on-decider-error-validate", handler.OnErrorDeny, handler.OnErrorAllow)
	fs.int64Var(&d.maxRequestBytes, "max-request-bytes", "DYNAMIC_CONFIG_FRONTDOOR_MAX_REQUEST_BYTES", handler.DefaultMaxRequestBytes, "AdmissionReview body limit; the gRPC message limits to the decider are twice it (set the decider's alike)")
	fs.durationVar(&d.certReloadInterval, "cert-reload-interval", "DYNAMIC_CONFIG_FRONTDOOR_CERT_RELOAD_INTERVAL", 10*time.Second, "serving pair poll interval")
	fs.durationVar(&d.shutdownGrace, "shutdown-grace", "DYNAMIC_CONFIG_FRONTDOOR_SHUTDOWN_GRACE", httpserver.DefaultShutdownGrace, "drain bound on SIGTERM")
	fs.durationVar(&d.drainDelay, "drain-delay", "DYNAMIC_CONFIG_FRONTDOOR_DRAIN_DELAY", httpserver.DefaultDrainDelay, "on SIGTERM: keep answering this long with /readyz 503 and Connection: close before the shutdown; 0 = none")
	fs.boolVar(&d.pprof, "pprof", "DYNAMIC_CONFIG_FRONTDOOR_PPROF", false, "serve net/http/pprof under /debug/pprof/ on the metrics listener (needs --metrics-addr)")
	d.selfRotate.register(fs)
	d.tracing.register(fs)
}

// runFrontdoor is `dynamic-config frontdoor`: the admission HTTPS server.
func runFrontdoor(args []string, _ io.Reader, _, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return frontdoorMain(ctx, args, stderr)
}

// frontdoorMain runs the front door until ctx ends.
func frontdoorMain(ctx context.Context, args []string, stderr io.Writer) int {
	set := newFlagSet("frontdoor", stderr)
	var f frontdoorFlags
	f.register(set)
	logger, code, done := parseArgs(set, &f.global, args, stderr)
	if done {
		return code
	}
	if refuseInstallationVariables(stderr) || !f.valid(stderr) || !f.tracing.valid(stderr, "frontdoor") {
		return exitUsage
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr, err := f.tracing.start(ctx, set, "dynamic-config-frontdoor", logger)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	defer stopTracing(tr, logger)
	reg := prometheus.NewRegistry()
	m := fmetrics.NewFrontdoor(reg)
	if err := promruntime.Register(reg); err != nil {
		fmt.Fprintln(stderr, "frontdoor: metrics: "+err.Error())
		return exitUsage
	}
	certMetrics, err := certs.NewMetrics(reg)
	if err != nil {
		fmt.Fprintln(stderr, "frontdoor: metrics: "+err.Error())
		return exitUsage
	}
	pair, clientCAs, err := f.serving(ctx, logger, certMetrics.Observer(certs.CertificateFrontdoorServing))
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	ccfg := f.clientConfig()
	ccfg.Tracing = tr
	dc, err := client.New(ccfg)
	if err != nil {
		fmt.Fprintln(stderr, "frontdoor: "+err.Error())
		return exitUsage
	}
	defer dc.Close()
	if pair != nil && !f.selfRotate.enabled {
		go pair.Run(ctx, f.certReloadInterval)
	}

	srv := httpserver.New(httpserver.Config{
		Admission: handler.New(handler.Config{
			Decider:                dc,
			Cluster:                f.clusterName,
			Timeout:                f.deciderTimeout,
			OnDeciderError:         f.onDeciderError,
			OnDeciderErrorValidate: f.onDeciderErrorValidate,
			MaxRequestBytes:        f.maxRequestBytes,
			Logger:                 logger,
			Metrics:                m,
			Tracing:                tr,
		}),
		Certs:         pair,
		ClientCAs:     clientCAs,
		Gatherer:      reg,
		Metrics:       m,
		Logger:        logger,
		ShutdownGrace: f.shutdownGrace,
		DrainDelay:    f.drainDelay,
		Pprof:         f.pprof,
	})
	lis, opsLis, err := f.listen(logger)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	logger.Info("frontdoor listening", "addr", lis.Addr().String(), "tls", pair != nil, "client_ca", clientCAs != nil,
		"decider_target", f.deciderTarget, "cluster", f.clusterName, "on_decider_error", f.onDeciderError)
	return runFrontdoorServer(ctx, srv, lis, opsLis, logger)
}

// valid checks the front door's flags, printing the first problem.
func (d *frontdoorFlags) valid(stderr io.Writer) bool {
	if d.deciderTarget == "" {
		fmt.Fprintln(stderr, "frontdoor: --decider-target is required")
		return false
	}
	if err := checkFailureFlags(d.onDeciderError, d.onDeciderErrorValidate); err != nil {
		fmt.Fprintln(stderr, "frontdoor: "+err.Error())
		return false
	}
	if d.pprof && d.metricsAddr == "" {
		fmt.Fprintln(stderr, errPprofWithoutMetrics("frontdoor").Error())
		return false
	}
	if problem := callers.CheckClusterName(d.clusterName); problem != "" {
		fmt.Fprintln(stderr, "frontdoor: --cluster-name is "+problem)
		return false
	}
	if !allPositive(stderr, "frontdoor",
		durationFlag("decider-timeout", d.deciderTimeout),
		durationFlag("cert-reload-interval", d.certReloadInterval),
		durationFlag("shutdown-grace", d.shutdownGrace)) {
		return false
	}
	if d.drainDelay < 0 {
		fmt.Fprintf(stderr, "frontdoor: --drain-delay is %s: 0 or more\n", d.drainDelay)
		return false
	}
	if err := msgbudget.Check(d.maxRequestBytes); err != nil {
		fmt.Fprintln(stderr, "frontdoor: "+err.Error())
		return false
	}
	return true
}

// serving loads the serving pair (nil: plain HTTP, only with --plaintext)
// and the client CA that guards /mutate and /validate (nil: none).
// With --self-rotate the pair is signed in memory by the rotator started
// here; /readyz says 503 until the first one is (the CA may not be minted yet).
func (d *frontdoorFlags) serving(ctx context.Context, logger *slog.Logger, observer certs.Observer) (*certs.Pair, *x509.CertPool, error) {
	pair := certs.New(d.tlsCert, d.tlsKey, logger, observer)
	if d.selfRotate.enabled {
		rotator, err := d.selfRotate.newSelfRotator(pair, logger)
		if err != nil {
			return nil, nil, errors.New("frontdoor: " + err.Error())
		}
		go rotator.Run(ctx)
	} else if err := pair.Load(); err != nil {
		if !d.plaintext {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil, fmt.Errorf("frontdoor: no certificate at %s and %s, and plaintext is off", d.tlsCert, d.tlsKey)
			}
			return nil, nil, fmt.Errorf("frontdoor: the serving pair at %s and %s does not load: %v", d.tlsCert, d.tlsKey, err)
		}
		logger.Warn("no serving certificate; serving plain HTTP (--plaintext)")
		pair = nil
	}
	if d.clientCA == "" {
		return pair, nil, nil
	}
	if pair == nil {
		return nil, nil, errors.New("frontdoor: --client-ca needs the serving pair (TLS); it cannot be used over plain HTTP")
	}
	pool, err := loadClientCA(d.clientCA)
	if err != nil {
		return nil, nil, errors.New("frontdoor: " + err.Error())
	}
	return pair, pool, nil
}

// clientConfig is the decider client's configuration.
func (d *frontdoorFlags) clientConfig() client.Config {
	cfg := d.decider.config(d.deciderTarget)
	// One budget with the decider, which derives it from its own
	// --max-request-bytes (set both alike; the chart does).
	cfg.MaxMessageBytes = msgbudget.Bytes(d.maxRequestBytes)
	// tls.mode selfRotate: the CA leader issues the client pair and the
	// decider's CA into the mounted Secret, possibly after this starts.
	cfg.WaitForFiles = d.selfRotate.enabled
	return cfg
}

// listen binds the front door's listener and, with --metrics-addr, the
// metrics listener.
func (d *frontdoorFlags) listen(logger *slog.Logger) (lis, opsLis net.Listener, err error) {
	if lis, err = net.Listen("tcp", d.addr); err != nil {
		return nil, nil, fmt.Errorf("frontdoor: %v", err)
	}
	if d.metricsAddr == "" {
		return lis, nil, nil
	}
	if opsLis, err = net.Listen("tcp", d.metricsAddr); err != nil {
		lis.Close()
		return nil, nil, fmt.Errorf("frontdoor: metrics listener: %v", err)
	}
	logger.Info("metrics listening", "addr", opsLis.Addr().String(), "pprof", d.pprof)
	return lis, opsLis, nil
}

// runFrontdoorServer serves the admission listener (and the ops listener
// when given) until ctx ends, then drains. A run-time failure exits 1.
func runFrontdoorServer(ctx context.Context, srv *httpserver.Server, lis, opsLis net.Listener, logger *slog.Logger) int {
	errc := make(chan error, 2)
	running := 1
	go func() { errc <- srv.Serve(ctx, lis) }()
	if opsLis != nil {
		running++
		go func() { errc <- srv.ServeOps(ctx, opsLis) }()
	}
	code := exitOK
	for ; running > 0; running-- {
		if err := <-errc; err != nil && ctx.Err() == nil {
			logger.Error("frontdoor stopped", "error", err.Error())
			code = exitRefused
			break
		}
	}
	return code
}

// refuseInstallationVariables prints one line per installation variable set
// in the environment, sorted, and reports whether there was any (spec 07
// §1.2: the front door has no installation settings).
func refuseInstallationVariables(stderr io.Writer) bool {
	var set []string
	for _, v := range installation.Variables() {
		if _, ok := lookupEnvVar(v); ok {
			set = append(set, v)
		}
	}
	sort.Strings(set)
	for _, v := range set {
		fmt.Fprintf(stderr, "frontdoor: %s is an installation setting; set it on the decider\n", v)
	}
	return len(set) > 0
}

// checkFailureFlags validates --on-decider-error and --on-decider-error-validate.
func checkFailureFlags(onError, onErrorValidate string) error {
	if onError != handler.OnErrorDeny && onError != handler.OnErrorAllow {
		return fmt.Errorf("--on-decider-error is %q: deny or allow", onError)
	}
	if onErrorValidate != "" && onErrorValidate != handler.OnErrorDeny && onErrorValidate != handler.OnErrorAllow {
		return fmt.Errorf("--on-decider-error-validate is %q: deny or allow", onErrorValidate)
	}
	return nil
}
