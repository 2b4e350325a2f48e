package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Decider-unavailable texts of spec 04 §5 (the gRPC code of a refused
// connection is Unavailable: the front door dials without WaitForReady).
const (
	unavailablePrefix  = "dynamic-config.rs: the decider was unavailable (Unavailable: "
	mutateDenySuffix   = "), so this pod could not be decided; this front door denies in that case (--on-decider-error=deny)"
	validateDenySuffix = "), so this Pod could not be checked against the environment-variable policy; this front door denies in that case (--on-decider-error-validate=deny)"
	validateAllowTail  = "); admitted without a decision because this front door is set to --on-decider-error-validate=allow"
	workloadDenySuffix = "), so this Deployment could not be checked against the environment-variable policy; this front door denies in that case (--on-decider-error-validate=deny)"
	mutateAllowTail    = "); admitted without a decision because this front door is set to --on-decider-error=allow"
)

// TestFrontDoorsFollowTheDeciderThroughAnOutage runs one `decider` and two
// `frontdoor` processes (two front doors, one decider, as in production):
//
//   - ns "deny":   injection and env policy → front door A (mutate: deny,  validate: deny)
//   - ns "allow":  injection and env policy → front door B (mutate: allow, validate: allow)
//   - ns "inject": injection only           → front door A
//
// then stops the decider, checks what each front door answers, restarts the
// decider at the same address and checks that front door A injects again
// without having been restarted.
func TestFrontDoorsFollowTheDeciderThroughAnOutage(t *testing.T) {
	path := filepath.Join(testDir(t), "installation.yaml")
	writeInstallation(t, path, seedInstallation(t)+envPolicyDocument)
	d := newDecider(t, "decider", path)
	d.start()
	doorA, a := startFrontdoor(t, "frontdoor-a", d.addr, "--on-decider-error", "deny", "--on-decider-error-validate", "deny")
	_, b := startFrontdoor(t, "frontdoor-b", d.addr, "--on-decider-error", "allow", "--on-decider-error-validate", "allow")

	nsDeny, nsAllow, nsInject := newNamespace(t), newNamespace(t), newNamespace(t)
	proxy := corev1.EnvVar{Name: "HTTPS_PROXY", Value: "http://proxy.example:3128"}
	for _, site := range []struct {
		ns       string
		door     frontDoor
		validate bool
	}{{nsDeny, a, true}, {nsAllow, b, true}, {nsInject, a, false}} {
		registerInjection(t, site.ns+"-inject", site.ns, site.door, injection{})
		waitForEffect(t, "the injection webhook takes effect in "+site.ns, pod(site.ns, "webhook-probe", consulAnnotations()), injectedOrRefused)
		if site.validate {
			registerEnvPolicy(t, site.ns+"-env-policy", site.ns, site.door)
			waitForEffect(t, "the env-policy webhook takes effect in "+site.ns, pod(site.ns, "webhook-probe", nil, proxy), refusedOrWarned)
		}
	}
	consul := seedPods[0]

	t.Run("with the decider up, both front doors inject", func(t *testing.T) {
		for _, ns := range []string{nsDeny, nsAllow} {
			wantAdmitted(t, applyJSON(t, pod(ns, "consul-before", consul.annotations)))
			checkInjected(t, getPod(t, ns, "consul-before"), consul.want)
		}
	})

	d.stop()

	t.Run("while the decider is down, a pod that asked for injection is refused with the decider-unavailable message", func(t *testing.T) {
		for _, ns := range []string{nsDeny, nsInject} {
			r := applyJSON(t, pod(ns, "consul-down", consul.annotations))
			wantRefused(t, r, "DynamicConfigDeciderUnavailable",
				`admission webhook "`+injectWebhookName+`" denied the request: `+unavailablePrefix, mutateDenySuffix)
			if podExists(t, ns, "consul-down") {
				t.Errorf("the refused pod was stored in %s", ns)
			}
		}
	})
	t.Run("while the decider is down, a pod that did not ask is admitted by the mutating webhook", func(t *testing.T) {
		r := applyJSON(t, pod(nsInject, "plain-down", nil))
		wantAdmitted(t, r)
		equalLines(t, "kubectl warnings", warningLines(r), nil)
		if got := getPod(t, nsInject, "plain-down").Annotations[statusKey]; got != "" {
			t.Errorf("status mark %q on a pod that did not ask", got)
		}
	})
	t.Run("while the decider is down, --on-decider-error-validate=deny refuses a pod that did not ask", func(t *testing.T) {
		r := applyJSON(t, pod(nsDeny, "plain-down", nil))
		wantRefused(t, r, "DynamicConfigDeciderUnavailable",
			`admission webhook "`+envPolicyWebhookName+`" denied the request: `+unavailablePrefix, validateDenySuffix)
		if podExists(t, nsDeny, "plain-down") {
			t.Errorf("the refused pod was stored")
		}
	})
	t.Run("while the decider is down, --on-decider-error-validate=deny refuses a Deployment", func(t *testing.T) {
		r := applyJSON(t, deployment(nsDeny, "app-down"))
		wantRefused(t, r, "DynamicConfigDeciderUnavailable",
			`admission webhook "`+envPolicyWebhookName+`" denied the request: `+unavailablePrefix, workloadDenySuffix)
	})
	t.Run("while the decider is down, --on-decider-error=allow admits a pod that asked, without its agent and with a warning", func(t *testing.T) {
		r := applyJSON(t, pod(nsAllow, "consul-down", consul.annotations))
		wantAdmitted(t, r)
		warnings := warningLines(r)
		if len(warnings) != 2 ||
			!strings.HasPrefix(warnings[0], unavailablePrefix) || !strings.HasSuffix(warnings[0], mutateAllowTail) ||
			!strings.HasPrefix(warnings[1], unavailablePrefix) || !strings.HasSuffix(warnings[1], validateAllowTail) {
			t.Errorf("kubectl warnings = %q; want the mutating one (…%q) then the validating one (…%q)", warnings, mutateAllowTail, validateAllowTail)
		}
		stored := getPod(t, nsAllow, "consul-down")
		if n := countAgents(stored); n != 0 || stored.Annotations[statusKey] != "" {
			t.Errorf("the pod admitted without a decision carries %d agents and status mark %q; want none", n, stored.Annotations[statusKey])
		}
		if got := auditAnnotations(t, "pods", nsAllow, "consul-down")[injectWebhookName+"/decider-unavailable"]; got != "Unavailable" {
			t.Errorf("audit annotation %s/decider-unavailable = %q; want \"Unavailable\"", injectWebhookName, got)
		}
	})
	t.Run("while the decider is down, --on-decider-error-validate=allow admits a pod that did not ask, with a warning", func(t *testing.T) {
		r := applyJSON(t, pod(nsAllow, "plain-down", nil))
		wantAdmitted(t, r)
		warnings := warningLines(r)
		if len(warnings) != 1 || !strings.HasPrefix(warnings[0], unavailablePrefix) || !strings.HasSuffix(warnings[0], validateAllowTail) {
			t.Errorf("kubectl warnings = %q; want one %q…%q", warnings, unavailablePrefix, validateAllowTail)
		}
		if !podExists(t, nsAllow, "plain-down") {
			t.Errorf("the admitted pod was not stored")
		}
	})

	pidBefore := doorA.pid()
	d.start()

	t.Run("after the decider restarts, the same front door injects again", func(t *testing.T) {
		// gRPC reconnects with backoff; the first pods after the restart may
		// still be refused as unavailable.
		var last kubectlResult
		err := eventually("front door A recovers", 60*time.Second, 500*time.Millisecond, func() error {
			last = applyJSON(t, pod(nsDeny, "consul-after", consul.annotations), "--dry-run=server", "-o", "json")
			if last.err != nil || !strings.Contains(last.stdout, `"dynamic-config.rs/status"`) {
				return errNoEffectYet
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%v\nlast attempt: %s", err, last)
		}
		wantAdmitted(t, applyJSON(t, pod(nsDeny, "consul-after", consul.annotations)))
		checkInjected(t, getPod(t, nsDeny, "consul-after"), consul.want)
		if doorA.exited() || doorA.pid() != pidBefore {
			t.Errorf("front door A was restarted (pid %d → %d, exited %v); it must recover on its own", pidBefore, doorA.pid(), doorA.exited())
		}
	})
}
