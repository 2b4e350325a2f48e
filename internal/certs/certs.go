// Package certs holds a TLS key pair that is re-read from disk on an
// interval (spec 07 §3.3): the files are compared byte for byte with the pair
// in use, parsed only when they changed, and a pair that does not parse (a
// half-written rotation) leaves the last good pair in place; a changed file
// is taken only once it has settled (internal/stablefile, issue 38), so a
// chain rewritten in place is never served as the leaf a read caught.
// Handshakes read the cached pair; in-flight connections keep the one they
// started with.
//
// The same Pair serves the front door's HTTPS listener, the decider's gRPC
// listener and the front door's client certificate towards the decider:
// the daemons (decider/daemon, frontdoor/daemon) and the decider client
// (frontdoor/client) build a *tls.Config from GetCertificate /
// GetClientCertificate.
package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// ErrNoCertificate is returned by the handshake callbacks while no pair is loaded.
var ErrNoCertificate = errors.New("no certificate loaded")

// Observer receives the pair's events; the front door metrics implement it.
type Observer interface {
	// CertificateLoaded is called with the leaf's notAfter whenever a pair is
	// put in use (the first load included).
	CertificateLoaded(notAfter time.Time)
	// CertificateReload is called once per changed pair seen after the first
	// load: ok says whether it parsed and was put in use.
	CertificateReload(ok bool)
}

// Pair is a reloading key pair. Create it with New; the zero value is unusable.
type Pair struct {
	certFile, keyFile string
	cert, key         *stablefile.Watched
	logger            *slog.Logger
	observer          Observer

	mu       sync.RWMutex
	current  *loaded
	rejected *loaded // the last pair seen on disk that did not parse
}

type loaded struct {
	certPEM, keyPEM []byte
	cert            *tls.Certificate
	notAfter        time.Time
	err             error // why a rejected pair did not parse
}

// New returns a pair for certFile and keyFile. Nothing is read yet: call
// Load, then Run. logger and observer may be nil.
func New(certFile, keyFile string, logger *slog.Logger, observer Observer) *Pair {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Pair{certFile: certFile, keyFile: keyFile, cert: stablefile.Watch(certFile, maxPEMBytes), key: stablefile.Watch(keyFile, maxPEMBytes),
		logger: logger, observer: observer}
}

// Load reads the pair once. It fails when the files cannot be read or do not
// form a valid pair; a pair already in use stays in use.
func (p *Pair) Load() error {
	_, err := p.reload()
	return err
}

// Run re-reads the pair every interval until ctx ends.
func (p *Pair) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if changed, err := p.reload(); changed && err != nil {
				p.logger.Warn("serving certificate not reloaded; keeping the last good pair",
					"cert_file", p.certFile, "key_file", p.keyFile, "error", err)
			} else if changed {
				p.logger.Info("serving certificate reloaded", "cert_file", p.certFile,
					"not_after", p.NotAfter().UTC().Format(time.RFC3339))
			}
		}
	}
}

// reload reads both files; changed reports that they differ from the pair in
// use and from the last rejected pair (so a half-written pair is counted and
// logged once, and tried again on every tick until it parses).
func (p *Pair) reload() (changed bool, err error) {
	certRead, err := p.cert.Current()
	if err != nil {
		return false, fmt.Errorf("read certificate: %w", err)
	}
	keyRead, err := p.key.Current()
	if err != nil {
		return false, fmt.Errorf("read key: %w", err)
	}
	certPEM, keyPEM := certRead.Data, keyRead.Data
	p.mu.RLock()
	cur, rej := p.current, p.rejected
	p.mu.RUnlock()
	if cur != nil && cur.same(certPEM, keyPEM) {
		return false, nil
	}
	first := cur == nil
	if rej != nil && rej.same(certPEM, keyPEM) {
		return false, rej.err // parsed once already: only a change is parsed
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		err = fmt.Errorf("parse key pair %s, %s: %w", p.certFile, p.keyFile, err)
		p.mu.Lock()
		p.rejected = &loaded{certPEM: certPEM, keyPEM: keyPEM, err: err}
		p.mu.Unlock()
		if !first && p.observer != nil {
			p.observer.CertificateReload(false)
		}
		return true, err
	}
	next := &loaded{certPEM: certPEM, keyPEM: keyPEM, cert: &cert}
	if cert.Leaf != nil {
		next.notAfter = cert.Leaf.NotAfter
	}
	p.mu.Lock()
	p.current, p.rejected = next, nil
	p.mu.Unlock()
	if p.observer != nil {
		p.observer.CertificateLoaded(next.notAfter)
		if !first {
			p.observer.CertificateReload(true)
		}
	}
	return true, nil
}

func (l *loaded) same(certPEM, keyPEM []byte) bool {
	return bytes.Equal(l.certPEM, certPEM) && bytes.Equal(l.keyPEM, keyPEM)
}

// Loaded reports whether a pair is in use.
func (p *Pair) Loaded() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.current != nil
}

// NotAfter is the leaf certificate's notAfter (zero when nothing is loaded).
func (p *Pair) NotAfter() time.Time {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.current == nil {
		return time.Time{}
	}
	return p.current.notAfter
}

// Certificate returns the pair in use.
func (p *Pair) Certificate() (*tls.Certificate, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.current == nil {
		return nil, ErrNoCertificate
	}
	return p.current.cert, nil
}

// GetCertificate is a tls.Config.GetCertificate callback (serving side).
func (p *Pair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return p.Certificate()
}

// GetClientCertificate is a tls.Config.GetClientCertificate callback (client
// side, e.g. the front door's certificate towards the decider under mTLS).
func (p *Pair) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return p.Certificate()
}

// ServerConfig is the front door's HTTPS configuration (spec 07 §3.3):
// TLS 1.2 or later, HTTP/1.1 only (admission webhooks speak HTTP/1.1), the
// cached pair served on every handshake.
func (p *Pair) ServerConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"http/1.1"},
		GetCertificate: p.GetCertificate,
	}
}

// Use puts a pair held in memory in use (the front door's self-rotated
// serving certificate): it replaces the pair in use when it parses, and is
// reported to the observer like a pair read from disk.
func (p *Pair) Use(certPEM, keyPEM []byte) error {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("parse key pair: %w", err)
	}
	next := &loaded{certPEM: certPEM, keyPEM: keyPEM, cert: &cert}
	if cert.Leaf != nil {
		next.notAfter = cert.Leaf.NotAfter
	}
	p.mu.Lock()
	first := p.current == nil
	p.current, p.rejected = next, nil
	p.mu.Unlock()
	if p.observer != nil {
		p.observer.CertificateLoaded(next.notAfter)
		if !first {
			p.observer.CertificateReload(true)
		}
	}
	return nil
}
