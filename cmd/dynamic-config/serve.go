package main

import (
	"context"
	"crypto/x509"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/installation/loader"
	"github.com/dynamic-config-admission/dynamic-config/decider/server"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/certs"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/handler"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/httpserver"
	fmetrics "github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
)

// defaultInstallation is serve's embedded installation document (spec 02 §1).
//
//go:embed default-installation.yaml
var defaultInstallation []byte

// serveShutdownGrace bounds each component's drain in serve.
const serveShutdownGrace = 10 * time.Second

// errNotLoopback is serve's refusal of a non-loopback listen address.
var errNotLoopback = errors.New("serve binds loopback addresses only; run decider and frontdoor separately for anything else")

// serveFlags are the flags of `dynamic-config serve` (spec 07 §1.3). The
// listener and TLS flags have no environment variable.
type serveFlags struct {
	global                 globalFlags
	addr                   string
	deciderAddr            string
	metricsAddr            string
	installation           string
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
}

func (s *serveFlags) register(fs *flagSet) {
	s.global.register(fs, "text")
	fs.stringVar(&s.addr, "addr", "", "127.0.0.1:8080", "front door listener (plain HTTP unless --tls-cert/--tls-key or --tls-generate)")
	fs.stringVar(&s.deciderAddr, "decider-addr", "", "127.0.0.1:9090", "decider gRPC listener (plaintext, reflection on)")
	fs.stringVar(&s.metricsAddr, "metrics-addr", "", "", "optional metrics listener for both components")
	fs.stringVar(&s.installation, "installation", installation.DefaultsFileVariable, "", "installation document (default: the embedded one; an empty file = built-ins)")
	fs.durationVar(&s.reloadInterval, "reload-interval", "DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL", loader.DefaultReloadInterval, "installation document poll interval")
	fs.stringVar(&s.tlsCert, "tls-cert", "", "", "serve the front door over TLS with this certificate")
	fs.stringVar(&s.tlsKey, "tls-key", "", "", "serve the front door over TLS with this key")
	fs.stringVar(&s.tlsGenerate, "tls-generate", "", "", "generate a throw-away CA and a serving certificate for 127.0.0.1, ::1 and localhost into DIR (ca.crt, tls.crt, tls.key) and serve TLS")
	fs.stringVar(&s.clientCA, "client-ca", "", "", "as for frontdoor: /mutate and /validate require a client certificate verified against this CA (needs TLS)")
	fs.stringVar(&s.addrFile, "addr-file", "", "", "after binding, write frontdoor=<scheme>://<host:port>, decider=<host:port> (and metrics=<host:port> with --metrics-addr) lines to FILE")
	fs.int64Var(&s.maxRequestBytes, "max-request-bytes", "", msgbudget.DefaultMaxRequestBytes, "AdmissionReview body limit; both components hold the gRPC messages between them to twice it")
	fs.stringVar(&s.onDeciderError, "on-decider-error", "DYNAMIC_CONFIG_ON_DECIDER_ERROR", handler.OnErrorDeny, "deny or allow on /mutate when the decider gives no usable answer")
	fs.stringVar(&s.classesFile, "classes-file", "", "", classesFileHelp)
	fs.stringVar(&s.onDeciderErrorValidate, "on-decider-error-validate", "DYNAMIC_CONFIG_ON_DECIDER_ERROR_VALIDATE", "", "deny or allow on /validate (default: the value of --on-decider-error)")
	fs.boolVar(&s.pprof, "pprof", "", false, "serve net/http/pprof under /debug/pprof/ on the metrics listener (needs --metrics-addr)")
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
	if !f.valid(stderr) {
		return exitUsage
	}
	budget := msgbudget.Bytes(f.maxRequestBytes)
	certFile, keyFile, err := serveTLSFiles(f)
	if err != nil {
		fmt.Fprintln(stderr, "serve: "+err.Error())
		return exitUsage
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts, cleanup, err := f.installationOptions()
	if err != nil {
		fmt.Fprintln(stderr, "serve: "+err.Error())
		return exitUsage
	}
	defer cleanup()
	tokenFile, _ := lookupEnvVar("DYNAMIC_CONFIG_DECIDER_TOKEN_FILE")

	reg := prometheus.NewRegistry()
	d, err := startDecider(ctx, deciderSetup{
		logger:         logger,
		registry:       reg,
		installation:   opts,
		reloadInterval: f.reloadInterval,
		addr:           f.deciderAddr,
		classes:        classesSetup{file: f.classesFile},
		server:         server.Config{TokenFile: tokenFile, Reflection: true, MaxMessageBytes: budget},
	})
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	defer d.shutdown(serveShutdownGrace)

	fd, err := f.startFrontdoor(ctx, d, reg, logger, certFile, keyFile, tokenFile, budget)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	defer fd.client.Close()
	metricsAddr, metricsErr, err := f.serveMetrics(ctx, d, fd.pair, reg, logger)
	if err != nil {
		fd.lis.Close()
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	if err := f.announce(logger, fd, d, metricsAddr); err != nil {
		fd.lis.Close()
		fmt.Fprintln(stderr, err.Error())
		return exitUsage
	}
	return waitServing(ctx, logger, fd, d, metricsErr)
}

// valid checks serve's flags, printing the first problem.
func (s *serveFlags) valid(stderr io.Writer) bool {
	for _, a := range []string{s.addr, s.deciderAddr, s.metricsAddr} {
		if a != "" && !isLoopbackAddr(a) {
			fmt.Fprintln(stderr, errNotLoopback.Error())
			return false
		}
	}
	if err := checkFailureFlags(s.onDeciderError, s.onDeciderErrorValidate); err != nil {
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

// installationOptions is where serve's installation comes from: the named
// document, else the embedded one written to a temporary file (cleanup
// removes it).
func (s *serveFlags) installationOptions() (loader.Options, func(), error) {
	opts := loader.Options{DocumentPath: s.installation, DocumentExplicit: true, Environ: os.Environ()}
	if s.installation != "" {
		return opts, func() {}, nil
	}
	path, cleanup, err := writeEmbeddedInstallation()
	if err != nil {
		return opts, nil, err
	}
	opts.DocumentPath = path
	return opts, cleanup, nil
}

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
	certFile, keyFile, tokenFile string, budget int) (*servingFrontdoor, error) {
	m := fmetrics.NewFrontdoor(reg)
	fd := &servingFrontdoor{}
	if certFile != "" {
		fd.pair = certs.New(certFile, keyFile, logger, m)
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
	dc, err := client.New(client.Config{Target: d.addr.String(), Plaintext: true, TokenFile: tokenFile, MaxMessageBytes: budget})
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
		}),
		Certs:         fd.pair,
		ClientCAs:     clientCAs,
		Gatherer:      reg,
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
	logger.Info("serving", append(serving, "revision", d.store.Current().Revision)...)
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

// serveTLSFiles resolves the front door's TLS files: --tls-cert/--tls-key,
// or the pair --tls-generate writes; "" = plain HTTP.
func serveTLSFiles(f serveFlags) (certFile, keyFile string, err error) {
	hasPair := f.tlsCert != "" || f.tlsKey != ""
	switch {
	case f.tlsGenerate != "" && hasPair:
		return "", "", errors.New("--tls-generate and --tls-cert/--tls-key exclude each other")
	case f.tlsGenerate != "":
		gen, err := generateTLS(f.tlsGenerate)
		if err != nil {
			return "", "", err
		}
		return gen.Cert, gen.Key, nil
	case hasPair && (f.tlsCert == "" || f.tlsKey == ""):
		return "", "", errors.New("--tls-cert and --tls-key go together")
	}
	return f.tlsCert, f.tlsKey, nil
}

// writeEmbeddedInstallation writes the embedded document to a private
// temporary file for the decider to load and returns its path.
func writeEmbeddedInstallation() (string, func(), error) {
	dir, err := os.MkdirTemp("", "dynamic-config-serve-")
	if err != nil {
		return "", nil, fmt.Errorf("embedded installation: %w", err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "default-installation.yaml")
	if err := os.WriteFile(path, defaultInstallation, 0o600); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("embedded installation: %w", err)
	}
	return path, cleanup, nil
}

// isLoopbackAddr reports whether a listen address is loopback-only:
// 127.0.0.0/8, ::1 or localhost, with a port.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeFileAtomic writes data to path through a rename, so a reader never
// sees a partial file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".addr-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
