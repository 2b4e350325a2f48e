package selfrotate

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Keys of the CA Secret.
const (
	KeyCACert   = "ca.crt"        // the signing CA certificate (PEM)
	KeyCAKey    = "ca.key"        // its private key (PEM, EC)
	KeyCABundle = "ca-bundle.crt" // what the webhook configurations trust: the signing CA, then earlier CAs still valid
)

// clockSkew back-dates every certificate so a node whose clock is slightly
// behind still accepts it.
const clockSkew = time.Minute

// Authority is the front door's own CA: it signs every replica's serving
// certificate.
type Authority struct {
	Cert    *x509.Certificate
	CertPEM []byte
	key     *ecdsa.PrivateKey
	KeyPEM  []byte
}

// NewAuthority mints a CA valid from now for validity.
func NewAuthority(commonName string, now time.Time, validity time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber:          serialNumber(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("ca certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	return ParseAuthority(
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

// ParseAuthority reads a CA from the Secret's ca.crt and ca.key.
func ParseAuthority(certPEM, keyPEM []byte) (*Authority, error) {
	certs, err := parseCertificates(certPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyCACert, err)
	}
	if len(certs) != 1 || !certs[0].IsCA {
		return nil, fmt.Errorf("%s: want one CA certificate, found %d certificate(s)", KeyCACert, len(certs))
	}
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", KeyCAKey)
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyCAKey, err)
	}
	if !key.PublicKey.Equal(certs[0].PublicKey) {
		return nil, fmt.Errorf("%s does not belong to %s", KeyCAKey, KeyCACert)
	}
	return &Authority{Cert: certs[0], CertPEM: certPEM, key: key, KeyPEM: keyPEM}, nil
}

// Issue signs a serving certificate for hosts (DNS names or IP addresses),
// valid from now for validity but never beyond the CA's own notAfter.
func (a *Authority) Issue(hosts []string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("no host names for the serving certificate")
	}
	return a.issue(hosts[0], hosts, x509.ExtKeyUsageServerAuth, now, validity)
}

// IssueClient signs a client certificate (mTLS towards the decider) named
// commonName, valid from now for validity but never beyond the CA's notAfter.
func (a *Authority) IssueClient(commonName string, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if commonName == "" {
		return nil, nil, errors.New("no name for the client certificate")
	}
	return a.issue(commonName, nil, x509.ExtKeyUsageClientAuth, now, validity)
}

func (a *Authority) issue(commonName string, hosts []string, usage x509.ExtKeyUsage, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	what := "serving"
	if usage == x509.ExtKeyUsageClientAuth {
		what = "client"
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("%s key: %w", what, err)
	}
	notAfter := now.Add(validity)
	if notAfter.After(a.Cert.NotAfter) {
		notAfter = a.Cert.NotAfter
	}
	template := &x509.Certificate{
		SerialNumber: serialNumber(),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			template.IPAddresses = append(template.IPAddresses, ip)
		} else {
			template.DNSNames = append(template.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, template, a.Cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, fmt.Errorf("%s certificate: %w", what, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("%s key: %w", what, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// Bundle is the trust bundle for signing: the signing CA first, then every
// certificate of previous that is a different CA still valid at now (so a
// replica still serving a certificate of the previous CA stays trusted until
// that CA expires). Unparsable input in previous is dropped.
func Bundle(signing *x509.Certificate, previous []byte, now time.Time) []byte {
	var out bytes.Buffer
	out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: signing.Raw}))
	seen := map[string]bool{string(signing.Raw): true}
	old, _ := parseCertificates(previous)
	for _, c := range old {
		if seen[string(c.Raw)] || !c.IsCA || !now.Before(c.NotAfter) {
			continue
		}
		seen[string(c.Raw)] = true
		out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
	}
	return out.Bytes()
}

// parseCertificates reads every CERTIFICATE block of a PEM text.
func parseCertificates(text []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, text = pem.Decode(text)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no PEM certificate")
	}
	return out, nil
}

// serialNumber is a random 128-bit certificate serial.
func serialNumber() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
