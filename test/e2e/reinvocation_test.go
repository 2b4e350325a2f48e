package e2e

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// otherSidecar is the container the second, unrelated mutating webhook adds.
const otherSidecar = "other-sidecar"

// Annotations that make the sidecar webhook deny (with harnessReason) or
// warn instead of patching; the harness's self-test uses them.
const (
	harnessDeny   = "e2e.example/deny"
	harnessWarn   = "e2e.example/warn"
	harnessReason = "E2EHarnessDenied"
)

// sidecarWebhook is a tiny mutating webhook in the test process that appends
// one container to every pod that lacks it — another vendor's injector.
type sidecarWebhook struct {
	door       frontDoor
	calls      atomic.Int64
	onlyAllows bool // answer every pod with a plain allow (a no-op webhook)
}

func startSidecarWebhook(t *testing.T) *sidecarWebhook {
	t.Helper()
	pair := newServingPair(t, filepath.Join(testDir(t), "sidecar-webhook-tls"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &sidecarWebhook{door: frontDoor{url: "https://" + l.Addr().String(), caPEM: pair.caPEM}}
	srv := &http.Server{
		Handler:           http.HandlerFunc(w.serve),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair.tlsCertificate(t)}, MinVersion: tls.VersionTLS12},
	}
	go func() {
		if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("sidecar webhook: %v", err)
		}
	}()
	t.Cleanup(func() { srv.Close() })
	return w
}

func (w *sidecarWebhook) serve(rw http.ResponseWriter, r *http.Request) {
	w.calls.Add(1)
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var pod corev1.Pod
	err := json.Unmarshal(review.Request.Object.Raw, &pod)
	switch {
	case err != nil || w.onlyAllows:
	case pod.Annotations[harnessDeny] != "":
		// Lets the harness's self-test see how kubectl shows a denial.
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: 400, Reason: harnessReason, Message: pod.Annotations[harnessDeny]}
	case pod.Annotations[harnessWarn] != "":
		resp.Warnings = []string{pod.Annotations[harnessWarn]}
	case !slices.Contains(containerNames(pod.Spec.Containers), otherSidecar):
		patch, _ := json.Marshal([]map[string]any{{
			"op": "add", "path": "/spec/containers/-",
			"value": map[string]any{"name": otherSidecar, "image": "registry.example/other/sidecar:2.0"},
		}})
		resp.Patch = patch
		resp.PatchType = ptr(admissionv1.PatchTypeJSONPatch)
		resp.AuditAnnotations = map[string]string{"added": otherSidecar}
	}
	review.Response = resp
	review.Request = nil
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(review)
}

// register routes pod creation in ns to the sidecar webhook. Its
// configuration name sorts after the injection's, so it runs second.
func (w *sidecarWebhook) register(t *testing.T, configName, ns string) {
	t.Helper()
	w.registerAs(t, configName, "sidecar.e2e.example", ns, admregv1.NeverReinvocationPolicy)
}

// registerAs registers the webhook under a configuration and webhook name
// with a reinvocation policy.
func (w *sidecarWebhook) registerAs(t *testing.T, configName, webhookName, ns string, reinvocation admregv1.ReinvocationPolicyType) {
	t.Helper()
	url := w.door.url + "/add"
	cfg := &admregv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: configName},
		Webhooks: []admregv1.MutatingWebhook{{
			Name:                    webhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr(admregv1.SideEffectClassNone),
			FailurePolicy:           ptr(admregv1.Fail),
			TimeoutSeconds:          ptr(int32(5)),
			ReinvocationPolicy:      ptr(reinvocation),
			ClientConfig:            admregv1.WebhookClientConfig{URL: &url, CABundle: w.door.caPEM},
			Rules: []admregv1.RuleWithOperations{{
				Operations: []admregv1.OperationType{admregv1.Create},
				Rule: admregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr(admregv1.NamespacedScope)},
			}},
			NamespaceSelector: onlyNamespace(ns),
		}},
	}
	applyConfiguration(t, "mutatingwebhookconfiguration", configName, cfg)
}

func TestReinvocationAfterAnotherWebhookAddsAContainerKeepsExactlyOneAgent(t *testing.T) {
	// "<ns>-a-inject" sorts before "<ns>-b-sidecar": the API server calls the
	// injection first, then the sidecar webhook, then — IfNeeded — the
	// injection again on the changed pod.
	ns := newNamespace(t)
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t))
	s := startServe(t, path)
	registerInjection(t, ns+"-a-inject", ns, s.door, injection{reinvocation: admregv1.IfNeededReinvocationPolicy})
	waitForEffect(t, "the injection webhook takes effect", pod(ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
	other := startSidecarWebhook(t)
	other.register(t, ns+"-b-sidecar", ns)
	waitForEffect(t, "the sidecar webhook takes effect", pod(ns, "sidecar-probe", nil), func(r kubectlResult) bool {
		return r.err == nil && json.Valid([]byte(r.stdout)) && containsContainer(r.stdout, otherSidecar)
	})

	injectCalls := func() float64 {
		return apiserverMetric(t, "apiserver_admission_webhook_admission_duration_seconds_count",
			`name="`+injectWebhookName+`"`, `operation="CREATE"`)
	}
	before := injectCalls()
	sidecarBefore := other.calls.Load()
	wantAdmitted(t, applyJSON(t, pod(ns, "consul", consulAnnotations())))
	stored := getPod(t, ns, "consul")

	if n := countAgents(stored); n != 1 {
		t.Errorf("the stored pod has %d agent containers (%q); want exactly one", n, containerNames(stored.Spec.Containers))
	}
	if got, want := containerNames(stored.Spec.Containers), []string{"app", agentName, otherSidecar}; !slices.Equal(got, want) {
		t.Errorf("containers = %q; want %q", got, want)
	}
	if got := stored.Annotations[statusKey]; got != "injected" {
		t.Errorf("status mark = %q; want \"injected\"", got)
	}
	if got := other.calls.Load() - sidecarBefore; got != 1 {
		t.Errorf("the sidecar webhook was called %d times for the pod; want 1", got)
	}
	// The injection must have been called twice for this pod: once, then
	// reinvoked after the sidecar was added (otherwise this test proves
	// nothing about reinvocation).
	if got := injectCalls() - before; got != 2 {
		t.Errorf("the API server called %s %v times for the pod; want 2 (the call and the reinvocation)", injectWebhookName, got)
	}
}

// containsContainer reports whether a pod in JSON has a container named name.
func containsContainer(podJSON, name string) bool {
	var p corev1.Pod
	if err := json.Unmarshal([]byte(podJSON), &p); err != nil {
		return false
	}
	return slices.Contains(containerNames(p.Spec.Containers), name)
}
