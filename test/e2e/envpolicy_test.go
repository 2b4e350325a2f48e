package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// envPolicyDocument is appended to the seed installation: rule 0 forbids
// HTTPS_PROXY (enforce), rule 1 warns about DEBUG_DUMP, rule 2 only audits
// LEGACY_FLAG.
const envPolicyDocument = `
envPolicy:
  targets: [pods, workloads]
  rules:
    - reject: anyIn
      environmentVariables:
        - name: HTTPS_PROXY
    - reject: anyIn
      environmentVariables:
        - name: DEBUG_DUMP
      mode: warn
    - reject: anyIn
      environmentVariables:
        - name: LEGACY_FLAG
      mode: audit
`

// deployment builds a one-replica Deployment whose template sets env.
func deployment(ns, name string, env ...corev1.EnvVar) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{}
	d.APIVersion, d.Kind = "apps/v1", "Deployment"
	d.Name, d.Namespace = name, ns
	d.Spec.Replicas = ptr(int32(1))
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	d.Spec.Template.Labels = labels
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Image: appImage, Env: env}}
	return d
}

func exists(t *testing.T, kind, ns, name string) bool {
	t.Helper()
	r := mustKubectl(t, nil, "get", kind, name, "-n", ns, "-o", "name", "--ignore-not-found")
	return strings.TrimSpace(r.stdout) != ""
}

func TestTheEnvPolicyRefusesEnforcedVariablesAndWarnsInWarnMode(t *testing.T) {
	ns := newNamespace(t)
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t)+envPolicyDocument)
	s := startServe(t, path)
	registerEnvPolicy(t, ns+"-env-policy", ns, s.door)
	proxy := corev1.EnvVar{Name: "HTTPS_PROXY", Value: "http://proxy.example:3128"}
	dump := corev1.EnvVar{Name: "DEBUG_DUMP", Value: "1"}
	waitForEffect(t, "the env-policy webhook takes effect", pod(ns, "webhook-probe", nil, proxy), refusedOrWarned)

	t.Run("a Deployment that sets an enforced variable is refused with the policy message", func(t *testing.T) {
		r := applyJSON(t, deployment(ns, "proxied", proxy))
		wantRefused(t, r, "DynamicConfigEnvPolicy",
			`admission webhook "`+envPolicyWebhookName+`" denied the request: `+
				`envPolicy.rules[0] (anyIn) rejects this Deployment in namespace "`+ns+`": it sets HTTPS_PROXY, which this rule forbids`)
		if exists(t, "deployment", ns, "proxied") {
			t.Errorf("the refused Deployment was stored")
		}
	})
	t.Run("a Pod that sets an enforced variable is refused with the policy message", func(t *testing.T) {
		r := applyJSON(t, pod(ns, "proxied", nil, proxy))
		wantRefused(t, r, "DynamicConfigEnvPolicy",
			`admission webhook "`+envPolicyWebhookName+`" denied the request: `+
				`envPolicy.rules[0] (anyIn) rejects this Pod in namespace "`+ns+`": it sets HTTPS_PROXY, which this rule forbids`)
		if podExists(t, ns, "proxied") {
			t.Errorf("the refused Pod was stored")
		}
	})
	t.Run("the policy message never shows the variable's value", func(t *testing.T) {
		r := applyJSON(t, pod(ns, "proxied-2", nil, proxy))
		wantRefused(t, r, "DynamicConfigEnvPolicy")
		if strings.Contains(r.stderr, proxy.Value) {
			t.Errorf("kubectl's error shows the value %q\n%s", proxy.Value, r)
		}
	})
	t.Run("a Pod that sets a warn-mode variable is admitted with kubectl's Warning line", func(t *testing.T) {
		r := applyJSON(t, pod(ns, "dumping", nil, dump))
		wantAdmitted(t, r)
		want := `envPolicy.rules[1] (anyIn, warn) would reject this Pod in namespace "` + ns + `": it sets DEBUG_DUMP, which this rule forbids`
		equalLines(t, "kubectl warnings", warningLines(r), []string{want})
		if !podExists(t, ns, "dumping") {
			t.Errorf("the warned Pod was not stored")
		}
	})
	t.Run("a Deployment that sets a warn-mode variable is admitted with kubectl's Warning line", func(t *testing.T) {
		r := applyJSON(t, deployment(ns, "dumping", dump))
		wantAdmitted(t, r)
		want := `envPolicy.rules[1] (anyIn, warn) would reject this Deployment in namespace "` + ns + `": it sets DEBUG_DUMP, which this rule forbids`
		equalLines(t, "kubectl warnings", warningLines(r), []string{want})
	})
	t.Run("a Pod that sets an audit-mode variable is admitted silently, with the finding in the audit log", func(t *testing.T) {
		r := applyJSON(t, pod(ns, "legacy", nil, corev1.EnvVar{Name: "LEGACY_FLAG", Value: "on"}))
		wantAdmitted(t, r)
		equalLines(t, "kubectl warnings", warningLines(r), nil)
		audit := auditAnnotations(t, "pods", ns, "legacy")
		key := envPolicyWebhookName + "/env-policy-rule-2"
		if got, want := audit[key], "would reject: it sets LEGACY_FLAG, which this rule forbids"; got != want {
			t.Errorf("audit annotation %s = %q; want %q (all: %v)", key, got, want, audit)
		}
		if rev := audit[envPolicyWebhookName+"/revision"]; !revisionPattern.MatchString(rev) {
			t.Errorf("audit annotation %s/revision = %q; want sha256:<64 hex digits>", envPolicyWebhookName, rev)
		}
	})
	t.Run("a Pod that sets neither variable is admitted without a warning", func(t *testing.T) {
		r := applyJSON(t, pod(ns, "clean", nil, corev1.EnvVar{Name: "LOG_LEVEL", Value: "info"}))
		wantAdmitted(t, r)
		equalLines(t, "kubectl warnings", warningLines(r), nil)
	})
}
