package e2e

import (
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The webhook names the chart registers (07 §6.3, 05 §7).
const (
	injectWebhookName    = "inject.dynamic-config.rs"
	envPolicyWebhookName = "env-policy.dynamic-config.rs"
)

// onlyNamespace selects the one namespace a test owns, so that tests sharing
// the API server never route each other's objects.
func onlyNamespace(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{ns},
	}}}
}

// injection describes one MutatingWebhookConfiguration for the front door.
type injection struct {
	reinvocation admissionv1.ReinvocationPolicyType // default Never, as the chart
	// matchConditions, when set, filter as the chart's (chartMatchConditions).
	matchConditions []admissionv1.MatchCondition
	// failurePolicy is Fail when empty (Ignore lets a pod through without
	// its agent when the front door does not answer).
	failurePolicy admissionv1.FailurePolicyType
}

// registerInjection registers door's /mutate for pods created in ns, as the
// chart renders it (07 §6.3) but by URL and, unless opts say otherwise, with
// failurePolicy Fail — a front door that does not answer fails the test
// instead of silently admitting an uninjected pod. The configuration is deleted at cleanup.
func registerInjection(t *testing.T, configName, ns string, door frontDoor, opts injection) {
	t.Helper()
	reinvocation := opts.reinvocation
	if reinvocation == "" {
		reinvocation = admissionv1.NeverReinvocationPolicy
	}
	failurePolicy := opts.failurePolicy
	if failurePolicy == "" {
		failurePolicy = admissionv1.Fail
	}
	url := door.url + "/mutate"
	cfg := &admissionv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: configName},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name:                    injectWebhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr(admissionv1.SideEffectClassNone),
			MatchPolicy:             ptr(admissionv1.Equivalent),
			FailurePolicy:           ptr(failurePolicy),
			TimeoutSeconds:          ptr(int32(5)),
			ReinvocationPolicy:      ptr(reinvocation),
			ClientConfig:            admissionv1.WebhookClientConfig{URL: &url, CABundle: door.caPEM},
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{
					APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr(admissionv1.NamespacedScope),
				},
			}},
			NamespaceSelector: onlyNamespace(ns),
			MatchConditions:   opts.matchConditions,
		}},
	}
	applyConfiguration(t, "mutatingwebhookconfiguration", configName, cfg)
}

// registerEnvPolicy registers door's /validate for pods and workloads in ns,
// as the chart renders it (05 §7) but by URL.
func registerEnvPolicy(t *testing.T, configName, ns string, door frontDoor) {
	t.Helper()
	url := door.url + "/validate"
	ops := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	rule := func(group, version string, resources ...string) admissionv1.RuleWithOperations {
		return admissionv1.RuleWithOperations{Operations: ops, Rule: admissionv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{version}, Resources: resources,
			Scope: ptr(admissionv1.NamespacedScope),
		}}
	}
	cfg := &admissionv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: configName},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name:                    envPolicyWebhookName,
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr(admissionv1.SideEffectClassNone),
			MatchPolicy:             ptr(admissionv1.Equivalent),
			FailurePolicy:           ptr(admissionv1.Fail),
			TimeoutSeconds:          ptr(int32(5)),
			ClientConfig:            admissionv1.WebhookClientConfig{URL: &url, CABundle: door.caPEM},
			Rules: []admissionv1.RuleWithOperations{
				rule("", "v1", "pods", "pods/ephemeralcontainers"),
				rule("apps", "v1", "deployments", "statefulsets", "daemonsets", "replicasets"),
				rule("", "v1", "replicationcontrollers"),
				rule("batch", "v1", "jobs", "cronjobs"),
			},
			NamespaceSelector: onlyNamespace(ns),
		}},
	}
	applyConfiguration(t, "validatingwebhookconfiguration", configName, cfg)
}

// applyConfiguration creates a webhook configuration and deletes it at
// cleanup (before the processes it points at are stopped: cleanups run last
// registered first).
func applyConfiguration(t *testing.T, kind, name string, obj any) {
	t.Helper()
	wantAdmitted(t, applyJSON(t, obj))
	t.Cleanup(func() {
		if r := kubectl(nil, "delete", kind, name, "--ignore-not-found", "--wait=false"); r.err != nil {
			t.Logf("%s", r)
		}
	})
}

// waitForEffect dry-runs probe until effect says the webhook answered (a new
// webhook configuration takes a moment to be used). The dry run stores
// nothing, so the probe leaves no trace.
func waitForEffect(t *testing.T, what string, probe any, effect func(kubectlResult) bool) {
	t.Helper()
	var last kubectlResult
	err := eventually(what, webhookEffectTimeout, 200*time.Millisecond, func() error {
		last = applyJSON(t, probe, "--dry-run=server", "-o", "json")
		if effect(last) {
			return nil
		}
		return errNoEffectYet
	})
	if err != nil {
		t.Fatalf("%v\nlast probe: %s", err, last)
	}
}

type noEffectError struct{}

func (noEffectError) Error() string { return "the webhook has not answered the probe yet" }

var errNoEffectYet = noEffectError{}

// injectedOrRefused is the effect of the injection webhook on a pod that
// asks for injection: it comes back with the status mark, or is refused.
func injectedOrRefused(r kubectlResult) bool {
	return r.err != nil || strings.Contains(r.stdout, `"dynamic-config.rs/status"`)
}

// refusedOrWarned is the effect of the env-policy webhook on a pod that
// violates a rule.
func refusedOrWarned(r kubectlResult) bool {
	return r.err != nil || len(warningLines(r)) > 0
}

func ptr[T any](v T) *T { return &v }
