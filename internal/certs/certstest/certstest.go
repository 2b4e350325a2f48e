// Package certstest generates throw-away certificates for tests: a CA and a
// serving (and client) certificate signed by it, valid for loopback.
package certstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Bundle is a generated CA and one leaf signed by it, written to Dir.
type Bundle struct {
	CAFile, CertFile, KeyFile string
	CAPEM, CertPEM, KeyPEM    []byte
	NotAfter                  time.Time
}

// Write generates a CA and a leaf valid for 127.0.0.1, ::1 and localhost
// (usable as server and client certificate) with the given lifetime, and
// writes ca.crt, <name>.crt and <name>.key into dir.
func Write(dir, name string, lifetime time.Duration) (*Bundle, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now().Add(-time.Minute).Truncate(time.Second)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             now,
		NotAfter:              now.Add(lifetime),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now,
		NotAfter:     now.Add(lifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	b := &Bundle{
		CAFile:   filepath.Join(dir, "ca.crt"),
		CertFile: filepath.Join(dir, name+".crt"),
		KeyFile:  filepath.Join(dir, name+".key"),
		CAPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		NotAfter: tmpl.NotAfter,
	}
	for file, data := range map[string][]byte{b.CAFile: b.CAPEM, b.CertFile: b.CertPEM, b.KeyFile: b.KeyPEM} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return nil, fmt.Errorf("write %s: %w", file, err)
		}
	}
	return b, nil
}

// Pool returns a cert pool holding the bundle's CA.
func (b *Bundle) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b.CAPEM)
	return pool
}
