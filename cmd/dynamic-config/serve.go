package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	deciderd "github.com/dynamic-config-admission/dynamic-config/decider/daemon"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// defaultInstallation is serve's embedded installation document (spec 02 §1).
//
//go:embed default-installation.yaml
var defaultInstallation []byte

// serveShutdownGrace bounds each component's drain in serve.
const serveShutdownGrace = 10 * time.Second

// serveFlags are the flags of `dynamic-config serve` (spec 07 §1.3). The
// listener and TLS flags have no environment variable.
type serveFlags struct {
	global                 globalFlags
	addr                   string
	deciderAddr            string
	metricsAddr            string
	installation, rollout  string
	reloadInterval         time.Duration
	tlsCert, tlsKey        string
	tlsGenerate            string
	clientCA               string
	addrFile               string
	maxRequestBytes        int64
	onDeciderError         string
	onDeciderErrorValidate string
	classesFile            string
	pprof                  bool
	tracing                tracingFlags
	decisionCache          decisionCacheFlags
}

func (s *serveFlags) register(fs *flagSet) {
	s.global.register(fs, "text")
	fs.stringVar(&s.addr, "addr", "", "127.0.0.1:8080", "front door listener (plain HTTP unless --tls-cert/--tls-key or --tls-generate)")
	fs.stringVar(&s.deciderAddr, "decider-addr", "", "127.0.0.1:9090", "decider gRPC listener (plaintext, reflection on)")
	fs.stringVar(&s.metricsAddr, "metrics-addr", "", "", "optional metrics listener for both components")
	fs.stringVar(&s.installation, "installation", installation.DefaultsFileVariable, "", "installation document (default: the embedded one; an empty file = built-ins)")
	fs.stringVar(&s.rollout, "rollout", deciderd.RolloutFileVariable, "", deciderd.RolloutFlagHelp)
	fs.durationVar(&s.reloadInterval, "reload-interval", "DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL", installationloader.DefaultReloadInterval, "installation document poll interval")
	fs.stringVar(&s.tlsCert, "tls-cert", "", "", "serve the front door over TLS with this certificate")
	fs.stringVar(&s.tlsKey, "tls-key", "", "", "serve the front door over TLS with this key")
	fs.stringVar(&s.tlsGenerate, "tls-generate", "", "", "generate a throw-away CA and a serving certificate for 127.0.0.1, ::1 and localhost into DIR (ca.crt, tls.crt, tls.key) and serve TLS")
	fs.stringVar(&s.clientCA, "client-ca", "", "", "as for frontdoor: /mutate and /validate require a client certificate verified against this CA (needs TLS)")
	fs.stringVar(&s.addrFile, "addr-file", "", "", "after binding, write frontdoor=<scheme>://<host:port>, decider=<host:port> (and metrics=<host:port> with --metrics-addr) lines to FILE")
	fs.int64Var(&s.maxRequestBytes, "max-request-bytes", "", msgbudget.DefaultMaxRequestBytes, "AdmissionReview body limit; both components hold the gRPC messages between them to twice it")
	fs.stringVar(&s.onDeciderError, "on-decider-error", "DYNAMIC_CONFIG_ON_DECIDER_ERROR", handler.OnErrorDeny, "deny or allow on /mutate when the decider gives no usable answer")
	fs.stringVar(&s.classesFile, "classes-file", "", "", classesFileHelp)
	fs.stringVar(&s.onDeciderErrorValidate, "on-decider-error-validate", "DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE", "", "deny or allow on /validate (default: the value of --on-decider-error)")
	fs.completeValues("on-decider-error", handler.OnErrorDeny, handler.OnErrorAllow)
	fs.completeValues("on-decider-error-validate", handler.OnErrorDeny, handler.OnErrorAllow)
	fs.boolVar(&s.pprof, "pprof", "", false, "serve net/http/pprof under /debug/pprof/ on the metrics listener (needs --metrics-addr)")
	s.decisionCache.register(fs)
	s.tracing.register(fs)
}

// runServe is `dynamic-config serve`: decider and front door in one process
// on loopback, wired over real gRPC.
func runServe(args []string, _ io.Reader, _, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return serveMain(ctx, args, stderr)
}

// serveMain runs serve until ctx ends.
func serveMain(ctx context.Context, args []string, stderr io.Writer) int {
	set := newFlagSet("serve", stderr)
	var f serveFlags
	f.register(set)
	logger, code, done := parseArgs(set, &f.global, args, stderr)
	if done {
		return code
	}
	if !f.valid(stderr) || !f.tracing.valid(stderr, "serve") || !f.decisionCache.valid(stderr, "serve") {
		return exitUsage
	}
	budget := msgbudget.Bytes(f.maxRequestBytes)
	certFile, keyFile, err := frontdoord.ServeTLSFiles(f.tlsGenerate, f.tlsCert, f.tlsKey)
	if err != nil {
		return usageError(stderr, "serve", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts, cleanup, err := deciderd.EmbeddedInstallation(f.installation, defaultInstallation, os.Environ())
	if err != nil {
		return usageError(stderr, "serve", err)
	}
	defer cleanup()
	tokenFile, _ := lookupEnvVar("DYNAMIC_CONFIG_DECIDER_TOKEN_FILE")
	tr, err := f.tracing.start(ctx, set, "dynamic-config-serve", logger)
	if err != nil {
		return usageError(stderr, "", err)
	}
	defer stopTracing(tr, logger)

	reg := prometheus.NewRegistry()
	d, err := deciderd.Start(ctx, deciderd.Config{
		Installation:  deciderd.Installation{Load: opts, ReloadInterval: f.reloadInterval, Rollout: f.rollout},
		Addr:          f.deciderAddr,
		TokenFile:     tokenFile,
		Reflection:    true,
		MessageBudget: budget,
		ShutdownGrace: serveShutdownGrace,
		Classes:       deciderd.Classes{File: f.classesFile},
		Version:       currentVersion().Build(),
		Tracing:       tr,
		Registry:      reg,
		Logger:        logger,
	})
	if err != nil {
		return usageError(stderr, "", err)
	}
	defer d.Shutdown(serveShutdownGrace)

	fd, err := frontdoord.Start(ctx, frontdoord.Config{
		Addr:                   f.addr,
		TLS:                    frontdoord.TLS{CertFile: certFile, KeyFile: keyFile, ClientCA: f.clientCA},
		Decider:                client.Config{Target: d.Addr().String(), Plaintext: true, TokenFile: tokenFile, MaxMessageBytes: budget},
		OnDeciderError:         f.onDeciderError,
		OnDeciderErrorValidate: f.onDeciderErrorValidate,
		MaxRequestBytes:        f.maxRequestBytes,
		ShutdownGrace:          serveShutdownGrace,
		DecisionCache:          f.decisionCache.cfg,
		Tracing:                tr,
		Registry:               reg,
		Logger:                 logger,
	})
	if errors.Is(err, frontdoord.ErrClientCAWithoutTLS) {
		err = errors.New("--client-ca needs TLS (--tls-cert/--tls-key or --tls-generate)")
	}
	if err != nil {
		return usageError(stderr, "serve", err)
	}
	metricsAddr, metricsErr := "", (<-chan error)(nil)
	if f.metricsAddr != "" {
		// one metrics listener for both components: ready while both are
		addr, errc, err := d.ServeMetrics(ctx, f.metricsAddr, f.pprof, fd.Ready)
		if err != nil {
			return usageError(stderr, "serve", err)
		}
		metricsAddr, metricsErr = addr.String(), errc
	}
	if err := f.announce(logger, fd, d, metricsAddr); err != nil {
		return usageError(stderr, "", err)
	}
	return waitServing(ctx, logger, fd, d, metricsErr)
}

// valid checks serve's flags, printing the first problem.
func (s *serveFlags) valid(stderr io.Writer) bool {
	if err := frontdoord.LoopbackOnly(s.addr, s.deciderAddr, s.metricsAddr); err != nil {
		fmt.Fprintln(stderr, err.Error())
		return false
	}
	if err := handler.CheckOnDeciderError(s.onDeciderError, s.onDeciderErrorValidate); err != nil {
		fmt.Fprintln(stderr, "serve: "+err.Error())
		return false
	}
	if s.pprof && s.metricsAddr == "" {
		fmt.Fprintln(stderr, errPprofWithoutMetrics("serve").Error())
		return false
	}
	if !allPositive(stderr, "serve", durationFlag("reload-interval", s.reloadInterval)) {
		return false
	}
	if err := msgbudget.Check(s.maxRequestBytes); err != nil {
		fmt.Fprintln(stderr, "serve: "+err.Error())
		return false
	}
	return true
}
