package e2e

import (
	"encoding/json"
	"slices"
	"testing"

	admregv1 "k8s.io/api/admissionregistration/v1"
)

// TestTheHarnessRoutesPodsThroughAWebhookRegisteredByURL proves the harness
// without the product: the API server calls a webhook in the test process,
// registered by URL with its own CA, only for the test's namespace, and the
// stored pod shows the webhook's patch. When this fails, every other
// failure of the run is the harness's, not the product's.
func TestTheHarnessRoutesPodsThroughAWebhookRegisteredByURL(t *testing.T) {
	ns, elsewhere := newNamespace(t), newNamespace(t)
	w := startSidecarWebhook(t)
	w.register(t, ns+"-b-sidecar", ns)
	waitForEffect(t, "the test webhook takes effect", pod(ns, "probe", nil), func(r kubectlResult) bool {
		return r.err == nil && json.Valid([]byte(r.stdout)) && containsContainer(r.stdout, otherSidecar)
	})

	t.Run("a pod in the registered namespace is stored with the webhook's patch", func(t *testing.T) {
		wantAdmitted(t, applyJSON(t, pod(ns, "routed", nil)))
		if got := containerNames(getPod(t, ns, "routed").Spec.Containers); !slices.Equal(got, []string{"app", otherSidecar}) {
			t.Errorf("containers = %q; want [app %s]", got, otherSidecar)
		}
	})
	t.Run("the audit log carries the webhook's audit annotation, prefixed with its name", func(t *testing.T) {
		got := auditAnnotations(t, "pods", ns, "routed")
		if got["sidecar.e2e.example/added"] != otherSidecar {
			t.Errorf("audit annotations = %v; want sidecar.e2e.example/added=%s", got, otherSidecar)
		}
	})
	t.Run("a pod in another namespace is not routed to the webhook", func(t *testing.T) {
		calls := w.calls.Load()
		wantAdmitted(t, applyJSON(t, pod(elsewhere, "unrouted", nil)))
		if got := containerNames(getPod(t, elsewhere, "unrouted").Spec.Containers); !slices.Equal(got, []string{"app"}) {
			t.Errorf("containers = %q; want [app]", got)
		}
		if w.calls.Load() != calls {
			t.Errorf("the webhook was called for a namespace it is not registered for")
		}
	})
	t.Run("kubectl shows a webhook's denial with its reason and message", func(t *testing.T) {
		msg := `the pod is "wrong" — on purpose`
		r := applyJSON(t, pod(ns, "denied", map[string]string{harnessDeny: msg}))
		wantRefused(t, r, harnessReason, `admission webhook "sidecar.e2e.example" denied the request: `+msg)
		if podExists(t, ns, "denied") {
			t.Errorf("the denied pod was stored")
		}
	})
	t.Run("kubectl shows a webhook's warning as a Warning line", func(t *testing.T) {
		msg := `this pod is "odd" — on purpose`
		r := applyJSON(t, pod(ns, "warned", map[string]string{harnessWarn: msg}))
		wantAdmitted(t, r)
		equalLines(t, "kubectl warnings", warningLines(r), []string{msg})
	})
	t.Run("the API server reinvokes an IfNeeded webhook after a later one patched the pod, and counts both calls", func(t *testing.T) {
		// The reinvocation scenario relies on exactly this: a webhook whose
		// configuration sorts first is called again, and the apiserver
		// metric counts every call.
		first := startSidecarWebhook(t)
		first.onlyAllows = true
		first.registerAs(t, ns+"-a-first", "first.e2e.example", ns, admregv1.IfNeededReinvocationPolicy)
		waitForEffect(t, "the first webhook takes effect", pod(ns, "probe-first", nil), func(kubectlResult) bool {
			return first.calls.Load() > 0
		})
		metric := func() float64 {
			return apiserverMetric(t, "apiserver_admission_webhook_admission_duration_seconds_count", `name="first.e2e.example"`, `operation="CREATE"`)
		}
		calls, counted := first.calls.Load(), metric()
		wantAdmitted(t, applyJSON(t, pod(ns, "reinvoked", nil)))
		if got := first.calls.Load() - calls; got != 2 {
			t.Errorf("the first webhook was called %d times; want 2 (the call and the reinvocation)", got)
		}
		if got := metric() - counted; got != 2 {
			t.Errorf("the apiserver metric counted %v calls of the first webhook; want 2", got)
		}
	})
}
