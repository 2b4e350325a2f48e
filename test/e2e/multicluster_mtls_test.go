package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// callerPKI is one CA that signs the decider's serving pair and the front
// doors' client pairs, written as PEM files into dir.
type callerPKI struct {
	t      *testing.T
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPath string
	serial int64
}

func newCallerPKI(t *testing.T, dir string) *callerPKI {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e decider CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &callerPKI{t: t, dir: dir, ca: ca, caKey: key, caPath: filepath.Join(dir, "ca.crt"), serial: 1}
	p.write(p.caPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return p
}

func (p *callerPKI) write(path string, b []byte) {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		p.t.Fatal(err)
	}
}

// leaf issues name.crt / name.key: a loopback server pair, or a client pair
// whose URI SAN is uri.
func (p *callerPKI) leaf(name string, server bool, uri string) (certPath, keyPath string) {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serial++
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		u, err := url.Parse(uri)
		if err != nil {
			p.t.Fatal(err)
		}
		tmpl.URIs = []*url.URL{u}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(p.dir, name+".crt"), filepath.Join(p.dir, name+".key")
	p.write(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	p.write(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return certPath, keyPath
}

// TestACallerIdentifiedByItsClientCertificate runs the decider with mTLS and
// a callers file that knows west's front door by the URI SAN of its client
// certificate: the certificate's caller is injected for its own cluster,
// refused for another, and a certificate of the same CA that the file does
// not list is refused outright.
func TestACallerIdentifiedByItsClientCertificate(t *testing.T) {
	dir := testDir(t)
	pki := newCallerPKI(t, filepath.Join(dir, "pki"))
	serverCert, serverKey := pki.leaf("decider", true, "")
	westCert, westKey := pki.leaf("west-frontdoor", false, "spiffe://west.example/ns/dynamic-config/sa/frontdoor")
	otherCert, otherKey := pki.leaf("unlisted", false, "spiffe://west.example/ns/other/sa/default")

	callers := filepath.Join(dir, "callers.yaml")
	pki.write(callers, []byte(`callers:
  - name: west-frontdoor
    clusters: [west]
    credentials:
      - uriSAN: spiffe://west.example/ns/dynamic-config/sa/frontdoor
`))
	installation := filepath.Join(dir, "installation.yaml")
	writeInstallation(t, installation, seedInstallation(t))
	ports, err := reservePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	addr, metricsAddr := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	d := mustStart(t, "decider-mtls", filepath.Join(dir, "decider-mtls.log"), nil, theCluster.product, "decider",
		"--addr", addr, "--metrics-addr", metricsAddr,
		"--tls-cert", serverCert, "--tls-key", serverKey, "--tls-client-ca", pki.caPath,
		"--installation", installation, "--callers", callers, "--cluster-name", "east")
	if err := eventually("decider-mtls /readyz", productReadyTimeout, 100*time.Millisecond, aliveCheck(d, func() error {
		return httpOK(http.DefaultClient, "http://"+metricsAddr+"/readyz", "")
	})); err != nil {
		t.Fatal(err)
	}
	mtls := func(cert, key string) []string {
		return []string{"--decider-plaintext=false", "--decider-ca", pki.caPath, "--decider-client-cert", cert, "--decider-client-key", key}
	}
	_, westDoor := startFrontdoor(t, "frontdoor-west", addr, append(mtls(westCert, westKey), "--cluster-name", "west")...)
	_, claimDoor := startFrontdoor(t, "frontdoor-west-claims-east", addr, append(mtls(westCert, westKey), "--cluster-name", "east")...)
	_, otherDoor := startFrontdoor(t, "frontdoor-unlisted", addr, append(mtls(otherCert, otherKey), "--cluster-name", "west")...)

	consul := seedPods[0]
	site := func(door frontDoor) string {
		ns := newNamespace(t)
		registerInjection(t, ns+"-inject", ns, door, injection{})
		waitForEffect(t, "the injection webhook takes effect in "+ns, pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
		return ns
	}
	westNS, claimNS, otherNS := site(westDoor), site(claimDoor), site(otherDoor)

	t.Run("the certificate's caller is injected for its own cluster", func(t *testing.T) {
		wantAdmitted(t, applyJSON(t, pod(westNS, "consul", consul.annotations)))
		checkInjected(t, getPod(t, westNS, "consul"), consul.want)
		if got := auditAnnotations(t, "pods", westNS, "consul")[injectWebhookName+"/cluster"]; got != "west" {
			t.Fatalf("audit annotation %s/cluster = %q; want west", injectWebhookName, got)
		}
		asserted(t, "client certificate with URI SAN spiffe://west.example/… → caller west-frontdoor, pod injected, audit cluster=west")
	})
	t.Run("the same certificate claiming another cluster is denied", func(t *testing.T) {
		r := applyJSON(t, pod(claimNS, "consul", consul.annotations))
		wantRefused(t, r, "DynamicConfigCallerRefused", "PermissionDenied: this caller may not speak for the cluster named in the request")
		asserted(t, "the same certificate with --cluster-name east → PermissionDenied")
	})
	t.Run("a certificate of the same CA that the callers file does not list is unauthenticated", func(t *testing.T) {
		r := applyJSON(t, pod(otherNS, "consul", consul.annotations))
		wantRefused(t, r, "DynamicConfigCallerRefused", "Unauthenticated: a credential of a known caller is required")
		asserted(t, "an unlisted certificate from the decider's CA → Unauthenticated")
	})
}
