package e2e

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestAPodWithoutAnnotationsIsStoredUnchanged(t *testing.T) {
	site := newInjectionSite(t, seedInstallation(t), injection{})
	r := applyJSON(t, pod(site.ns, "plain", map[string]string{"team": "payments"}))
	wantAdmitted(t, r)
	stored := getPod(t, site.ns, "plain")
	if got := containerNames(stored.Spec.Containers); len(got) != 1 || got[0] != "app" {
		t.Errorf("containers = %q; want [app]", got)
	}
	if _, ok := stored.Annotations[statusKey]; ok {
		t.Errorf("the pod carries %s; a pod that did not ask must not be touched", statusKey)
	}
	if len(stored.Spec.Volumes) != 0 || len(stored.Spec.InitContainers) != 0 {
		t.Errorf("volumes %v / initContainers %v were added to a pod that did not ask", stored.Spec.Volumes, stored.Spec.InitContainers)
	}
	// 03 §5: an answer given without asking the decider carries no revision.
	if rev, ok := auditAnnotations(t, "pods", site.ns, "plain")[injectWebhookName+"/revision"]; ok {
		t.Errorf("audit annotation %s/revision = %q on a pod the decider was not asked about", injectWebhookName, rev)
	}
}

func TestARefusedPodShowsOurReasonAndMessageInKubectlsError(t *testing.T) {
	site := newInjectionSite(t, seedInstallation(t), injection{})
	cases := []struct {
		name      string
		overrides map[string]string
		reason    string
		message   string
	}{
		{
			name:      "an endpoint that differs from the pinned consul endpoint is refused as pinned",
			overrides: map[string]string{"dynamic-config.rs/endpoint": "http://elsewhere.example:8500"},
			reason:    "DynamicConfigPinned",
			message: `dynamic-config.rs/endpoint is "http://elsewhere.example:8500", but the installation pins it to "http://consul.infra.svc:8500"` +
				` — match it or drop the annotation; the installer can reopen it with a trailing "?" or overridable "true"`,
		},
		{
			name:      "a watch-seconds that is not a number is refused as malformed",
			overrides: map[string]string{"dynamic-config.rs/watch-seconds": "soon"},
			reason:    "DynamicConfigMalformed",
			message:   `dynamic-config.rs/watch-seconds is "soon": whole seconds`,
		},
		{
			name:      "a status mark the pod set itself is refused as malformed",
			overrides: map[string]string{statusKey: "done"},
			reason:    "DynamicConfigMalformed",
			message:   `dynamic-config.rs/status is "done", and it is not a pod's to set: the webhook writes it — drop the annotation`,
		},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "refused-" + string(rune('a'+i))
			r := applyJSON(t, pod(site.ns, name, withAnnotations(consulAnnotations(), c.overrides)))
			wantRefused(t, r, c.reason, `admission webhook "`+injectWebhookName+`" denied the request: `+c.message)
			if podExists(t, site.ns, name) {
				t.Errorf("the refused pod %s was stored", name)
			}
		})
	}
}

func TestAServerSideDryRunReturnsTheInjectedPodAndStoresNothing(t *testing.T) {
	site := newInjectionSite(t, seedInstallation(t), injection{})
	consul := seedPods[0]
	r := applyJSON(t, pod(site.ns, "dry-run", consul.annotations), "--dry-run=server", "-o", "json")
	wantAdmitted(t, r)
	checkInjected(t, decodePod(t, r), consul.want)
	if podExists(t, site.ns, "dry-run") {
		t.Errorf("kubectl apply --dry-run=server stored the pod")
	}
}

func TestReapplyingAStoredInjectedPodAddsNoSecondAgent(t *testing.T) {
	// `kubectl get pod -o json | kubectl apply` of an injected pod under a
	// new name: the copy carries the status mark and the agent, so the
	// injection skips it (01 §6, 03 §8) instead of adding a second agent.
	site := newInjectionSite(t, seedInstallation(t), injection{})
	consul := seedPods[0]
	wantAdmitted(t, applyJSON(t, pod(site.ns, "original", consul.annotations)))
	copied := getPod(t, site.ns, "original")
	copied.ObjectMeta = metav1.ObjectMeta{Name: "copy", Namespace: site.ns, Annotations: copied.Annotations}
	delete(copied.Annotations, "kubectl.kubernetes.io/last-applied-configuration")
	copied.Status = corev1.PodStatus{}
	r := applyJSON(t, copied)
	wantAdmitted(t, r)
	equalLines(t, "kubectl warnings", warningLines(r), nil)
	checkInjected(t, getPod(t, site.ns, "copy"), consul.want)
}
