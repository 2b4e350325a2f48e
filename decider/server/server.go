// Package server is the decider's gRPC transport (spec 06 §7, 07 §1.1): the
// interceptor chain (metrics, logging, auth, recovery), TLS, health,
// reflection, limits and graceful stop, around a DeciderServiceServer. It
// decides nothing itself.
package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/logsample"
	"github.com/dynamic-config-admission/dynamic-config/internal/msgbudget"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// flowWindow is the fixed HTTP/2 flow-control window of each stream and
// connection: far above any decision or request the decider exchanges.
const flowWindow = 1 << 20

// streamWorkers is how many goroutines serve the streams. A stream that
// finds no idle worker runs on a fresh goroutine whose stack grows while it
// decides (runtime.newstack/copystack were ~7% of the decider at c=8 with
// one worker per CPU). Too many workers undo it: the GC halves the stack of
// every idle one, and workers take streams in turn, so each regrows its stack
// after every GC (64 workers: copystack ~8% again at c=8; 16: under 1%).
const streamWorkers = 16

// KeepaliveMinTime is the shortest client ping interval the server
// tolerates; the front door pings less often (client.KeepaliveTime), so it
// never earns a too_many_pings GOAWAY.
const KeepaliveMinTime = 10 * time.Second

// Connection ageing defaults (07 §1.1, issue 12): every connection is closed
// with a GOAWAY after DefaultMaxConnectionAge (± 10 % jitter), calls in
// flight get DefaultMaxConnectionAgeGrace, and the client re-resolves its
// target — so a decider added by scaling is found within age + grace.
const (
	DefaultMaxConnectionAge      = 2 * time.Minute
	DefaultMaxConnectionAgeGrace = 10 * time.Second
	DefaultDrainDelay            = 5 * time.Second
)

// Config is the transport configuration; decider/daemon builds it from its Config.
type Config struct {
	// TLS is the server TLS configuration (mTLS when it requires client
	// certificates); nil serves plaintext.
	TLS *tls.Config
	// TokenFile, when set, holds the bearer token every DeciderService call
	// must present; the file is re-read when it changes.
	TokenFile string
	// Callers, when set, authenticates every DeciderService call against the
	// callers file (client-certificate identity or bearer-token digest) and
	// hands the caller to the service, which checks the cluster it names. It
	// excludes TokenFile.
	Callers *callers.File
	// Reflection registers gRPC server reflection.
	Reflection bool
	// MaxMessageBytes bounds every message received and sent: the budget
	// of --max-request-bytes (msgbudget.Bytes; 0 = the default budget).
	MaxMessageBytes int
	// Logger receives the call lines and recovered panics (nil = discard).
	Logger *slog.Logger
	// Metrics supplies the gRPC server metrics (nil = none).
	Metrics *metrics.Decider
	// MaxConnectionAge closes every connection after about this long so
	// that clients re-resolve (0 = DefaultMaxConnectionAge).
	MaxConnectionAge time.Duration
	// MaxConnectionAgeGrace is what calls in flight get after that GOAWAY
	// (0 = DefaultMaxConnectionAgeGrace).
	MaxConnectionAgeGrace time.Duration
	// ConnectionTimeout bounds a new connection's handshake (0 =
	// DefaultConnectionTimeout).
	ConnectionTimeout time.Duration
	// MaxConnectionIdle closes a connection without calls after this long
	// (0 = DefaultMaxConnectionIdle).
	MaxConnectionIdle time.Duration
	// DrainDelay is how long Shutdown keeps serving after turning
	// NOT_SERVING, so that health watchers and endpoint lists drop this
	// replica before it stops accepting calls (0 = none).
	DrainDelay time.Duration
	// ClassesSynced, when set, must also hold for SERVING and /readyz:
	// classes are on and the watch has synced once (spec 08 §2).
	ClassesSynced func() bool
	// Sync, when set, is the leader's InstallationSyncService (spec 09 §2),
	// served on the same port behind the same TLS, token or callers file.
	Sync deciderv1.InstallationSyncServiceServer
	// Serving, when set, must also hold for SERVING and /readyz: on a
	// follower, not past --max-stale (spec 09 §3).
	Serving func() bool
	// Tracing, when on, continues the caller's trace in a server span per
	// call (otelgrpc; health checks, reflection and follower streams left
	// out). nil = off: no stats handler at all.
	Tracing *tracing.Tracing
}

// Server is the decider's gRPC server.
type Server struct {
	grpc     *grpc.Server
	health   *health.Server
	store    *installationloader.Store
	draining atomic.Bool
	delay    time.Duration
	// classesSynced is Config.ClassesSynced (nil: classes are not a condition).
	classesSynced func() bool
	// serving is Config.Serving (nil: not a condition).
	serving func() bool
	// sync is Config.Sync (nil: none).
	sync deciderv1.InstallationSyncServiceServer
	// svc is the DeciderService served.
	svc deciderv1.DeciderServiceServer
}

// New builds the server around svc. The health service reports SERVING
// only while store holds an installation.
func New(cfg Config, store *installationloader.Store, svc deciderv1.DeciderServiceServer) (*Server, error) {
	if store == nil || svc == nil {
		return nil, errors.New("decider server: a store and a service are required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Callers != nil && cfg.TokenFile != "" {
		return nil, errors.New("decider server: --callers and --auth-token-file exclude each other; list the token's SHA-256 in the callers file")
	}
	var token *tokenFile
	if cfg.TokenFile != "" {
		t, err := newTokenFile(cfg.TokenFile)
		if err != nil {
			return nil, err
		}
		token = t
	}
	budget := cfg.MaxMessageBytes
	if budget <= 0 {
		budget = msgbudget.Bytes(0)
	}

	age, ageGrace := cfg.MaxConnectionAge, cfg.MaxConnectionAgeGrace
	if age <= 0 {
		age = DefaultMaxConnectionAge
	}
	if ageGrace <= 0 {
		ageGrace = DefaultMaxConnectionAgeGrace
	}

	authFn := auth.AuthFunc(nil)
	var tapCheck func(metadata.MD) error
	switch {
	case cfg.Callers != nil:
		authFn = callersAuth(cfg.Callers)
		tapCheck = callersCheck(cfg.Callers) // the certificate is checked by the interceptor
	case token != nil:
		authFn = bearerAuth(token)
		tapCheck = bearerCheck(token)
	}
	// One sampler for every refused call's line, the tap's and the chain's.
	refused := logsample.New(refusedLogInterval, nil)
	unary, stream := chain(cfg.Metrics, logger, refused, authFn)
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
		grpc.MaxRecvMsgSize(budget),
		grpc.MaxSendMsgSize(budget),
		// A fixed set of goroutines serves the streams: a Decide mostly runs
		// on a stack that has already grown (see streamWorkers).
		grpc.NumStreamWorkers(streamWorkers),
		// Fixed flow-control windows turn off the BDP estimator, whose
		// pings otherwise cross the connection with almost every call.
		grpc.InitialWindowSize(flowWindow),
		grpc.InitialConnWindowSize(flowWindow),
	}
	opts = append(opts, transportBounds(cfg.ConnectionTimeout, cfg.MaxConnectionIdle, age, ageGrace)...)
	if tapCheck != nil {
		opts = append(opts, grpc.InTapHandle(authTap(tapCheck, logger, refused)))
	}
	if cfg.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg.TLS)))
	}
	if h := cfg.Tracing.ServerHandler(); h != nil {
		opts = append(opts, grpc.StatsHandler(h))
	}

	s := &Server{
		grpc:          grpc.NewServer(opts...),
		health:        health.NewServer(),
		store:         store,
		delay:         cfg.DrainDelay,
		classesSynced: cfg.ClassesSynced,
		serving:       cfg.Serving,
		sync:          cfg.Sync,
		svc:           svc,
	}
	s.grpc.RegisterService(capped(&deciderv1.DeciderService_ServiceDesc), svc)
	if cfg.Sync != nil {
		deciderv1.RegisterInstallationSyncServiceServer(s.grpc, cfg.Sync)
	}
	healthpb.RegisterHealthServer(s.grpc, s.health)
	if cfg.Reflection {
		reflection.Register(s.grpc)
	}
	// No InitializeMetrics: it would pre-create every method (health and
	// reflection included) times all seventeen codes; a series appears with
	// the first call that has it.
	s.RefreshHealth()
	return s, nil
}

// Serve accepts connections on lis until Shutdown; it returns nil after a
// graceful stop.
func (s *Server) Serve(lis net.Listener) error {
	s.RefreshHealth()
	if err := s.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("decider server: %w", err)
	}
	return nil
}

// DrainDelay is the configured drain delay (for the shutdown log line).
func (s *Server) DrainDelay() time.Duration { return s.delay }

// Ready reports whether an installation is held, the classes (when on)
// have synced, and the server is not draining (the /readyz answer).
func (s *Server) Ready() bool {
	return s.store.Current() != nil && !s.draining.Load() && (s.classesSynced == nil || s.classesSynced()) &&
		(s.serving == nil || s.serving())
}

// Shutdown turns health to NOT_SERVING, keeps serving for the drain delay
// (clients watching health drop this replica from their pick list, the
// endpoint list drops it via /readyz), then stops accepting calls and waits
// up to grace for the calls in flight, then stops hard.
func (s *Server) Shutdown(grace time.Duration) {
	if s.draining.Swap(true) {
		s.stop(grace)
		return
	}
	s.health.Shutdown()
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	s.stop(grace)
}

func (s *Server) stop(grace time.Duration) {
	// Long-lived follower streams would hold the graceful stop for the
	// whole grace: the leader ends them first (followers reconnect).
	if d, ok := s.sync.(interface{ Drain() }); ok {
		d.Drain()
	}
	// So would the front doors' revision watches (WatchRevision): the
	// service ends them too (front doors reconnect to another replica).
	if d, ok := s.svc.(interface{ Drain() }); ok {
		d.Drain()
	}
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		s.grpc.Stop()
		<-done
	}
}
