package daemon

import (
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
	"github.com/dynamic-config-admission/dynamic-config/internal/tracing"
)

// Config is everything a front door is started with. The zero value of
// each field is the front door's default; the comments name the flag of
// `dynamic-config frontdoor` each field stands for.
type Config struct {
	// Addr is the admission listener's TCP address (--addr), used when
	// Listener is nil; port 0 picks a free port (Frontdoor.Addr says which).
	Addr string
	// Listener, when set, is served instead of listening on Addr.
	Listener net.Listener
	// TLS is the admission listener's serving pair and client CA.
	TLS TLS
	// SelfRotate, when set, is tls.mode selfRotate: the serving pair is
	// signed in memory with a CA kept in a Secret (TLS.CertFile and
	// TLS.KeyFile are not read), and the decider client waits for its files,
	// which the CA leader may issue after this starts.
	SelfRotate *SelfRotate

	// Decider is how to reach the decider (--decider-target and the
	// --decider-* flags). Its MaxMessageBytes is the budget both ends hold
	// to (msgbudget.Bytes of --max-request-bytes); Tracing is filled in.
	Decider client.Config
	// Cluster is sent with every decision request (--cluster-name; "" =
	// the decider's own cluster).
	Cluster string
	// Timeout is the per-call deadline (--decider-timeout; 0 =
	// handler.DefaultTimeout).
	Timeout time.Duration
	// OnDeciderError and OnDeciderErrorValidate answer /mutate and
	// /validate when the decider gives no usable answer: "deny" or "allow"
	// (--on-decider-error, --on-decider-error-validate; "" = deny, and
	// /validate as /mutate).
	OnDeciderError, OnDeciderErrorValidate string
	// MaxRequestBytes is the AdmissionReview body limit
	// (--max-request-bytes; 0 = handler.DefaultMaxRequestBytes).
	MaxRequestBytes int64
	// ShutdownGrace bounds the drain when the context ends
	// (--shutdown-grace; 0 = httpserver.DefaultShutdownGrace).
	ShutdownGrace time.Duration
	// DrainDelay keeps answering this long after the context ended, with
	// /readyz 503 and Connection: close, before the drain (--drain-delay).
	DrainDelay time.Duration

	// DecisionCache is the decision cache in front of the decider
	// (--decision-cache*, issue 43): on unless Off.
	DecisionCache DecisionCache

	// MetricsAddr is an extra plain-HTTP listener of /metrics, /healthz
	// and /readyz (--metrics-addr; "" = none).
	MetricsAddr string
	// Pprof serves net/http/pprof on the metrics listener (--pprof).
	Pprof bool

	// Tracing starts a trace per admission, continuing the API server's
	// (nil = off). The caller owns it: serve shares one with its decider.
	Tracing *tracing.Tracing
	// Registry receives every metric of the front door (nil: a registry
	// of its own, which /metrics serves).
	Registry *prometheus.Registry
	// Logger receives the front door's log lines (nil = discard).
	Logger *slog.Logger
}

// DecisionCache is the front door's decision cache (frontdoor/decisioncache,
// issue 43): a question answered before is answered again without the
// decider while the decider's revision watch announces the revisions it was
// decided under.
type DecisionCache struct {
	// Off starts the front door without it (--decision-cache=false):
	// every question asks the decider, as before the cache.
	Off bool
	// MaxEntries and MaxBytes bound it (--decision-cache-max-entries,
	// --decision-cache-max-bytes; 0 = decisioncache.DefaultMaxEntries,
	// DefaultMaxBytes).
	MaxEntries int64
	MaxBytes   int64
	// StaleIfError is how long after the decider last confirmed an entry it
	// still answers while the decider cannot be reached
	// (--decision-cache-stale-if-error; 0 = never: the flag's default,
	// decisioncache.DefaultStaleIfError, is the command's to give).
	StaleIfError time.Duration
}

// The bounds Check holds the decision cache's flags to: a cache of one
// entry is a cache; below 64 KiB a single decision with its patch may not
// fit.
const (
	MaxDecisionCacheEntries = 1 << 24
	MinDecisionCacheBytes   = 64 << 10
)

// Check names the first of the --decision-cache* flags out of its bounds,
// and what is accepted; the flags' 0 is a value there, not the default.
func (c DecisionCache) Check() error {
	switch {
	case c.MaxEntries < 1 || c.MaxEntries > MaxDecisionCacheEntries:
		return fmt.Errorf("--decision-cache-max-entries is %d: between 1 and %d", c.MaxEntries, MaxDecisionCacheEntries)
	case c.MaxBytes < MinDecisionCacheBytes:
		return fmt.Errorf("--decision-cache-max-bytes is %d: at least %d", c.MaxBytes, MinDecisionCacheBytes)
	case c.StaleIfError < 0:
		return fmt.Errorf("--decision-cache-stale-if-error is %s: 0 (never) or more", c.StaleIfError)
	}
	return nil
}

// TLS is the admission listener's TLS.
type TLS struct {
	// CertFile and KeyFile are the serving pair (--tls-cert, --tls-key),
	// re-read every ReloadInterval; both "" serves plain HTTP.
	CertFile, KeyFile string
	// ReloadInterval is the pair's poll interval (--cert-reload-interval;
	// 0 = DefaultCertReloadInterval).
	ReloadInterval time.Duration
	// PlaintextWithoutPair serves plain HTTP, with a warning, when the pair
	// does not load (--plaintext: tests only); otherwise Start fails with a
	// *PairError.
	PlaintextWithoutPair bool
	// ClientCA, when set, makes /mutate and /validate require a client
	// certificate verified against this CA (--client-ca: the API
	// server's); read at start. It needs the serving pair
	// (ErrClientCAWithoutTLS).
	ClientCA string
}

// DefaultCertReloadInterval is the serving pair's poll interval when
// TLS.ReloadInterval is 0.
const DefaultCertReloadInterval = 10 * time.Second

// SelfRotate is tls.mode selfRotate (the --self-rotate-* flags): the front
// door keeps a CA in a Secret, every replica signs its own serving
// certificate with it, and the holder of a Lease mints and rotates the CA,
// writes its bundle into the webhook configurations' caBundle and keeps the
// mTLS pairs between front door and decider signed (frontdoor/selfrotate).
type SelfRotate struct {
	// Kubeconfig reaches the API server ("" = the in-cluster service account).
	Kubeconfig string
	// Namespace holds the CA Secret and the Lease ("" = the service
	// account's namespace).
	Namespace string
	// Secret and Lease name the CA Secret and the Lease.
	Secret, Lease string
	// Hosts are the serving certificate's DNS names and IP addresses
	// (required).
	Hosts []string
	// MutatingWebhook and ValidatingWebhook name the configurations whose
	// caBundle is written ("" = none).
	MutatingWebhook, ValidatingWebhook string
	// CAValidity, LeafValidity and Interval: a minted CA's and a serving
	// certificate's lifetimes, and how often the Secret and the
	// configurations are checked.
	CAValidity, LeafValidity, Interval time.Duration
	// DeciderSecret, when set, is filled with the decider's serving pair for
	// DeciderHosts (required with it; a non-nil DeciderHosts without it is
	// refused).
	DeciderSecret string
	DeciderHosts  []string
	// ClientSecret, when set, is filled with the front door's client pair
	// towards the decider, for the subject ClientName.
	ClientSecret, ClientName string
	// Handover is how long a new CA is trusted in both pair Secrets before
	// the pairs move to it.
	Handover time.Duration
}
