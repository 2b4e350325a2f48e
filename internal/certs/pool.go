package certs

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
)

// Pool is a CA bundle read from a file and re-read whenever it is asked for
// (once per TLS handshake), parsed only when the bytes changed: a bundle that
// a rotation rewrites (tls.mode selfRotate: the new CA joins it before any
// peer presents a certificate of it) is in force from the next handshake. A
// file that cannot be read or holds no certificate keeps the last good pool.
type Pool struct {
	file string

	mu   sync.Mutex
	pem  []byte
	pool *x509.CertPool
}

// NewPool returns a pool for file; nothing is read yet.
func NewPool(file string) *Pool { return &Pool{file: file} }

// Get returns the pool of the file's current bundle, or the last good one.
func (p *Pool) Get() (*x509.CertPool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	text, err := os.ReadFile(p.file)
	if err == nil && p.pool != nil && bytes.Equal(text, p.pem) {
		return p.pool, nil
	}
	if err == nil {
		pool := x509.NewCertPool()
		if pool.AppendCertsFromPEM(text) {
			p.pem, p.pool = text, pool
			return pool, nil
		}
		err = fmt.Errorf("%s holds no PEM certificate", p.file)
	}
	if p.pool != nil {
		return p.pool, nil
	}
	return nil, err
}
