package daemon

import (
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/dynamic-config-admission/dynamic-config/decider/callers"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/classes"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// Config is everything a decider is started with. The zero value of each
// field is the decider's default; the comments name the flag of
// `dynamic-config decider` each field stands for.
type Config struct {
	// Installation is where a leader's installation comes from: a document
	// read and then watched, or one given as it is. A follower (Follow set)
	// reads none.
	Installation Installation
	// Follow, when set, makes this decider a follower (spec 09): it mirrors
	// its leader's installation instead of reading one.
	Follow *Follow

	// Addr is the gRPC listener's TCP address (--addr), used when Listener
	// is nil; port 0 picks a free port (Decider.Addr says which).
	Addr string
	// Listener, when set, is served instead of listening on Addr: one the
	// caller bound, or an in-memory listener (doors/engine: bufconn).
	Listener net.Listener
	// TLS is the serving pair and the client CA; the zero value serves
	// plaintext (--plaintext).
	TLS TLS
	// TokenFile holds the bearer token every DeciderService call must
	// present (--auth-token-file; "" = none); re-read when it changes.
	TokenFile string
	// Callers is the callers file (--callers; "" = none): who may call and
	// for which clusters (docs/multi-cluster.md). It excludes TokenFile and
	// needs Cluster.
	Callers string
	// Cluster is the decider's own cluster (--cluster-name): the cluster of
	// a request that names none.
	Cluster string
	// Reflection registers gRPC server reflection (--reflection).
	Reflection bool
	// MessageBudget bounds every gRPC message received and sent, and every
	// Decide answer (msgbudget.Bytes of --max-request-bytes; 0 = the
	// budget of the default --max-request-bytes).
	MessageBudget int
	// MaxConnectionAge, MaxConnectionAgeGrace and DrainDelay are the
	// transport's connection ageing and drain (--max-connection-age,
	// --max-connection-age-grace, --drain-delay; server.Config).
	MaxConnectionAge, MaxConnectionAgeGrace, DrainDelay time.Duration
	// ShutdownGrace bounds the graceful stop when Run's context ends
	// (--shutdown-grace; 0 = DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// Classes is where the class objects come from (spec 08 §2); the zero
	// value: none, unless the installation turns the watch on.
	Classes Classes

	// MetricsAddr is the plain-HTTP listener of /metrics, /healthz and
	// /readyz (--metrics-addr; "" = none). It outlives the gRPC drain, so
	// that /readyz answers 503 while the decider drains.
	MetricsAddr string
	// Pprof serves net/http/pprof on the metrics listener (--pprof).
	Pprof bool

	// Version is the binary's version, announced to the front doors'
	// decision caches as the decider's build (WatchRevision.decider_build,
	// issue 43: another build may answer differently); "" = what the Go
	// build information records.
	Version string

	// Tracing continues the callers' traces (nil = off). The caller owns
	// it: serve shares one between its two daemons.
	Tracing *tracing.Tracing
	// Registry receives every metric of the decider (nil: a registry of
	// its own, which the metrics listener serves).
	Registry *prometheus.Registry
	// Logger receives the decider's log lines (nil = discard).
	Logger *slog.Logger
}

// DefaultShutdownGrace bounds the graceful stop when Config.ShutdownGrace is 0.
const DefaultShutdownGrace = 30 * time.Second

// Installation is where a leader's installation comes from.
type Installation struct {
	// Load reads and validates the document and the environment
	// (installationloader.Load); the decider then watches the document and
	// puts every valid edit in force. An invalid installation stops Start
	// with an *installation.Problems naming every problem.
	Load installationloader.Options
	// ReloadInterval is the document's poll interval (--reload-interval;
	// 0 = installationloader.DefaultReloadInterval).
	ReloadInterval time.Duration
	// Given, when set, is the installation in force as it is (Load is not
	// used): loaded already (the offline doors' --installation or --values),
	// never re-read, and never turning the classes watch on.
	Given *installation.Installation
	// Rollout is the rollout document (--rollout; "" = none; spec 10 §2): a
	// candidate installation, validated over Load's environment, decided
	// beside this one in shadow or a canary; read settled at start and
	// watched like the document. Not with Given, nor on a follower (its
	// leader's snapshots carry the leader's rollout).
	Rollout string
}

// TLS is the gRPC listener's TLS (the zero value: plaintext).
type TLS struct {
	// CertFile and KeyFile are the serving pair (--tls-cert, --tls-key),
	// re-read every CertReloadInterval.
	CertFile, KeyFile string
	// ClientCA, when set, turns on mTLS: client certificates are required
	// and verified against this CA bundle (--tls-client-ca), re-read at
	// every handshake.
	ClientCA string
	// Wait starts before the pair and the client CA exist and takes them
	// when they appear (--tls-wait; tls.mode selfRotate); handshakes fail
	// until then.
	Wait bool
}

// ForFlags is the listener's TLS as the decider's flags name it (zero:
// --plaintext), or the flags' conflict.
func (t TLS) ForFlags(plaintext bool) (TLS, error) {
	switch {
	case plaintext && t.enabled():
		return t, errors.New("--plaintext and --tls-cert/--tls-key exclude each other")
	case plaintext && t.ClientCA != "":
		return t, errors.New("--tls-client-ca needs --tls-cert/--tls-key; it cannot be used with --plaintext")
	case plaintext:
		return TLS{}, nil
	case t.CertFile == "" || t.KeyFile == "":
		if t.enabled() {
			return t, errors.New("--tls-cert and --tls-key go together")
		}
		return t, errors.New("no TLS pair at --tls-cert/--tls-key and --plaintext not set")
	}
	return t, nil
}

// CheckCallers checks Cluster (--cluster-name) and its pairing with
// Callers (--callers) and TokenFile (--auth-token-file).
func (c Config) CheckCallers() error {
	if problem := callers.CheckClusterName(c.Cluster); problem != "" {
		return errors.New("--cluster-name is " + problem)
	}
	if c.Callers == "" {
		return nil
	}
	if c.TokenFile != "" {
		return errors.New("--callers and --auth-token-file exclude each other; list the token's SHA-256 in the callers file as a caller's tokenSHA256")
	}
	if c.Cluster == "" {
		return errors.New("--callers needs --cluster-name: the decider's own cluster, which a request naming no cluster is decided for and checked against")
	}
	return nil
}

// CertReloadInterval is how often the decider re-reads its serving pair.
const CertReloadInterval = 10 * time.Second

// enabled reports whether the listener serves TLS.
func (t TLS) enabled() bool { return t.CertFile != "" || t.KeyFile != "" }

// Classes is where the decider learns the class objects (spec 08 §2): from
// a file, from a set read already, by watching the API server, or not at
// all. File and Set exclude each other and the watch.
type Classes struct {
	// File is read once (--classes-file): a YAML or JSON stream of
	// DynamicConfigClass and ClusterDynamicConfigClass objects.
	File string
	// Set is a class set read already (doors/engine).
	Set *classes.Set
	// Watch follows the class objects of the API server (--classes); a
	// loaded installation's classesEnabled (DYNAMIC_CONFIG_WEBHOOK_CLASSES)
	// turns it on too.
	Watch bool
	// Kubeconfig is the watch's kubeconfig (--kubeconfig; "" = the
	// in-cluster service account).
	Kubeconfig string
}

// Follow makes a decider a follower of a leader decider (spec 09 §1).
type Follow struct {
	// Leader is the leader's gRPC target (--follow), for the logs and
	// GetInstallation.
	Leader string
	// Dial connects to the leader; Start calls it once. The decider does
	// not dial itself: cmd dials with the front door's client
	// (frontdoor/client) over the --leader-* flags, and decider/ never
	// imports the front door.
	Dial func() (grpc.ClientConnInterface, error)
	// ID is this follower's id (--follower-id), a lower-case DNS name.
	ID string
	// StateDir keeps the last good snapshot, which a follower starts from
	// when its leader is unreachable (--state-dir; "" = nowhere).
	StateDir string
	// MaxStale turns the follower NOT_SERVING when it heard neither a
	// snapshot nor a heartbeat for longer (--max-stale; 0 = never).
	MaxStale time.Duration
	// Backoff is the reconnect schedule (zero = follower.DefaultBackoff).
	Backoff follower.Backoff
}
