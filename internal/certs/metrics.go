package certs

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the certificate label: which pair a series describes.
const (
	CertificateFrontdoorServing = "frontdoor-serving" // the admission listener's pair
	CertificateDeciderServing   = "decider-serving"   // the decider's gRPC pair
)

// Metrics are the certificate metrics of both components, one series per
// loaded pair (a process that serves without TLS exports none, rather than
// an expiry of 0 that would page someone).
type Metrics struct {
	expiration *prometheus.GaugeVec
	reloads    *prometheus.CounterVec
}

// NewMetrics registers the certificate metrics with reg, or returns the ones
// already registered there (serve runs both components on one registry).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		expiration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "dynamic_config_certificate_expiration_timestamp_seconds",
			Help: "notAfter of the serving certificate in use, in Unix seconds, by certificate.",
		}, []string{"certificate"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dynamic_config_certificate_reloads_total",
			Help: "Serving certificate changes put in use or rejected after the first load, by certificate and result.",
		}, []string{"certificate", "result"}),
	}
	var err error
	if m.expiration, err = registerOnce(reg, m.expiration); err != nil {
		return nil, err
	}
	if m.reloads, err = registerOnce(reg, m.reloads); err != nil {
		return nil, err
	}
	return m, nil
}

func registerOnce[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

// Observer is the observer of one pair, named by a Certificate constant. A
// nil *Metrics gives a nil Observer (nothing recorded).
func (m *Metrics) Observer(certificate string) Observer {
	if m == nil {
		return nil
	}
	return &certificateObserver{m: m, certificate: certificate}
}

type certificateObserver struct {
	m           *Metrics
	certificate string
}

func (o *certificateObserver) CertificateLoaded(notAfter time.Time) {
	o.m.expiration.WithLabelValues(o.certificate).Set(float64(notAfter.Unix()))
}

func (o *certificateObserver) CertificateReload(ok bool) {
	result := "ok"
	if !ok {
		result = "error"
	}
	o.m.reloads.WithLabelValues(o.certificate, result).Inc()
}
