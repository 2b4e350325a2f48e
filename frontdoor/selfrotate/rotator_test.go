package selfrotate

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	testNS     = "dynamic-config"
	testSecret = "dynamic-config-frontdoor-ca"
	caLife     = 90 * 24 * time.Hour
	leafLife   = 7 * 24 * time.Hour
)

type replica struct {
	r       *Rotator
	certPEM []byte
}

func newReplica(t *testing.T, client *fake.Clientset, now *time.Time) *replica {
	t.Helper()
	rep := &replica{}
	r, err := New(Config{
		Client: client, Namespace: testNS, SecretName: testSecret, LeaseName: testSecret, Identity: "a",
		MutatingWebhook: "dynamic-config", ValidatingWebhook: "dynamic-config-env-policy",
		Hosts:      []string{"dynamic-config-frontdoor.dynamic-config.svc"},
		CAValidity: caLife, LeafValidity: leafLife, Interval: time.Minute,
		Use: func(certPEM, keyPEM []byte) error {
			rep.certPEM = certPEM
			_, err := tls.X509KeyPair(certPEM, keyPEM)
			return err
		},
		Now: func() time.Time { return *now },
	})
	if err != nil {
		t.Fatal(err)
	}
	rep.r = r
	return rep
}

func webhookConfigurations() (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration) {
	return &admissionv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "dynamic-config"},
			Webhooks:   []admissionv1.MutatingWebhook{{Name: "inject.dynamic-config.rs"}},
		}, &admissionv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "dynamic-config-env-policy"},
			Webhooks:   []admissionv1.ValidatingWebhook{{Name: "env-policy.dynamic-config.rs"}},
		}
}

func secretData(t *testing.T, client *fake.Clientset) map[string][]byte {
	t.Helper()
	s, err := client.CoreV1().Secrets(testNS).Get(context.Background(), testSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data
}

func bundles(t *testing.T, client *fake.Clientset) [][]byte {
	t.Helper()
	ctx := context.Background()
	m, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "dynamic-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "dynamic-config-env-policy", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{m.Webhooks[0].ClientConfig.CABundle, v.Webhooks[0].ClientConfig.CABundle}
}

// verifies reports whether certPEM verifies against bundle for the host.
func verifies(t *testing.T, certPEM, bundle []byte, now time.Time) bool {
	t.Helper()
	leaf, err := parseCertificates(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	_, err = leaf[0].Verify(x509.VerifyOptions{Roots: pool, DNSName: "dynamic-config-frontdoor.dynamic-config.svc", CurrentTime: now})
	return err == nil
}

func TestTheLeaderMintsTheCARotatesItAfterTwoThirdsAndKeepsTheOldOneTrustedUntilItExpires(t *testing.T) {
	ctx := context.Background()
	m, v := webhookConfigurations()
	client := fake.NewClientset(m, v)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep := newReplica(t, client, &now)

	if err := rep.r.Refresh(ctx); err != nil || rep.r.HasCertificate() {
		t.Fatalf("before the CA exists: Refresh = %v, certificate %v; want no error and no certificate", err, rep.r.HasCertificate())
	}
	if err := rep.r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	first := secretData(t, client)
	for _, b := range bundles(t, client) {
		if !bytes.Equal(b, first[KeyCABundle]) {
			t.Fatalf("a webhook configuration's caBundle is not the Secret's bundle")
		}
	}
	if err := rep.r.Refresh(ctx); err != nil || !verifies(t, rep.certPEM, first[KeyCABundle], now) {
		t.Fatalf("the replica's serving certificate does not verify against the bundle (Refresh: %v)", err)
	}

	// Before two thirds of the CA's life nothing changes, however often it runs.
	now = now.Add(caLife / 2)
	for range 3 {
		if err := rep.r.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(secretData(t, client)[KeyCACert], first[KeyCACert]) {
		t.Fatal("the CA was replaced before two thirds of its lifetime")
	}

	// After two thirds: a new CA; the bundle trusts both; the replica re-signs.
	now = now.Add(caLife/6 + time.Hour)
	if err := rep.r.Refresh(ctx); err != nil { // a certificate of the old CA, current at the rotation
		t.Fatal(err)
	}
	oldLeaf := rep.certPEM
	if err := rep.r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	second := secretData(t, client)
	if bytes.Equal(second[KeyCACert], first[KeyCACert]) {
		t.Fatal("the CA was not rotated after two thirds of its lifetime")
	}
	if got, _ := parseCertificates(second[KeyCABundle]); len(got) != 2 {
		t.Fatalf("the bundle holds %d CAs, want the new and the old", len(got))
	}
	for _, b := range bundles(t, client) {
		if !bytes.Equal(b, second[KeyCABundle]) {
			t.Fatal("the webhook configurations do not carry the rotated bundle")
		}
	}
	if !verifies(t, oldLeaf, second[KeyCABundle], now) {
		t.Fatal("a replica still serving the old CA's certificate is not trusted after the rotation")
	}
	if err := rep.r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(rep.certPEM, oldLeaf) || !verifies(t, rep.certPEM, second[KeyCABundle], now) {
		t.Fatal("the replica did not re-sign its serving certificate with the new CA")
	}

	// Once the old CA has expired it leaves the bundle.
	now = now.Add(caLife/3 + time.Hour)
	if err := rep.r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	for _, b := range append(bundles(t, client), secretData(t, client)[KeyCABundle]) {
		if c, _ := parseCertificates(b); len(c) != 1 {
			t.Fatalf("an expired CA is still trusted: a bundle holds %d certificates", len(c))
		}
	}
}

func TestAReplicaReSignsItsCertificateAfterTwoThirdsOfItsLifetime(t *testing.T) {
	ctx := context.Background()
	m, v := webhookConfigurations()
	client := fake.NewClientset(m, v)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rep := newReplica(t, client, &now)
	if err := rep.r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rep.r.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	first := rep.certPEM
	now = now.Add(leafLife / 2)
	if err := rep.r.Refresh(ctx); err != nil || !bytes.Equal(rep.certPEM, first) {
		t.Fatalf("re-signed at half its lifetime (Refresh: %v)", err)
	}
	now = now.Add(leafLife/6 + time.Minute)
	if err := rep.r.Refresh(ctx); err != nil || bytes.Equal(rep.certPEM, first) {
		t.Fatalf("not re-signed after two thirds of its lifetime (Refresh: %v)", err)
	}
}

func TestAnEmptySecretRenderedByTheChartIsFilledAndAMissingEnvPolicyConfigurationIsSkipped(t *testing.T) {
	ctx := context.Background()
	m, _ := webhookConfigurations()
	empty := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: testSecret, Namespace: testNS}, Type: corev1.SecretTypeOpaque}
	client := fake.NewClientset(m, empty)
	now := time.Now()
	rep := newReplica(t, client, &now)
	if err := rep.r.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if d := secretData(t, client); len(d[KeyCACert]) == 0 || len(d[KeyCAKey]) == 0 || len(d[KeyCABundle]) == 0 {
		t.Fatalf("the chart's empty Secret was not filled: keys %v", len(d))
	}
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no client", Config{}, "self-rotate: no Kubernetes client"},
		{"no hosts", Config{Client: fake.NewClientset(), Namespace: "n", SecretName: "s", LeaseName: "l", Identity: "i"},
			"self-rotate: no host names for the serving certificate (--self-rotate-hosts)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.cfg); err == nil || err.Error() != tc.want {
				t.Fatalf("New: %v, want %q", err, tc.want)
			}
		})
	}
}
