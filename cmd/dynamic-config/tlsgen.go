package main

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

// generatedValidity is how long `serve --tls-generate` certificates live.
const generatedValidity = 365 * 24 * time.Hour

// generatedTLS names the files `serve --tls-generate DIR` writes.
type generatedTLS struct {
	CA, Cert, Key string
}

// generateTLS writes a throw-away CA (ca.crt) and a serving pair (tls.crt,
// tls.key) for 127.0.0.1, ::1 and localhost into dir, so a real
// kube-apiserver can call `serve` (spec 07 §1.3). The CA key is not kept.
func generateTLS(dir string) (generatedTLS, error) {
	out := generatedTLS{
		CA:   filepath.Join(dir, "ca.crt"),
		Cert: filepath.Join(dir, "tls.crt"),
		Key:  filepath.Join(dir, "tls.key"),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out, fmt.Errorf("--tls-generate: %w", err)
	}
	now := time.Now()

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: CA key: %w", err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: "dynamic-config serve CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(generatedValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: CA certificate: %w", err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: serving key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: serialNumber(),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(generatedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return out, fmt.Errorf("--tls-generate: serving key: %w", err)
	}

	files := []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{
		{out.CA, "CERTIFICATE", caDER, 0o644},
		{out.Cert, "CERTIFICATE", der, 0o644},
		{out.Key, "PRIVATE KEY", keyDER, 0o600},
	}
	for _, f := range files {
		data := pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der})
		if err := os.WriteFile(f.path, data, f.mode); err != nil {
			return out, fmt.Errorf("--tls-generate: %w", err)
		}
	}
	return out, nil
}

// serialNumber is a random 128-bit certificate serial.
func serialNumber() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}
