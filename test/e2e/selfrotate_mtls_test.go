package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Secrets of TestSelfRotateSignsTheMTLSPairsAndAdmissionSurvivesACARotation
// (the chart names them <fullname>-decider-tls and <fullname>-frontdoor-client-tls).
const (
	mtlsDeciderSecret = "decider-tls"
	mtlsClientSecret  = "frontdoor-client-tls"
)

// TestSelfRotateSignsTheMTLSPairsAndAdmissionSurvivesACARotation is
// tls.mode selfRotate with nothing rendered but empty Secrets (issue 20):
// the front door's CA leader signs the decider's serving pair and its own
// client pair into them; a stand-in for the kubelet copies them into the
// files both processes read. The CA lives three minutes, so it rotates after
// two (two thirds of its lifetime, back-dated a minute). During the
// hand-over both Secrets trust the old and the new CA while the pairs stay on
// the old one, and admission keeps working; after it both pairs are signed
// by the new CA, and a decider restarted on them (every connection a new
// handshake through the rotated chain) still decides every admission.
func TestSelfRotateSignsTheMTLSPairsAndAdmissionSurvivesACARotation(t *testing.T) {
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	ns := newNamespace(t)
	for _, name := range []string{mtlsDeciderSecret, mtlsClientSecret} { // as the chart renders them
		wantAdmitted(t, applyJSON(t, &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Type:       corev1.SecretTypeOpaque,
		}))
	}
	deciderDir, clientDir := filepath.Join(testDir(t), "decider-tls"), filepath.Join(testDir(t), "client-tls")
	mirrorSecrets(t, ns, map[string]string{mtlsDeciderSecret: deciderDir, mtlsClientSecret: clientDir})

	ports, err := reservePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	deciderAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	deciderMetrics := "127.0.0.1:" + strconv.Itoa(ports[1])
	starts := 0
	startDecider := func() *process {
		t.Helper()
		starts++
		name := fmt.Sprintf("decider-%d", starts)
		p := mustStart(t, name, filepath.Join(testDir(t), name+".log"), nil, theCluster.product, "decider",
			"--addr", deciderAddr, "--metrics-addr", deciderMetrics,
			"--installation", path, "--reload-interval", "1s",
			"--tls-cert", filepath.Join(deciderDir, "tls.crt"), "--tls-key", filepath.Join(deciderDir, "tls.key"),
			"--tls-client-ca", filepath.Join(deciderDir, "ca.crt"), "--tls-wait")
		if err := eventually(name+" /readyz", productReadyTimeout, 100*time.Millisecond, aliveCheck(p, func() error {
			return httpOK(http.DefaultClient, "http://"+deciderMetrics+"/readyz", "")
		})); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// the decider starts before its Secret is filled (--tls-wait)
	decider := startDecider()

	mutating, validating := ns+"-mtls", ns+"-mtls-env-policy"
	url := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	registerWithoutCABundle(t, mutating, validating, ns, url, url)
	frontdoor := mustStart(t, "frontdoor", filepath.Join(testDir(t), "frontdoor.log"), nil, theCluster.product, "frontdoor",
		"--addr", "127.0.0.1:"+strconv.Itoa(ports[2]),
		"--decider-target", deciderAddr, "--decider-timeout", "2s",
		"--decider-ca", filepath.Join(clientDir, "ca.crt"),
		"--decider-client-cert", filepath.Join(clientDir, "tls.crt"),
		"--decider-client-key", filepath.Join(clientDir, "tls.key"),
		"--self-rotate", "--kubeconfig", theCluster.kubeconfig,
		"--self-rotate-namespace", ns,
		"--self-rotate-secret", selfRotateSecret, "--self-rotate-lease", selfRotateLease,
		"--self-rotate-hosts", "127.0.0.1,localhost",
		"--self-rotate-mutating-webhook", mutating, "--self-rotate-validating-webhook", validating,
		"--self-rotate-interval", "1s",
		"--self-rotate-ca-validity", "3m", "--self-rotate-cert-validity", "1h",
		"--self-rotate-decider-secret", mtlsDeciderSecret, "--self-rotate-decider-hosts", "127.0.0.1,localhost",
		"--self-rotate-client-secret", mtlsClientSecret,
		"--self-rotate-handover", "15s",
	)
	bundle := waitForMintedCA(t, frontdoor, ns, selfRotateSecret, mutating, validating)
	waitFrontDoorReady(t, frontdoor, frontDoor{url: url, caPEM: bundle})
	first := secretBytes(t, ns, selfRotateSecret, "ca.crt")

	admitted := 0
	admit := func(what string) {
		t.Helper()
		admitted++
		name := fmt.Sprintf("consul-%d", admitted)
		var last kubectlResult
		// a fresh connection to the decider may take a redial
		if err := eventually(what, webhookEffectTimeout, 250*time.Millisecond, func() error {
			last = applyJSON(t, pod(ns, name, seedPods[0].annotations), "--dry-run=server", "-o", "json")
			if last.err == nil && strings.Contains(last.stdout, `"dynamic-config.rs/status"`) {
				return nil
			}
			return errNoEffectYet
		}); err != nil {
			t.Fatalf("%v\nlast: %s\nfront door:\n%s\ndecider:\n%s", err, last, frontdoor.logTail(15), decider.logTail(15))
		}
		wantAdmitted(t, applyJSON(t, pod(ns, name, seedPods[0].annotations)))
		checkInjected(t, getPod(t, ns, name), seedPods[0].want)
	}

	t.Run("the front door signs both pairs with its CA and admission goes over mTLS", func(t *testing.T) {
		for _, name := range []string{mtlsDeciderSecret, mtlsClientSecret} {
			if err := eventually(name+" is filled", productReadyTimeout, 250*time.Millisecond, func() error {
				return signedBy(secretBytes(t, ns, name, "tls.crt"), first)
			}); err != nil {
				t.Fatal(err)
			}
		}
		admit("admission through the first CA")
		if err := dialDecider(deciderAddr, clientDir, first); err != nil {
			t.Fatalf("mTLS to the decider with the first CA: %v", err)
		}
	})

	var second []byte
	t.Run("during the hand-over both Secrets trust the old and the new CA and the pairs stay on the old one", func(t *testing.T) {
		if err := eventually("the CA rotates", 3*time.Minute, 250*time.Millisecond, aliveCheck(frontdoor, func() error {
			if second = secretBytes(t, ns, selfRotateSecret, "ca.crt"); bytes.Equal(second, first) {
				return errors.New("still the first CA")
			}
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{mtlsDeciderSecret, mtlsClientSecret} {
			if err := eventually(name+" trusts both CAs", 10*time.Second, 100*time.Millisecond, func() error {
				return trustsBoth(secretBytes(t, ns, name, "ca.crt"), first, second)
			}); err != nil {
				t.Fatal(err)
			}
			if err := signedBy(secretBytes(t, ns, name, "tls.crt"), first); err != nil {
				t.Errorf("%s moved to the new CA before the hand-over: %v", name, err)
			}
		}
		admit("admission during the hand-over")
	})

	t.Run("after the hand-over both pairs are the new CA's and a fresh mTLS connection decides", func(t *testing.T) {
		for _, name := range []string{mtlsDeciderSecret, mtlsClientSecret} {
			if err := eventually(name+" moves to the new CA", time.Minute, 250*time.Millisecond, func() error {
				return signedBy(secretBytes(t, ns, name, "tls.crt"), second)
			}); err != nil {
				t.Fatal(err)
			}
		}
		// every connection from here on is a new handshake over the rotated chain
		if err := decider.stop(40 * time.Second); err != nil {
			t.Fatal(err)
		}
		decider = startDecider()
		if err := eventually("the decider serves the new CA's pair", 20*time.Second, 250*time.Millisecond, func() error {
			return dialDecider(deciderAddr, clientDir, second)
		}); err != nil {
			t.Fatal(err)
		}
		admit("admission through the rotated chain")
		if err := dialDecider(deciderAddr, clientDir, first); err == nil {
			t.Error("the decider's certificate still verifies against the first CA alone: the pair did not move")
		}
	})
}

// mirrorSecrets stands in for the kubelet's Secret volumes: every 300 ms it
// writes each Secret's keys into its directory (through a rename, as the
// kubelet swaps its symlink), until the test ends.
func mirrorSecrets(t *testing.T, ns string, dirs map[string]string) {
	t.Helper()
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { cancel(); wg.Wait() })
	names := make([]string, 0, len(dirs))
	for name := range dirs {
		names = append(names, name)
	}
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			r := kubectl(nil, append(append([]string{"get", "secret", "-n", ns}, names...), "-o", "json")...)
			var list corev1.SecretList
			if r.err == nil && json.Unmarshal([]byte(r.stdout), &list) == nil {
				for _, s := range list.Items {
					for key, value := range s.Data {
						file := filepath.Join(dirs[s.Name], key)
						if old, err := os.ReadFile(file); err == nil && bytes.Equal(old, value) {
							continue
						}
						if os.WriteFile(file+".tmp", value, 0o600) == nil {
							_ = os.Rename(file+".tmp", file)
						}
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
}

// secretBytes is one key of a Secret ("" when the Secret or the key is missing).
func secretBytes(t *testing.T, ns, name, key string) []byte {
	t.Helper()
	r := kubectl(nil, "get", "secret", name, "-n", ns, "-o", "json")
	var s corev1.Secret
	if r.err != nil || json.Unmarshal([]byte(r.stdout), &s) != nil {
		return nil
	}
	return s.Data[key]
}

// signedBy says why the first certificate of certPEM is not signed by the CA
// in caPEM (nil when it is).
func signedBy(certPEM, caPEM []byte) error {
	cert, err := firstCertificate(certPEM)
	if err != nil {
		return fmt.Errorf("the pair: %w", err)
	}
	ca, err := firstCertificate(caPEM)
	if err != nil {
		return fmt.Errorf("the CA: %w", err)
	}
	return cert.CheckSignatureFrom(ca)
}

// trustsBoth says why bundle does not hold both CAs (nil when it does).
func trustsBoth(bundle, a, b []byte) error {
	for _, ca := range [][]byte{a, b} {
		c, err := firstCertificate(ca)
		if err != nil {
			return err
		}
		if !bytes.Contains(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})) {
			return fmt.Errorf("the bundle lacks the CA %s (not after %s)", c.Subject.CommonName, c.NotAfter.Format(time.RFC3339))
		}
	}
	return nil
}

func firstCertificate(text []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(text)
	if block == nil {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// dialDecider makes an mTLS handshake with the decider as the front door
// does (its client pair from dir), trusting only the CA in caPEM.
func dialDecider(addr, dir string, caPEM []byte) error {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return errors.New("no CA")
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{
		MinVersion: tls.VersionTLS12, RootCAs: pool, ServerName: "127.0.0.1",
		Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2"},
	})
	if err != nil {
		return err
	}
	defer conn.Close()
	// TLS 1.3: the server checks the client certificate after the client's
	// handshake ends; a refusal arrives as an alert on the first read.
	_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	var one [1]byte
	if _, err := conn.Read(one[:]); err != nil && !isTimeout(err) {
		return fmt.Errorf("the decider refused the client certificate: %w", err)
	}
	return nil
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
