package main

import (
	"crypto/x509"
	"fmt"
	"os"
)

// loadClientCA reads --client-ca: the CA whose client certificates the
// front door accepts on /mutate and /validate (the API server's, issue 17).
// It is read at start; a new CA takes a restart.
func loadClientCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--client-ca: %s holds no PEM certificate", path)
	}
	return pool, nil
}
