// Package metrics holds every front door metric of spec 07 §5. No metric
// carries a namespace, pod or value label: cardinality stays bounded. A nil
// *Frontdoor is valid and records nothing (tests, the offline door).
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
)

// Buckets are the admission and RPC histogram buckets, in seconds (spec 07 §5).
var Buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}

// Webhooks, the values of the webhook label.
const (
	WebhookMutate   = "mutate"
	WebhookValidate = "validate"
)

// Outcomes of dynamic_config_admissions_total (/mutate) and
// dynamic_config_validations_total (/validate).
const (
	OutcomeSkipped             = "skipped"
	OutcomePatched             = "patched" // /mutate only
	OutcomeAllowed             = "allowed" // /validate only
	OutcomeRefused             = "refused"
	OutcomeDeciderErrorAllowed = "decider_error_allowed"
	OutcomeDeciderErrorDenied  = "decider_error_denied"
)

// Results of dynamic_config_decision_cache_lookups_total (issue 43).
const (
	CacheHit    = "hit"
	CacheMiss   = "miss"
	CacheBypass = "bypass"
	CacheStale  = "stale"
)

// AuthorizationCodes are the gRPC codes, by name, with which a decider
// refuses a caller: the values of the code label of
// dynamic_config_decider_authorization_failures_total.
var AuthorizationCodes = []string{"PermissionDenied", "Unauthenticated"}

// Frontdoor is the front door's metric set.
type Frontdoor struct {
	admissions  *prometheus.CounterVec
	validations *prometheus.CounterVec
	refusals    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	patchBytes  prometheus.Counter
	rpcDuration *prometheus.HistogramVec
	inFlight    *prometheus.GaugeVec
	requests    *prometheus.CounterVec
	authFails   *prometheus.CounterVec
	revisions   *revisions
	// The decision cache's series (issue 43); lookups resolved once by result.
	cacheLookups *prometheus.CounterVec
	cacheEntries prometheus.Gauge
	cacheBytes   prometheus.Gauge
	cacheResults map[string]prometheus.Counter
	// answered are the admissions and validations series by outcome, and
	// answerTime the duration series by webhook, resolved once: Admission
	// runs on every review and looks no label up.
	answered   map[[2]string]prometheus.Counter // {webhook, outcome}
	answerTime map[string]prometheus.Observer   // webhook
}

// NewFrontdoor creates the front door metrics and registers them with reg.
// The label values known up front are pre-created so that every series is
// exported from the start (a zero counter is information too).
func NewFrontdoor(reg prometheus.Registerer) *Frontdoor {
	m := &Frontdoor{
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_admissions_total",
			Help: "Admissions answered on /mutate, by outcome.",
		}, []string{"outcome"}),
		validations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_validations_total",
			Help: "Admissions answered on /validate, by outcome.",
		}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_admission_refusals_total",
			Help: "Denied admissions on both paths, by refusal reason.",
		}, []string{"reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dynamic_config_admission_duration_seconds",
			Help:    "Time to answer one AdmissionReview, by webhook.",
			Buckets: Buckets,
		}, []string{"webhook"}),
		patchBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "dynamic_config_admission_patch_bytes_total",
			Help: "Sum of the base64 patch lengths sent.",
		}),
		rpcDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dynamic_config_decider_rpc_duration_seconds",
			Help:    "Duration of Decide calls to the decider, by gRPC code.",
			Buckets: Buckets,
		}, []string{"code"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_webhook_requests_in_flight",
			Help: "HTTP requests being served on /mutate and /validate, by webhook.",
		}, []string{"webhook"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_webhook_requests_total",
			Help: "HTTP requests answered on /mutate and /validate, by webhook and HTTP status code (a body that is no AdmissionReview counts too).",
		}, []string{"webhook", "code"}),
		authFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_decider_authorization_failures_total",
			Help: "Decide calls the decider refused as not authorized (a lasting caller misconfiguration; each one denied its admission), by webhook and gRPC code.",
		}, []string{"webhook", "code"}),
		revisions: newRevisions(),
		cacheLookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_decision_cache_lookups_total",
			Help: "Decisions the decision cache was asked for, by result: hit (answered from the cache), miss (the decider asked; the answer remembered when it carries the announced revisions), bypass (no revision stream up, or a rollout announced: the decider asked, nothing remembered), stale (the decider unreachable; a stale entry answered).",
		}, []string{"result"}),
		cacheEntries: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_decision_cache_entries",
			Help: "Decisions the decision cache holds.",
		}),
		cacheBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_decision_cache_bytes",
			Help: "Estimated memory of the decisions the decision cache holds (what --decision-cache-max-bytes bounds).",
		}),
	}
	reg.MustRegister(m.admissions, m.validations, m.refusals, m.duration, m.patchBytes,
		m.rpcDuration, m.inFlight, m.requests, m.authFails, m.revisions.gauge,
		m.cacheLookups, m.cacheEntries, m.cacheBytes)
	m.cacheResults = make(map[string]prometheus.Counter)
	for _, r := range []string{CacheHit, CacheMiss, CacheBypass, CacheStale} {
		m.cacheResults[r] = m.cacheLookups.WithLabelValues(r)
	}
	m.answered = make(map[[2]string]prometheus.Counter)
	m.answerTime = make(map[string]prometheus.Observer)
	for _, o := range []string{OutcomeSkipped, OutcomePatched, OutcomeRefused, OutcomeDeciderErrorAllowed, OutcomeDeciderErrorDenied} {
		m.answered[[2]string{WebhookMutate, o}] = m.admissions.WithLabelValues(o)
	}
	for _, o := range []string{OutcomeSkipped, OutcomeAllowed, OutcomeRefused, OutcomeDeciderErrorAllowed, OutcomeDeciderErrorDenied} {
		m.answered[[2]string{WebhookValidate, o}] = m.validations.WithLabelValues(o)
	}
	for _, r := range refusallabel.FrontDoor() {
		m.refusals.WithLabelValues(r)
	}
	for _, w := range []string{WebhookMutate, WebhookValidate} {
		m.answerTime[w] = m.duration.WithLabelValues(w)
		for _, c := range AuthorizationCodes {
			m.authFails.WithLabelValues(w, c)
		}
	}
	// The code label is created by the codes that occur (no 17 × 2 zero series).
	for _, w := range []string{WebhookMutate, WebhookValidate} {
		m.inFlight.WithLabelValues(w)
	}
	return m
}

// Admission counts one answered review: webhook is WebhookMutate or
// WebhookValidate, outcome one of the Outcome constants, elapsed the time
// from receipt to answer.
func (m *Frontdoor) Admission(webhook, outcome string, elapsed time.Duration) {
	if m == nil {
		return
	}
	if c, ok := m.answered[[2]string{webhook, outcome}]; ok {
		c.Inc()
	} else if webhook == WebhookValidate {
		m.validations.WithLabelValues(outcome).Inc()
	} else {
		m.admissions.WithLabelValues(outcome).Inc()
	}
	if o, ok := m.answerTime[webhook]; ok {
		o.Observe(elapsed.Seconds())
	} else {
		m.duration.WithLabelValues(webhook).Observe(elapsed.Seconds())
	}
}

// AuthorizationFailure counts one Decide call on webhook that the decider
// refused with code (one of AuthorizationCodes).
func (m *Frontdoor) AuthorizationFailure(webhook, code string) {
	if m == nil {
		return
	}
	m.authFails.WithLabelValues(webhook, code).Inc()
}

// Refusal counts one denied admission by reason (an internal/refusallabel
// value).
func (m *Frontdoor) Refusal(reason string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(reason).Inc()
}

// PatchBytes adds the length of one base64 patch.
func (m *Frontdoor) PatchBytes(n int) {
	if m == nil {
		return
	}
	m.patchBytes.Add(float64(n))
}

// DeciderRPC records one Decide call by its gRPC code name (OK, Unavailable, …).
func (m *Frontdoor) DeciderRPC(code string, elapsed time.Duration) {
	if m == nil {
		return
	}
	m.rpcDuration.WithLabelValues(code).Observe(elapsed.Seconds())
}

// Instrument wraps the HTTP handler of one webhook (WebhookMutate or
// WebhookValidate) so that its requests are counted in flight and by status
// code, whatever the body held. A nil *Frontdoor returns h.
func (m *Frontdoor) Instrument(webhook string, h http.Handler) http.Handler {
	if m == nil {
		return h
	}
	labels := prometheus.Labels{"webhook": webhook}
	return promhttp.InstrumentHandlerInFlight(m.inFlight.With(labels),
		promhttp.InstrumentHandlerCounter(m.requests.MustCurryWith(labels), h))
}

// DecisionCacheLookup counts one question to the decision cache by its
// result (a Cache constant).
func (m *Frontdoor) DecisionCacheLookup(result string) {
	if m == nil {
		return
	}
	if c, ok := m.cacheResults[result]; ok {
		c.Inc()
		return
	}
	m.cacheLookups.WithLabelValues(result).Inc()
}

// DecisionCacheSize sets the decision cache's entries and estimated bytes.
func (m *Frontdoor) DecisionCacheSize(entries int, bytes int64) {
	if m == nil {
		return
	}
	m.cacheEntries.Set(float64(entries))
	m.cacheBytes.Set(float64(bytes))
}
