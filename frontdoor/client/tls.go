package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"

	"google.golang.org/grpc/credentials"

	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// clientTLS builds the transport credentials: the CA (or the system roots),
// the server name, and the client pair for mTLS. The CA bundle and the pair
// are re-read at every handshake and parsed when their bytes changed, so a
// rotated CA or pair is in use from the next connection. With WaitForFiles
// they need not exist yet (tls.mode selfRotate: the front door's CA leader
// issues them): handshakes fail until they do.
func clientTLS(cfg Config) (credentials.TransportCredentials, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.ServerName}
	if (cfg.ClientCertFile == "") != (cfg.ClientKeyFile == "") {
		return nil, fmt.Errorf("decider client: the client certificate and key go together")
	}
	if cfg.ClientCertFile != "" {
		pair := &clientPair{certFile: stablefile.Watch(cfg.ClientCertFile, maxPEMBytes), keyFile: stablefile.Watch(cfg.ClientKeyFile, maxPEMBytes)}
		if _, err := pair.get(); err != nil && !cfg.WaitForFiles {
			return nil, err
		}
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return pair.get()
		}
	}
	if cfg.CAFile == "" {
		return credentials.NewTLS(tc), nil
	}
	roots := certs.NewPool(cfg.CAFile)
	if _, err := roots.Get(); err != nil && !cfg.WaitForFiles {
		return nil, fmt.Errorf("decider client: CA: %w", err)
	}
	return &reloadingRoots{base: tc, roots: roots}, nil
}

// maxPEMBytes bounds the client pair's files.
const maxPEMBytes = 4 << 20

// reloadingRoots is TLS transport credentials whose root CAs are the
// current content of a file: every handshake builds gRPC's TLS credentials
// over the pool in force.
type reloadingRoots struct {
	base  *tls.Config
	roots *certs.Pool
}

func (r *reloadingRoots) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	pool, err := r.roots.Get()
	if err != nil {
		return nil, nil, fmt.Errorf("decider client: CA: %w", err)
	}
	c := r.base.Clone()
	c.RootCAs = pool
	return credentials.NewTLS(c).ClientHandshake(ctx, authority, raw)
}

func (r *reloadingRoots) ServerHandshake(net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("decider client: no server handshake")
}

func (r *reloadingRoots) Info() credentials.ProtocolInfo { return credentials.NewTLS(r.base).Info() }

func (r *reloadingRoots) Clone() credentials.TransportCredentials {
	return &reloadingRoots{base: r.base.Clone(), roots: r.roots}
}

// OverrideServerName is deprecated in gRPC; kept for the interface.
func (r *reloadingRoots) OverrideServerName(name string) error { //nolint:staticcheck // the interface still has it
	r.base.ServerName = name
	return nil
}

// clientPair caches the client certificate; every handshake re-reads the
// files, and parses them only when their bytes changed and settled
// (internal/stablefile). A pair that does not parse (half-written during a
// rotation) keeps the last good one.
type clientPair struct {
	certFile, keyFile *stablefile.Watched

	mu              sync.Mutex
	certPEM, keyPEM []byte
	cert            *tls.Certificate
}

func (p *clientPair) get() (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	certRead, errCert := p.certFile.Current()
	keyRead, errKey := p.keyFile.Current()
	certPEM, keyPEM := certRead.Data, keyRead.Data
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
