package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/httpserver"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// frontdoorFlags are the flags of `dynamic-config frontdoor` (spec 07 §1.2).
type frontdoorFlags struct {
	global globalFlags
	// cfg is the front door's Config as far as the flags set it directly.
	cfg           frontdoord.Config
	deciderTarget string
	decider       deciderClientFlags
	selfRotate    selfRotateFlags
	tracing       tracingFlags
	decisionCache decisionCacheFlags
}

func (d *frontdoorFlags) register(fs *flagSet) {
	d.global.register(fs, "json")
	fs.stringVar(&d.cfg.Addr, "addr", "DYNAMIC_CONFIG_WEBHOOK_ADDR", "0.0.0.0:8443", "admission listener (HTTPS)")
	fs.stringVar(&d.cfg.MetricsAddr, "metrics-addr", "DYNAMIC_CONFIG_WEBHOOK_METRICS_ADDR", "", "extra plain HTTP listener for /metrics, /healthz, /readyz; empty = off")
	fs.stringVar(&d.cfg.TLS.CertFile, "tls-cert", "DYNAMIC_CONFIG_WEBHOOK_TLS_CERT", "/tls/tls.crt", "serving certificate (re-read on change)")
	fs.stringVar(&d.cfg.TLS.KeyFile, "tls-key", "DYNAMIC_CONFIG_WEBHOOK_TLS_KEY", "/tls/tls.key", "serving key (re-read on change)")
	fs.stringVar(&d.cfg.TLS.ClientCA, "client-ca", "DYNAMIC_CONFIG_WEBHOOK_CLIENT_CA", "", "when set: /mutate and /validate require a client certificate verified against this CA (the API server's, from its AdmissionConfiguration kubeconfig)")
	fs.boolVar(&d.cfg.TLS.PlaintextWithoutPair, "plaintext", "DYNAMIC_CONFIG_WEBHOOK_PLAINTEXT", false, "serve plain HTTP when there is no TLS material (tests only)")
	fs.stringVar(&d.deciderTarget, "decider-target", "DYNAMIC_CONFIG_DECIDER_TARGET", "", "decider gRPC target, e.g. dns:///dynamic-config-decider.dynamic-config.svc:9090 (required)")
	d.decider.register(fs, "decider", "DYNAMIC_CONFIG_DECIDER_", "the decider", "the target's host")
	fs.durationVar(&d.cfg.Timeout, "decider-timeout", "DYNAMIC_CONFIG_DECIDER_TIMEOUT", handler.DefaultTimeout, "per-call deadline; keep it below the webhook timeoutSeconds")
	fs.stringVar(&d.cfg.Cluster, "cluster-name", "DYNAMIC_CONFIG_FRONTDOOR_CLUSTER_NAME", "", "the cluster this front door admits for, sent with every decision request (empty = the decider's own cluster)")
	fs.stringVar(&d.cfg.OnDeciderError, "on-decider-error", "DYNAMIC_CONFIG_ON_DECIDER_ERROR", handler.OnErrorDeny, "deny or allow on /mutate when the decider gives no usable answer")
	fs.stringVar(&d.cfg.OnDeciderErrorValidate, "on-decider-error-validate", "DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE", "", "deny or allow on /validate (default: the value of --on-decider-error)")
	fs.completeValues("on-decider-error", handler.OnErrorDeny, handler.OnErrorAllow)
	fs.completeValues("on-decider-error-validate", handler.OnErrorDeny, handler.OnErrorAllow)
	fs.int64Var(&d.cfg.MaxRequestBytes, "max-request-bytes", "DYNAMIC_CONFIG_FRONTDOOR_MAX_REQUEST_BYTES", handler.DefaultMaxRequestBytes, "AdmissionReview body limit; the gRPC message limits to the decider are twice it (set the decider's alike)")
	fs.durationVar(&d.cfg.TLS.ReloadInterval, "cert-reload-interval", "DYNAMIC_CONFIG_FRONTDOOR_CERT_RELOAD_INTERVAL", 10*time.Second, "serving pair poll interval")
	fs.durationVar(&d.cfg.ShutdownGrace, "shutdown-grace", "DYNAMIC_CONFIG_FRONTDOOR_SHUTDOWN_GRACE", httpserver.DefaultShutdownGrace, "drain bound on SIGTERM")
	fs.durationVar(&d.cfg.DrainDelay, "drain-delay", "DYNAMIC_CONFIG_FRONTDOOR_DRAIN_DELAY", httpserver.DefaultDrainDelay, "on SIGTERM: keep answering this long with /readyz 503 and Connection: close before the shutdown; 0 = none")
	fs.boolVar(&d.cfg.Pprof, "pprof", "DYNAMIC_CONFIG_FRONTDOOR_PPROF", false, "serve net/http/pprof under /debug/pprof/ on the metrics listener (needs --metrics-addr)")
	d.selfRotate.register(fs)
	d.tracing.register(fs)
	d.decisionCache.register(fs)
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
	if refuseInstallationVariables(stderr) || !f.valid(stderr) || !f.tracing.valid(stderr, "frontdoor") ||
		!f.decisionCache.valid(stderr, "frontdoor") {
		return exitUsage
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr, err := f.tracing.start(ctx, set, "dynamic-config-frontdoor", logger)
	if err != nil {
		return usageError(stderr, "", err)
	}
	defer stopTracing(tr, logger)
	cfg := f.cfg
	cfg.SelfRotate = f.selfRotate.config()
	// One budget with the decider, which derives it from its own
	// --max-request-bytes (set both alike; the chart does).
	cfg.Decider = f.decider.budgeted(f.deciderTarget, f.cfg.MaxRequestBytes)
	cfg.Tracing, cfg.Logger = tr, logger
	cfg.DecisionCache = f.decisionCache.cfg
	fd, err := frontdoord.Start(ctx, cfg)
	var pairErr *frontdoord.PairError
	if errors.As(err, &pairErr) && errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("no certificate at %s and %s, and plaintext is off", f.cfg.TLS.CertFile, f.cfg.TLS.KeyFile)
	}
	if err != nil {
		return usageError(stderr, "frontdoor", err)
	}
	logger.Info("frontdoor listening", "addr", fd.Addr().String(), "tls", fd.TLS(), "client_ca", f.cfg.TLS.ClientCA != "",
		"decider_target", f.deciderTarget, "cluster", f.cfg.Cluster, "on_decider_error", f.cfg.OnDeciderError,
		"decision_cache", f.decisionCache.on, "decision_cache_stale_if_error", f.decisionCache.cfg.StaleIfError.String())
	if fd.Err() != nil {
		return exitRefused
	}
	return exitOK
}

// valid checks the front door's flags, printing the first problem.
func (d *frontdoorFlags) valid(stderr io.Writer) bool {
	if d.deciderTarget == "" {
		fmt.Fprintln(stderr, "frontdoor: --decider-target is required")
		return false
	}
	if err := handler.CheckOnDeciderError(d.cfg.OnDeciderError, d.cfg.OnDeciderErrorValidate); err != nil {
		fmt.Fprintln(stderr, "frontdoor: "+err.Error())
		return false
	}
	if d.cfg.Pprof && d.cfg.MetricsAddr == "" {
		fmt.Fprintln(stderr, errPprofWithoutMetrics("frontdoor").Error())
		return false
	}
	if problem := callers.CheckClusterName(d.cfg.Cluster); problem != "" {
		fmt.Fprintln(stderr, "frontdoor: --cluster-name is "+problem)
		return false
	}
	if !allPositive(stderr, "frontdoor",
		durationFlag("decider-timeout", d.cfg.Timeout),
		durationFlag("cert-reload-interval", d.cfg.TLS.ReloadInterval),
		durationFlag("shutdown-grace", d.cfg.ShutdownGrace)) {
		return false
	}
	if d.cfg.DrainDelay < 0 {
		fmt.Fprintf(stderr, "frontdoor: --drain-delay is %s: 0 or more\n", d.cfg.DrainDelay)
		return false
	}
	if err := msgbudget.Check(d.cfg.MaxRequestBytes); err != nil {
		fmt.Fprintln(stderr, "frontdoor: "+err.Error())
		return false
	}
	return true
}

// refuseInstallationVariables prints one line per installation variable set
// in the environment, sorted, and reports whether there was any (spec 07
// §1.2: the front door has no installation settings).
func refuseInstallationVariables(stderr io.Writer) bool {
	set := installation.SetVariables(lookupEnvVar)
	for _, v := range set {
		fmt.Fprintf(stderr, "frontdoor: %s is an installation setting; set it on the decider\n", v)
	}
	return len(set) > 0
}
