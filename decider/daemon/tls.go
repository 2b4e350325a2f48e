package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
)

// serverTLS builds the gRPC listener's TLS configuration (nil: plaintext).
// The serving pair is re-read while ctx lives; the client CA bundle at
// every handshake.
func (cfg Config) serverTLS(ctx context.Context) (*tls.Config, error) {
	t := cfg.TLS
	if !t.enabled() {
		if t.ClientCA != "" {
			return nil, errors.New("decider: a client CA needs a serving pair")
		}
		return nil, nil
	}
	certMetrics, err := certs.NewMetrics(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("decider: metrics: %w", err)
	}
	pair := certs.New(t.CertFile, t.KeyFile, cfg.Logger, certMetrics.Observer(certs.CertificateDeciderServing))
	if err := pair.Load(); err != nil {
		if !t.Wait {
			return nil, fmt.Errorf("decider: TLS pair: %w", err)
		}
		cfg.Logger.Info("waiting for the serving pair (--tls-wait)", "cert_file", t.CertFile, "error", err.Error())
	}
	go pair.Run(ctx, CertReloadInterval)
	tc := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: pair.GetCertificate}
	if t.ClientCA == "" {
		return tc, nil
	}
	// The client CA bundle is re-read at every handshake (certs.Pool): a
	// rotated CA is trusted from the first handshake after its file changes.
	clientCAs := certs.NewPool(t.ClientCA)
	pool, err := clientCAs.Get()
	if err != nil && !t.Wait {
		return nil, fmt.Errorf("decider: --tls-client-ca: %w", err)
	}
	tc.ClientCAs = pool
	tc.ClientAuth = tls.RequireAndVerifyClientCert
	tc.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pool, err := clientCAs.Get()
		if err != nil {
			return nil, fmt.Errorf("--tls-client-ca: %w", err)
		}
		c := tc.Clone()
		c.GetConfigForClient = nil
		c.ClientCAs = pool
		if !slices.Contains(c.NextProtos, "h2") { // gRPC's ALPN, which credentials.NewTLS adds to tc only
			c.NextProtos = append(c.NextProtos, "h2")
		}
		return c, nil
	}
	return tc, nil
}
