package selfrotate

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const (
	deciderSecret = "dynamic-config-decider-tls"
	clientSecret  = "dynamic-config-frontdoor-client-tls"
	deciderHost   = "dynamic-config-decider.dynamic-config.svc"
	handover      = 5 * time.Minute
)

func newLeafRotator(t *testing.T, client *fake.Clientset, now *time.Time) *Rotator {
	t.Helper()
	r, err := New(Config{
		Client: client, Namespace: testNS, SecretName: testSecret, LeaseName: testSecret, Identity: "a",
		MutatingWebhook: "dynamic-config", ValidatingWebhook: "dynamic-config-env-policy",
		Hosts:      []string{"dynamic-config-frontdoor.dynamic-config.svc"},
		CAValidity: caLife, LeafValidity: leafLife, Interval: time.Minute,
		Leaves: []Leaf{
			{Secret: deciderSecret, Hosts: []string{deciderHost}},
			{Secret: clientSecret, CommonName: "dynamic-config-frontdoor-client"},
		},
		Handover: handover,
		Use:      func([]byte, []byte) error { return nil },
		Now:      func() time.Time { return *now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func leafData(t *testing.T, client *fake.Clientset, name string) map[string][]byte {
	t.Helper()
	s, err := client.CoreV1().Secrets(testNS).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data
}

// mtlsWorks reports whether the decider's serving pair (verified with the
// front door's ca.crt) and the front door's client pair (verified with the
// decider's ca.crt) both verify at now: the two ends of the connection, each
// with the bundle it has mounted.
func mtlsWorks(t *testing.T, decider, client map[string][]byte, now time.Time) bool {
	t.Helper()
	verify := func(pair map[string][]byte, bundle []byte, usage x509.ExtKeyUsage, host string) bool {
		kp, err := tls.X509KeyPair(pair[KeyTLSCert], pair[KeyTLSKey])
		if err != nil {
			return false
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(bundle)
		_, err = kp.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err == nil
	}
	return verify(decider, client[KeyTLSCA], x509.ExtKeyUsageServerAuth, deciderHost) &&
		verify(client, decider[KeyTLSCA], x509.ExtKeyUsageClientAuth, "")
}

func TestTheLeaderKeepsTheMTLSPairsOnTheRotatingCAAndMovesThemOnlyAfterTheHandOver(t *testing.T) {
	ctx := context.Background()
	m, v := webhookConfigurations()
	// the chart renders both leaf Secrets empty; neither exists is covered by the CA test's create path
	empty := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS}, Type: corev1.SecretTypeOpaque}
	}
	client := fake.NewClientset(m, v, empty(deciderSecret), empty(clientSecret))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newLeafRotator(t, client, &now)

	// The first pass mints the CA and fills both Secrets at once: nothing to hand over.
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	caBundle := secretData(t, client)[KeyCABundle]
	d1, c1 := leafData(t, client, deciderSecret), leafData(t, client, clientSecret)
	if !bytes.Equal(d1[KeyTLSCA], caBundle) || !bytes.Equal(c1[KeyTLSCA], caBundle) {
		t.Fatal("a leaf Secret's ca.crt is not the CA Secret's bundle")
	}
	if !mtlsWorks(t, d1, c1, now) {
		t.Fatal("the first pairs do not verify against the bundles")
	}

	// Before two thirds of the pairs' life nothing is re-signed.
	now = now.Add(leafLife / 2)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if d := leafData(t, client, deciderSecret); !bytes.Equal(d[KeyTLSCert], d1[KeyTLSCert]) {
		t.Fatal("the decider's pair was re-signed at half its lifetime")
	}

	// After two thirds they are (the CA is unchanged: no hand-over to wait for).
	now = now.Add(leafLife/6 + time.Minute)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	d2, c2 := leafData(t, client, deciderSecret), leafData(t, client, clientSecret)
	if bytes.Equal(d2[KeyTLSCert], d1[KeyTLSCert]) || bytes.Equal(c2[KeyTLSCert], c1[KeyTLSCert]) || !mtlsWorks(t, d2, c2, now) {
		t.Fatal("the pairs were not re-signed after two thirds of their lifetime")
	}

	// The CA rotates: the bundles gain the new CA at once, the pairs stay on the old one.
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now = start.Add(caLife*2/3 - time.Hour) // the leader's passes kept the pairs current until here
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	d2, c2 = leafData(t, client, deciderSecret), leafData(t, client, clientSecret)
	now = start.Add(caLife*2/3 + time.Hour)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	rotated := secretData(t, client)
	d3, c3 := leafData(t, client, deciderSecret), leafData(t, client, clientSecret)
	if cas, _ := parseCertificates(d3[KeyTLSCA]); len(cas) != 2 || !bytes.Equal(d3[KeyTLSCA], rotated[KeyCABundle]) {
		t.Fatalf("the decider's ca.crt holds %d CAs, want the new and the old (the CA Secret's bundle)", len(cas))
	}
	newCA, err := ParseAuthority(rotated[KeyCACert], rotated[KeyCAKey])
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string]map[string][]byte{"decider": d3, "client": c3} {
		kp, _ := tls.X509KeyPair(pair[KeyTLSCert], pair[KeyTLSKey])
		if kp.Leaf.CheckSignatureFrom(newCA.Cert) == nil {
			t.Fatalf("the %s pair moved to the new CA before the hand-over", name)
		}
	}
	if !mtlsWorks(t, d3, c3, now) {
		t.Fatal("mTLS breaks right after the rotation")
	}
	// a peer that has not seen the new bundle yet still verifies the pairs in use
	if !mtlsWorks(t, map[string][]byte{KeyTLSCert: d3[KeyTLSCert], KeyTLSKey: d3[KeyTLSKey], KeyTLSCA: d2[KeyTLSCA]},
		map[string][]byte{KeyTLSCert: c3[KeyTLSCert], KeyTLSKey: c3[KeyTLSKey], KeyTLSCA: c2[KeyTLSCA]}, now) {
		t.Fatal("the pairs in use during the hand-over are not trusted by the bundles mounted before it")
	}

	// Within the hand-over nothing moves; after it both pairs are signed by the new CA.
	now = now.Add(handover - time.Minute)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if d := leafData(t, client, deciderSecret); !bytes.Equal(d[KeyTLSCert], d3[KeyTLSCert]) {
		t.Fatal("the decider's pair moved within the hand-over")
	}
	now = now.Add(2 * time.Minute)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	d4, c4 := leafData(t, client, deciderSecret), leafData(t, client, clientSecret)
	for name, pair := range map[string]map[string][]byte{"decider": d4, "client": c4} {
		kp, err := tls.X509KeyPair(pair[KeyTLSCert], pair[KeyTLSKey])
		if err != nil || kp.Leaf.CheckSignatureFrom(newCA.Cert) != nil {
			t.Fatalf("the %s pair is not signed by the new CA after the hand-over (%v)", name, err)
		}
	}
	if !mtlsWorks(t, d4, c4, now) {
		t.Fatal("mTLS breaks after the hand-over")
	}
}

func TestAPairThatNoLongerVerifiesIsReSignedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(map[string][]byte)
	}{
		{"a key that does not belong to the certificate", func(d map[string][]byte) { d[KeyTLSKey] = leafKeyOf(t) }},
		{"no certificate", func(d map[string][]byte) { delete(d, KeyTLSCert) }},
		{"a certificate of a CA the bundle does not hold", func(d map[string][]byte) {
			other, err := NewAuthority("other", time.Now(), caLife)
			if err != nil {
				t.Fatal(err)
			}
			d[KeyTLSCert], d[KeyTLSKey], _ = other.Issue([]string{deciderHost}, time.Now(), leafLife)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			m, v := webhookConfigurations()
			client := fake.NewClientset(m, v)
			now := time.Now()
			r := newLeafRotator(t, client, &now)
			if err := r.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			s, err := client.CoreV1().Secrets(testNS).Get(ctx, deciderSecret, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tc.damage(s.Data)
			if _, err := client.CoreV1().Secrets(testNS).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := r.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if !mtlsWorks(t, leafData(t, client, deciderSecret), leafData(t, client, clientSecret), now) {
				t.Fatal("the broken pair was not re-signed in the next pass")
			}
		})
	}
}

// leafKeyOf is the key of a pair that belongs to no certificate in play.
func leafKeyOf(t *testing.T) []byte {
	t.Helper()
	ca, err := NewAuthority("stray", time.Now(), caLife)
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := ca.Issue([]string{deciderHost}, time.Now(), leafLife)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestASlowPassDoesNotUseUpTheHandOver: the hand-over is counted from the
// write of the new bundle, not from the start of the pass that wrote it (an
// API server slow for longer than the hand-over once made the next pass move
// the pairs at once).
func TestASlowPassDoesNotUseUpTheHandOver(t *testing.T) {
	ctx := context.Background()
	m, v := webhookConfigurations()
	client := fake.NewClientset(m, v)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	r := newLeafRotator(t, client, &now)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	now = start.Add(caLife*2/3 - time.Hour)
	if err := r.Reconcile(ctx); err != nil { // pairs current until the rotation
		t.Fatal(err)
	}
	before := leafData(t, client, deciderSecret)[KeyTLSCert]

	// The rotation pass: writing the CA Secret takes longer than the hand-over.
	slow := true
	client.PrependReactor("update", "secrets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if u, ok := action.(k8stesting.UpdateAction); ok && slow && u.GetObject().(*corev1.Secret).Name == testSecret {
			now = now.Add(handover + time.Minute)
		}
		return false, nil, nil
	})
	now = start.Add(caLife*2/3 + time.Hour)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	slow = false
	now = now.Add(time.Second) // the next tick, right after the slow pass
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := leafData(t, client, deciderSecret)[KeyTLSCert]; !bytes.Equal(got, before) {
		t.Fatal("the pass after a slow rotation moved the pair without a hand-over")
	}
	now = now.Add(handover)
	if err := r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got := leafData(t, client, deciderSecret)[KeyTLSCert]; bytes.Equal(got, before) {
		t.Fatal("the pair did not move after the hand-over")
	}
}
