package certs

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"sync"

	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// Pool is a CA bundle read from a file and re-read whenever it is asked for
// (once per TLS handshake), parsed only when the bytes changed: a bundle that
// a rotation rewrites (tls.mode selfRotate: the new CA joins it before any
// peer presents a certificate of it) is in force from the next handshake
// after it settled (internal/stablefile: a bundle rewritten in place is
// never taken as the prefix a read caught, issue 38). A file that cannot be
// read or holds no certificate keeps the last good pool.
type Pool struct {
	file *stablefile.Watched

	mu   sync.Mutex
	pem  []byte
	pool *x509.CertPool
}

// NewPool returns a pool for file; nothing is read yet.
func NewPool(file string) *Pool { return &Pool{file: stablefile.Watch(file, maxPEMBytes)} }

// maxPEMBytes bounds a PEM file the front door or the decider reads: a
// bundle of a thousand certificates.
const maxPEMBytes = 4 << 20

// Get returns the pool of the file's current bundle, or the last good one.
func (p *Pool) Get() (*x509.CertPool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s, err := p.file.Current()
	text := s.Data
	if err == nil && p.pool != nil && bytes.Equal(text, p.pem) {
		return p.pool, nil
	}
	if err == nil {
		pool := x509.NewCertPool()
		if pool.AppendCertsFromPEM(text) {
			p.pem, p.pool = text, pool
			return pool, nil
		}
		err = fmt.Errorf("%s holds no PEM certificate", p.file.Path())
	}
	if p.pool != nil {
		return p.pool, nil
	}
	return nil, err
}
