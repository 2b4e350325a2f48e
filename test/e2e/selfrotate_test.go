package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// selfRotateSecret and selfRotateLease are the names the test gives the
// front doors (the chart passes <fullname>-frontdoor-ca).
const (
	selfRotateSecret = "frontdoor-ca"
	selfRotateLease  = "frontdoor-ca"
)

// TestSelfRotateMintsTheCAAndTheAPIServerTrustsIt is tls.mode selfRotate
// against the real API server: two front doors with a kubeconfig and no
// certificate files, and two webhook configurations without a caBundle.
// The first front door to hold the Lease mints the CA Secret and writes
// the bundle into both configurations; the API server then calls both
// replicas (each signs its own serving certificate) over that CA; and the
// second replica does not fight the first: the Secret, the configurations
// and the Lease holder stay as they are.
func TestSelfRotateMintsTheCAAndTheAPIServerTrustsIt(t *testing.T) {
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	d := newDecider(t, "decider", path)
	d.start()
	ns := newNamespace(t)
	mutating, validating := ns+"-self-rotate", ns+"-self-rotate-env-policy"
	portA, portB := freePort(t), freePort(t)
	urlA := "https://127.0.0.1:" + strconv.Itoa(portA)
	urlB := "https://127.0.0.1:" + strconv.Itoa(portB)

	// Both webhooks of the mutating configuration must answer: replica A
	// injects, replica B then sees an injected pod and leaves it; with
	// failurePolicy Fail an untrusted replica refuses the pod.
	registerWithoutCABundle(t, mutating, validating, ns, urlA, urlB)

	start := func(name string, port int) *process {
		return mustStart(t, name, filepath.Join(testDir(t), name+".log"), nil, theCluster.product, "frontdoor",
			"--addr", "127.0.0.1:"+strconv.Itoa(port),
			"--decider-target", d.addr, "--decider-plaintext", "--decider-timeout", "2s",
			"--self-rotate",
			"--kubeconfig", theCluster.kubeconfig,
			"--self-rotate-namespace", ns,
			"--self-rotate-secret", selfRotateSecret,
			"--self-rotate-lease", selfRotateLease,
			"--self-rotate-hosts", "127.0.0.1,localhost",
			"--self-rotate-mutating-webhook", mutating,
			"--self-rotate-validating-webhook", validating,
			"--self-rotate-interval", "1s",
		)
	}

	a := start("frontdoor-a", portA)
	bundle := waitForMintedCA(t, a, ns, selfRotateSecret, mutating, validating)
	waitFrontDoorReady(t, a, frontDoor{url: urlA, caPEM: bundle})

	b := start("frontdoor-b", portB)
	waitFrontDoorReady(t, b, frontDoor{url: urlB, caPEM: bundle})

	t.Run("the API server calls both replicas over the minted CA", func(t *testing.T) {
		waitForEffect(t, "the self-rotated webhooks answer", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
		wantAdmitted(t, applyJSON(t, pod(ns, "consul", seedPods[0].annotations)))
		checkInjected(t, getPod(t, ns, "consul"), seedPods[0].want)
	})

	t.Run("the second replica does not fight the first", func(t *testing.T) {
		before := resourceVersions(t, ns, mutating, validating)
		holder := leaseHolder(t, ns)
		time.Sleep(5 * time.Second) // five check intervals of both replicas
		if after := resourceVersions(t, ns, mutating, validating); after != before {
			t.Errorf("resource versions changed with two replicas running: %s, then %s", before, after)
		}
		if h := leaseHolder(t, ns); h != holder || h == "" {
			t.Errorf("Lease holder %q, then %q; want one stable holder", holder, h)
		}
		if err := wantCABundles(mutating, validating, bundle); err != nil {
			t.Error(err)
		}
		wantAdmitted(t, applyJSON(t, pod(ns, "consul-again", seedPods[0].annotations)))
	})
}

// waitForMintedCA waits until front door p has filled the CA Secret and
// written its bundle into both webhook configurations, and returns the bundle.
func waitForMintedCA(t *testing.T, p *process, ns, secretName, mutating, validating string) []byte {
	t.Helper()
	var secret corev1.Secret
	if err := eventually("the CA Secret is minted", productReadyTimeout, 250*time.Millisecond, aliveCheck(p, func() error {
		r := kubectl(nil, "get", "secret", secretName, "-n", ns, "-o", "json")
		if r.err != nil {
			return r.err
		}
		if err := json.Unmarshal([]byte(r.stdout), &secret); err != nil {
			return err
		}
		for _, k := range []string{"ca.crt", "ca.key", "ca-bundle.crt"} {
			if len(secret.Data[k]) == 0 {
				return fmt.Errorf("the Secret has no %s yet", k)
			}
		}
		return nil
	})); err != nil {
		t.Fatalf("%v\n%s", err, p.logTail(20))
	}
	bundle := secret.Data["ca-bundle.crt"]
	if err := eventually("both webhook configurations carry the bundle", productReadyTimeout, 250*time.Millisecond, func() error {
		return wantCABundles(mutating, validating, bundle)
	}); err != nil {
		t.Fatalf("%v\n%s", err, p.logTail(20))
	}
	return bundle
}

// registerWithoutCABundle registers /mutate of both replicas (two webhooks)
// and /validate of replica A for pods in ns, by URL, with no caBundle.
func registerWithoutCABundle(t *testing.T, mutating, validating, ns, urlA, urlB string) {
	t.Helper()
	webhook := func(name, url string) admissionv1.MutatingWebhook {
		return admissionv1.MutatingWebhook{
			Name:                    name,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr(admissionv1.SideEffectClassNone),
			MatchPolicy:             ptr(admissionv1.Equivalent),
			FailurePolicy:           ptr(admissionv1.Fail),
			TimeoutSeconds:          ptr(int32(5)),
			ReinvocationPolicy:      ptr(admissionv1.NeverReinvocationPolicy),
			ClientConfig:            admissionv1.WebhookClientConfig{URL: &url},
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{
					APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr(admissionv1.NamespacedScope),
				},
			}},
			NamespaceSelector: onlyNamespace(ns),
		}
	}
	applyConfiguration(t, "mutatingwebhookconfiguration", mutating, &admissionv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: mutating},
		Webhooks:   []admissionv1.MutatingWebhook{webhook(injectWebhookName, urlA+"/mutate"), webhook("inject-b.dynamic-config.rs", urlB+"/mutate")},
	})
	validateURL := urlA + "/validate"
	applyConfiguration(t, "validatingwebhookconfiguration", validating, &admissionv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: validating},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name:                    envPolicyWebhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr(admissionv1.SideEffectClassNone),
			MatchPolicy:             ptr(admissionv1.Equivalent),
			FailurePolicy:           ptr(admissionv1.Fail),
			TimeoutSeconds:          ptr(int32(5)),
			ClientConfig:            admissionv1.WebhookClientConfig{URL: &validateURL},
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{
					APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr(admissionv1.NamespacedScope),
				},
			}},
			NamespaceSelector: onlyNamespace(ns),
		}},
	})
}

// wantCABundles checks that every webhook of both configurations trusts bundle.
func wantCABundles(mutating, validating string, bundle []byte) error {
	var m admissionv1.MutatingWebhookConfiguration
	var v admissionv1.ValidatingWebhookConfiguration
	for _, get := range []struct {
		kind, name string
		into       any
	}{{"mutatingwebhookconfiguration", mutating, &m}, {"validatingwebhookconfiguration", validating, &v}} {
		r := kubectl(nil, "get", get.kind, get.name, "-o", "json")
		if r.err != nil {
			return r.err
		}
		if err := json.Unmarshal([]byte(r.stdout), get.into); err != nil {
			return err
		}
	}
	for _, w := range m.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
			return fmt.Errorf("mutating webhook %s: caBundle is not the Secret's ca-bundle.crt", w.Name)
		}
	}
	for _, w := range v.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, bundle) {
			return fmt.Errorf("validating webhook %s: caBundle is not the Secret's ca-bundle.crt", w.Name)
		}
	}
	return nil
}

// resourceVersions lists the resource versions of the Secret and both
// configurations, as one comparable string.
func resourceVersions(t *testing.T, ns, mutating, validating string) string {
	t.Helper()
	out := ""
	for _, args := range [][]string{
		{"get", "secret", selfRotateSecret, "-n", ns},
		{"get", "mutatingwebhookconfiguration", mutating},
		{"get", "validatingwebhookconfiguration", validating},
	} {
		r := mustKubectl(t, nil, append(args, "-o", "jsonpath={.metadata.resourceVersion}")...)
		out += args[1] + "=" + r.stdout + " "
	}
	return out
}

// leaseHolder is the Lease's holder identity.
func leaseHolder(t *testing.T, ns string) string {
	t.Helper()
	var lease coordinationv1.Lease
	r := mustKubectl(t, nil, "get", "lease", selfRotateLease, "-n", ns, "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &lease); err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil {
		return ""
	}
	return *lease.Spec.HolderIdentity
}
