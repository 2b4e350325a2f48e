package e2e

// Issue 17: the API server authenticated to the front door. The harness's
// kube-apiserver runs with an AdmissionConfiguration whose webhook
// kubeconfig supplies a client certificate (writeWebhookClientAuth); a front
// door started with --client-ca of that certificate's CA admits through the
// API server and refuses a caller without the certificate.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeWebhookClientAuth writes, into dir, a CA and a client pair signed by
// it (ca.crt, client.crt, client.key), the kubeconfig that hands that pair
// to every admission webhook the API server calls (user "*": a webhook that
// does not ask for a client certificate never sees it), and the
// AdmissionConfiguration naming that kubeconfig for both webhook plugins. It
// returns the AdmissionConfiguration's path and the CA's path.
func writeWebhookClientAuth(dir string) (admissionConfig, caPath string, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "e2e webhook client CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", "", err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return "", "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver-webhook-client"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	caPath = filepath.Join(dir, "ca.crt")
	certPath, keyPath := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	kubeconfig, admissionConfig := filepath.Join(dir, "webhook-kubeconfig"), filepath.Join(dir, "admission-configuration.yaml")
	files := map[string][]byte{
		caPath:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certPath: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		keyPath:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		kubeconfig: []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`, certPath, keyPath)),
		admissionConfig: []byte(fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %[1]s
`, kubeconfig)),
	}
	for path, b := range files {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return "", "", err
		}
	}
	return admissionConfig, caPath, nil
}

func TestTheAPIServerAuthenticatesToTheFrontDoorWithItsClientCertificate(t *testing.T) {
	ns := newNamespace(t)
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	s := startServe(t, path, "--client-ca", theCluster.webhookClientCA)
	registerInjection(t, ns+"-inject", ns, s.door, injection{})
	waitForEffect(t, "the injection webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)

	t.Run("a pod is injected through the API server, which presented its client certificate", func(t *testing.T) {
		r := applyJSON(t, pod(ns, "consul", consulAnnotations()))
		wantAdmitted(t, r)
		if got := getPod(t, ns, "consul"); got.Annotations[statusKey] != "injected" {
			t.Fatalf("the pod was not injected: annotations %v\nserve log:\n%s", got.Annotations, s.proc.logTail(20))
		}
	})
	t.Run("a request without the client certificate is refused", func(t *testing.T) {
		body, err := os.ReadFile("../../examples/review-inject.json")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := clientTrusting(t, s.door.caPEM).Post(s.door.url+"/mutate", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(got), "client certificate is required") {
			t.Fatalf("HTTP %d %q; want 401 naming the client certificate", resp.StatusCode, got)
		}
	})
}
