// Package metrics holds every front door metric of spec 07 §5. No metric
// carries a namespace, pod or value label: cardinality stays bounded. A nil
// *Frontdoor is valid and records nothing (tests, the offline door).
package metrics

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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

// Reasons of dynamic_config_admission_refusals_total.
const (
	ReasonMalformed          = "malformed"
	ReasonPinned             = "pinned"
	ReasonPolicy             = "policy"
	ReasonConflict           = "conflict"
	ReasonEnvPolicy          = "env_policy"
	ReasonDeciderUnavailable = "decider_unavailable"
	ReasonInternal           = "internal"
)

// Frontdoor is the front door's metric set.
type Frontdoor struct {
	admissions  *prometheus.CounterVec
	validations *prometheus.CounterVec
	refusals    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	patchBytes  prometheus.Counter
	rpcDuration *prometheus.HistogramVec
	certExpiry  prometheus.Gauge
	certReloads *prometheus.CounterVec
	revisions   *revisions
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
		certExpiry: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "dynamic_config_certificate_expires_at_seconds",
			Help: "notAfter of the loaded serving certificate, in Unix seconds.",
		}),
		certReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_certificate_reloads_total",
			Help: "Serving certificate reloads after a change on disk, by result.",
		}, []string{"result"}),
		revisions: newRevisions(),
	}
	reg.MustRegister(m.admissions, m.validations, m.refusals, m.duration, m.patchBytes,
		m.rpcDuration, m.certExpiry, m.certReloads, m.revisions.gauge)
	for _, o := range []string{OutcomeSkipped, OutcomePatched, OutcomeRefused, OutcomeDeciderErrorAllowed, OutcomeDeciderErrorDenied} {
		m.admissions.WithLabelValues(o)
	}
	for _, o := range []string{OutcomeSkipped, OutcomeAllowed, OutcomeRefused, OutcomeDeciderErrorAllowed, OutcomeDeciderErrorDenied} {
		m.validations.WithLabelValues(o)
	}
	for _, r := range []string{ReasonMalformed, ReasonPinned, ReasonPolicy, ReasonConflict, ReasonEnvPolicy, ReasonDeciderUnavailable, ReasonInternal} {
		m.refusals.WithLabelValues(r)
	}
	for _, w := range []string{WebhookMutate, WebhookValidate} {
		m.duration.WithLabelValues(w)
	}
	for _, r := range []string{"ok", "error"} {
		m.certReloads.WithLabelValues(r)
	}
	return m
}

// RegisterRuntime registers the Go runtime and process collectors with reg.
// Registering them twice (serve runs both components on one registry) is
// not an error.
func RegisterRuntime(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return err
			}
		}
	}
	return nil
}

// Admission counts one answered review: webhook is WebhookMutate or
// WebhookValidate, outcome one of the Outcome constants, elapsed the time
// from receipt to answer.
func (m *Frontdoor) Admission(webhook, outcome string, elapsed time.Duration) {
	if m == nil {
		return
	}
	if webhook == WebhookValidate {
		m.validations.WithLabelValues(outcome).Inc()
	} else {
		m.admissions.WithLabelValues(outcome).Inc()
	}
	m.duration.WithLabelValues(webhook).Observe(elapsed.Seconds())
}

// Refusal counts one denied admission by reason (a Reason constant).
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

// CertificateLoaded records the notAfter of a newly loaded serving certificate.
func (m *Frontdoor) CertificateLoaded(notAfter time.Time) {
	if m == nil {
		return
	}
	m.certExpiry.Set(float64(notAfter.Unix()))
}

// CertificateReload counts one reload attempt after a change on disk.
func (m *Frontdoor) CertificateReload(ok bool) {
	if m == nil {
		return
	}
	result := "ok"
	if !ok {
		result = "error"
	}
	m.certReloads.WithLabelValues(result).Inc()
}
