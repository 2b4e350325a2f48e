package node

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The four TLS modes of the chart (values tls.mode).
const (
	selfSigned      = "selfSigned"
	selfRotate      = "selfRotate"
	certManager     = "certManager"
	existingSecrets = "existingSecrets"
)

// tlsChain is every switch between two modes once (issue 40 item 2), as one
// chain of upgrades from the installed selfSigned: an Eulerian circuit of
// the complete directed graph on the four modes — 12 switches — and then
// selfSigned → certManager once more, so that the release is uninstalled in
// certManager mode, the one whose Secrets Helm does not own.
var tlsChain = []string{
	selfRotate, selfSigned, certManager, selfSigned, existingSecrets, selfRotate, certManager,
	selfRotate, existingSecrets, certManager, existingSecrets, selfSigned, certManager,
}

// modeSecrets is the Secrets of the release namespace each mode has (besides
// Helm's release records), with their types: Helm's own in selfSigned and
// selfRotate (the front door fills selfRotate's), cert-manager's in
// certManager, none of the release's in existingSecrets (the platform's
// three are there, and stay theirs).
func modeSecrets(mode string, platform platformSecrets) []string {
	s := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, fullname+"-"+n)
		}
		return out
	}
	switch mode {
	case selfSigned:
		return s("decider-tls (kubernetes.io/tls)", "frontdoor-client-tls (kubernetes.io/tls)", "frontdoor-tls (kubernetes.io/tls)")
	case selfRotate:
		return s("decider-rotated-tls (Opaque)", "frontdoor-ca (Opaque)", "frontdoor-client-rotated-tls (Opaque)")
	case certManager:
		return s("decider-cert-manager-tls (kubernetes.io/tls)", "frontdoor-cert-manager-tls (kubernetes.io/tls)", "frontdoor-client-cert-manager-tls (kubernetes.io/tls)")
	}
	return nil
}

func tlsValues(mode string, platform platformSecrets) string {
	v := fmt.Sprintf("tls:\n  mode: %s\n", mode)
	switch mode {
	case certManager:
		v += fmt.Sprintf("webhook:\n  certManager:\n    issuerRef: {name: %s, kind: ClusterIssuer}\n", clusterIssuer)
	case existingSecrets:
		v += fmt.Sprintf("  existingSecrets:\n    frontdoor: %s\n    decider: %s\n    client: %s\n    caBundle: %s\n",
			platform.frontdoor, platform.decider, platform.client, platform.valuesCABundle())
	}
	return v
}

// tlsModeSwitches runs the chain: each switch is a real `helm upgrade` with
// its hooks (check-installation before, the install proof — which must see
// injection work — and, away from certManager, the prune-secrets hook
// after); then the release namespace holds exactly the new mode's Secrets
// (nothing of the old mode is orphaned), a pod that asks is injected, and a
// prober that asked every second during the upgrade says what admission saw
// meanwhile (printed, not asserted: the front doors and deciders of two
// modes trust different CAs until both rollouts end).
func tlsModeSwitches(t *testing.T) {
	cm := startCertManager(t)
	defer func() {
		if err := cm.close(); err != nil {
			t.Errorf("the cert-manager stand-in: %v", err)
		}
	}()
	platform := createPlatformSecrets(t)
	from := selfSigned
	for i, to := range tlsChain {
		ok := t.Run(fmt.Sprintf("%02d %s to %s", i+1, from, to), func(t *testing.T) {
			switchTLS(t, i+1, from, to, platform)
		})
		if !ok {
			t.Fatalf("switch %s → %s failed: the later switches start from it", from, to)
		}
		from = to
	}
	// The platform deletes its own Secrets once no mode uses them.
	mustKubectl(t, nil, append([]string{"delete", "secret", "-n", releaseNS}, platform.names()...)...)
	mark("tls: %d switches done; the stand-in issued %d certificates and injected %d caBundles", len(tlsChain), cm.issued.Load(), cm.injected.Load())
}

func switchTLS(t *testing.T, n int, from, to string, platform platformSecrets) {
	values := writeValues(t, fmt.Sprintf("tls-%02d-%s", n, to), tlsValues(to, platform))
	probe := startAdmissionProber()
	start := time.Now()
	r := helm(8*time.Minute, "upgrade", release, theNode.chart, "-n", releaseNS, "-f", values,
		"--wait", "--wait-for-jobs", "--timeout", "7m")
	took := time.Since(start)
	seen := probe.stop()
	if r.err != nil {
		t.Fatalf("helm upgrade %s → %s: %v", from, to, r)
	}
	got := secretsIn(t, releaseNS)
	want := append(modeSecrets(to, platform), platformSecretLines(platform)...)
	if strings.Join(got, ", ") != strings.Join(sortedCopy(want), ", ") {
		t.Errorf("after %s → %s the release namespace holds %v; want exactly %v", from, to, got, sortedCopy(want))
	}
	eventually(t, "a pod that asks is injected", 2*time.Minute, 2*time.Second, func() error {
		return dryRunInjected()
	})
	now := strings.Join(modeSecrets(to, platform), ", ")
	if now == "" {
		now = "none of the release's (the platform's three are used)"
	}
	mark("tls %02d: %s → %s: helm upgrade with hooks %.1fs; Secrets now %s; injecting; during the upgrade %s",
		n, from, to, took.Seconds(), now, seen)
	saveText(fmt.Sprintf("tls-%02d-refusals.txt", n), probe.samples())
}

func platformSecretLines(p platformSecrets) []string {
	var out []string
	for _, n := range p.names() {
		out = append(out, n+" (kubernetes.io/tls)")
	}
	return out
}

// dryRunInjected creates a pod that asks, as a server-side dry run in the
// apps namespace, and says whether the stored answer would carry the agent.
func dryRunInjected() error {
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  generateName: tls-probe-
  namespace: %[1]s
  annotations:
    %[2]s
spec:
  automountServiceAccountToken: false
  %[4]s
  containers:
    - name: app
      image: %[3]s
      args: [watch, /config/probe.json]
      %[5]s
`, appsNS, strings.ReplaceAll(asks("apps/probe.json", "/config/probe.json"), "\n        ", "\n    "), appImage,
		strings.ReplaceAll(restrictedPodSecurity, "\n        ", "\n    "), strings.ReplaceAll(restrictedContainerSecurity, "\n            ", "\n        "))
	r := kubectl([]byte(manifest), "create", "--dry-run=server", "-o", "json", "-f", "-")
	if r.err != nil {
		return fmt.Errorf("dry-run create: %s", strings.TrimSpace(r.stderr))
	}
	if !strings.Contains(r.stdout, `"name": "`+agentName+`"`) {
		return fmt.Errorf("the dry-run pod came back without %s", agentName)
	}
	return nil
}

// admissionProber asks every second (a dry-run create) while an upgrade runs.
type admissionProber struct {
	injected, refused, bare atomic.Int64
	done                    chan struct{}
	wg                      sync.WaitGroup
	mu                      sync.Mutex
	reasons                 map[string]int    // why the refused ones were refused
	sample                  map[string]string // the API server's whole message, one per reason
}

func startAdmissionProber() *admissionProber {
	p := &admissionProber{done: make(chan struct{}), reasons: map[string]int{}, sample: map[string]string{}}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			switch err := dryRunInjected(); {
			case err == nil:
				p.injected.Add(1)
			case strings.Contains(err.Error(), "came back without"):
				p.bare.Add(1)
			default:
				p.refused.Add(1)
				p.mu.Lock()
				r := refusalReason(err.Error())
				p.reasons[r]++
				if _, ok := p.sample[r]; !ok {
					p.sample[r] = err.Error()
				}
				p.mu.Unlock()
			}
			select {
			case <-p.done:
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return p
}

func (p *admissionProber) stop() string {
	close(p.done)
	p.wg.Wait()
	text := fmt.Sprintf("%d asking pods injected, %d refused, %d admitted without the agent", p.injected.Load(), p.refused.Load(), p.bare.Load())
	if len(p.reasons) > 0 {
		var rs []string
		for r, n := range p.reasons {
			rs = append(rs, fmt.Sprintf("%d× %s", n, r))
		}
		text += " (" + strings.Join(sortedCopy(rs), "; ") + ")"
	}
	return text
}

// samples is one whole refusal per reason, for the work directory.
func (p *admissionProber) samples() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, r := range sortedCopy(mapKeys(p.sample)) {
		fmt.Fprintf(&b, "%d× %s\n  %s\n", p.reasons[r], r, p.sample[r])
	}
	return b.String()
}

func mapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// refusalReason shortens the API server's refusal to what failed: the
// webhook call's error without the pod's name or addresses.
func refusalReason(msg string) string {
	for _, r := range []string{
		"x509: certificate signed by unknown authority", "tls: failed to verify certificate", "remote error: tls: unknown certificate authority",
		"remote error: tls: bad certificate", "connection refused", "no endpoints available", "context deadline exceeded",
		"the decider did not answer", "decider", "Internal error",
	} {
		if strings.Contains(msg, r) {
			return r
		}
	}
	if len(msg) > 160 {
		msg = msg[:160]
	}
	return msg
}
