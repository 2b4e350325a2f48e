package client

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
)

// clientTLS builds the TLS configuration: the CA (or the system roots), the
// server name, and the client pair for mTLS, re-read when its files change.
func clientTLS(cfg Config) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("decider client: CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("decider client: CA %s holds no PEM certificate", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if (cfg.ClientCertFile == "") != (cfg.ClientKeyFile == "") {
		return nil, fmt.Errorf("decider client: the client certificate and key go together")
	}
	if cfg.ClientCertFile != "" {
		pair := &clientPair{certFile: cfg.ClientCertFile, keyFile: cfg.ClientKeyFile}
		if _, err := pair.get(); err != nil {
			return nil, err
		}
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return pair.get()
		}
	}
	return tc, nil
}

// clientPair caches the client certificate; every handshake re-reads the
// files, and parses them only when their bytes changed. A pair that does not
// parse (half-written during a rotation) keeps the last good one.
type clientPair struct {
	certFile, keyFile string

	mu              sync.Mutex
	certPEM, keyPEM []byte
	cert            *tls.Certificate
}

func (p *clientPair) get() (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	certPEM, errCert := os.ReadFile(p.certFile)
	keyPEM, errKey := os.ReadFile(p.keyFile)
	if errCert != nil || errKey != nil {
		if p.cert != nil {
			return p.cert, nil
		}
		if errCert != nil {
			return nil, fmt.Errorf("decider client: client certificate: %w", errCert)
		}
		return nil, fmt.Errorf("decider client: client key: %w", errKey)
	}
	if p.cert != nil && bytes.Equal(certPEM, p.certPEM) && bytes.Equal(keyPEM, p.keyPEM) {
		return p.cert, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if p.cert != nil {
			return p.cert, nil
		}
		return nil, fmt.Errorf("decider client: client pair: %w", err)
	}
	p.cert, p.certPEM, p.keyPEM = &cert, certPEM, keyPEM
	return p.cert, nil
}
