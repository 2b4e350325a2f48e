package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// classesFileHelp is the help of --classes-file (decider, serve, inject, explain).
const classesFileHelp = "read DynamicConfigClass / ClusterDynamicConfigClass objects (a YAML or JSON stream) from FILE instead of the API server; implies classes on"

// deciderFlags are the flags of `dynamic-config decider` (spec 07 §1.1).
type deciderFlags struct {
	global globalFlags
	// cfg is the decider's Config as far as the flags set it directly.
	cfg          deciderd.Config
	installation string
	plaintext    bool
	maxRequest   int64
	maxRecvBytes int64 // removed; refused when set
	follow       followFlags
	tracing      tracingFlags
}

func (d *deciderFlags) register(fs *flagSet) {
	d.global.register(fs, "json")
	fs.stringVar(&d.cfg.Addr, "addr", "DYNAMIC_CONFIG_DECIDER_ADDR", "0.0.0.0:9090", "gRPC listener")
	fs.stringVar(&d.cfg.MetricsAddr, "metrics-addr", "DYNAMIC_CONFIG_DECIDER_METRICS_ADDR", "0.0.0.0:9092", "plain HTTP listener for /metrics, /healthz, /readyz; empty = off")
	fs.stringVar(&d.installation, "installation", installation.DefaultsFileVariable, installation.DefaultDocumentPath, "the installation document")
	fs.stringVar(&d.cfg.Installation.Rollout, "rollout", deciderd.RolloutFileVariable, "", deciderd.RolloutFlagHelp)
	fs.stringVar(&d.cfg.TLS.CertFile, "tls-cert", "DYNAMIC_CONFIG_DECIDER_TLS_CERT", "", "serving certificate (re-read on change)")
	fs.stringVar(&d.cfg.TLS.KeyFile, "tls-key", "DYNAMIC_CONFIG_DECIDER_TLS_KEY", "", "serving key (re-read on change)")
	fs.stringVar(&d.cfg.TLS.ClientCA, "tls-client-ca", "DYNAMIC_CONFIG_DECIDER_TLS_CLIENT_CA", "", "when set: mTLS, client certificates are required and verified against this CA")
	fs.boolVar(&d.cfg.TLS.Wait, "tls-wait", "DYNAMIC_CONFIG_DECIDER_TLS_WAIT", false, "start before the serving pair and the client CA exist and take them when they appear (tls.mode selfRotate: the front door issues them); handshakes fail until then")
	fs.boolVar(&d.plaintext, "plaintext", "DYNAMIC_CONFIG_DECIDER_PLAINTEXT", false, "serve gRPC without TLS")
	fs.stringVar(&d.cfg.TokenFile, "auth-token-file", "DYNAMIC_CONFIG_DECIDER_TOKEN_FILE", "", "when set: every DeciderService call needs authorization: Bearer <token>")
	fs.stringVar(&d.cfg.Callers, "callers", "DYNAMIC_CONFIG_DECIDER_CALLERS_FILE", "", "when set: the callers file — every DeciderService call must present a listed credential and may name only its caller's clusters (re-read on change; excludes --auth-token-file)")
	fs.stringVar(&d.cfg.Cluster, "cluster-name", "DYNAMIC_CONFIG_DECIDER_CLUSTER_NAME", "", "the decider's own cluster: the cluster of a request that names none (required with --callers)")
	fs.boolVar(&d.cfg.Reflection, "reflection", "DYNAMIC_CONFIG_DECIDER_REFLECTION", true, "gRPC server reflection")
	fs.durationVar(&d.cfg.Installation.ReloadInterval, "reload-interval", "DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL", installationloader.DefaultReloadInterval, "installation document poll interval")
	fs.int64Var(&d.maxRequest, "max-request-bytes", "DYNAMIC_CONFIG_DECIDER_MAX_REQUEST_BYTES", msgbudget.DefaultMaxRequestBytes, "the front door's AdmissionReview body limit (set both alike); the gRPC message limits are twice it")
	fs.int64Var(&d.maxRecvBytes, "max-recv-bytes", "DYNAMIC_CONFIG_DECIDER_MAX_RECV_BYTES", 0, "removed: use --max-request-bytes")
	fs.durationVar(&d.cfg.ShutdownGrace, "shutdown-grace", "DYNAMIC_CONFIG_DECIDER_SHUTDOWN_GRACE", 30*time.Second, "graceful stop bound")
	fs.durationVar(&d.cfg.DrainDelay, "drain-delay", "DYNAMIC_CONFIG_DECIDER_DRAIN_DELAY", server.DefaultDrainDelay, "on SIGTERM: serve this long as NOT_SERVING (health, /readyz) before the graceful stop; 0 = none")
	fs.durationVar(&d.cfg.MaxConnectionAge, "max-connection-age", "DYNAMIC_CONFIG_DECIDER_MAX_CONNECTION_AGE", server.DefaultMaxConnectionAge, "close each client connection after this long (GOAWAY) so that clients re-resolve and find new replicas")
	fs.durationVar(&d.cfg.MaxConnectionAgeGrace, "max-connection-age-grace", "DYNAMIC_CONFIG_DECIDER_MAX_CONNECTION_AGE_GRACE", server.DefaultMaxConnectionAgeGrace, "what calls in flight get after that GOAWAY")
	fs.BoolVar(&d.cfg.Classes.Watch, "classes", false, "watch DynamicConfigClass and ClusterDynamicConfigClass objects through the API server (also on with $DYNAMIC_CONFIG_WEBHOOK_CLASSES=true)")
	fs.stringVar(&d.cfg.Classes.Kubeconfig, "kubeconfig", "", "", "kubeconfig for the classes watch (default: the in-cluster service account)")
	fs.stringVar(&d.cfg.Classes.File, "classes-file", "", "", classesFileHelp)
	fs.boolVar(&d.cfg.Pprof, "pprof", "DYNAMIC_CONFIG_DECIDER_PPROF", false, "serve net/http/pprof under /debug/pprof/ on the metrics listener")
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
		return usageError(stderr, "", err)
	}
	defer stopTracing(tr, logger)
	cfg := f.cfg
	if cfg.TLS, err = f.cfg.TLS.ForFlags(f.plaintext); err != nil {
		return usageError(stderr, "decider", err)
	}
	// The default path may be missing (the empty document; the watch picks
	// the file up when it appears); a path named by flag or variable must exist.
	cfg.Installation.Load = installationloader.Options{DocumentPath: f.installation, DocumentExplicit: fs.isSet("installation"), Environ: os.Environ()}
	cfg.Follow = f.follow.config(f.maxRequest)
	cfg.MessageBudget = msgbudget.Bytes(f.maxRequest)
	cfg.Tracing, cfg.Logger = tr, logger
	cfg.Version = currentVersion().Build()
	d, err := deciderd.Start(ctx, cfg)
	if err != nil {
		return usageError(stderr, "", err)
	}
	if err := d.Run(ctx); err != nil {
		return exitRefused
	}
	return exitOK
}

// valid checks the decider's flags, printing the first problem.
func (d *deciderFlags) valid(fs *flagSet, stderr io.Writer) bool {
	if !allPositive(stderr, "decider",
		durationFlag("reload-interval", d.cfg.Installation.ReloadInterval),
		durationFlag("shutdown-grace", d.cfg.ShutdownGrace),
		durationFlag("max-connection-age", d.cfg.MaxConnectionAge),
		durationFlag("max-connection-age-grace", d.cfg.MaxConnectionAgeGrace)) {
		return false
	}
	if d.cfg.DrainDelay < 0 {
		fmt.Fprintf(stderr, "decider: --drain-delay is %s: 0 or more\n", d.cfg.DrainDelay)
		return false
	}
	if d.cfg.Pprof && d.cfg.MetricsAddr == "" {
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
	if err := d.cfg.CheckCallers(); err != nil {
		fmt.Fprintln(stderr, "decider: "+err.Error())
		return false
	}
	if err := d.follow.check(fs, os.Environ()); err != nil {
		fmt.Fprintln(stderr, "decider: "+err.Error())
		return false
	}
	return true
}
