package client

import (
	"crypto/tls"
	"crypto/x509"
)

type tlsPair struct{ cert, key string }

func (p *tlsPair) load() (tls.Certificate, error) { return tls.LoadX509KeyPair(p.cert, p.key) }

// mtlsServerConfig requires client certificates signed by pool.
func mtlsServerConfig(cert tls.Certificate, pool *x509.CertPool) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pool,
	}
}
