package clustercheck

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/url"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Our webhooks' names (spec 07 §6.3, 05 §7, issue 21).
const (
	InjectWebhook     = "inject.dynamic-config.rs"
	EnvPolicyWebhook  = "env-policy.dynamic-config.rs"
	ProofWebhook      = "install-proof.dynamic-config.rs"
	webhookNameSuffix = ".dynamic-config.rs"
)

// The chart's own match conditions: only a pod that asks reaches /mutate
// (issue 12); the install-proof webhook answers only dry runs (issue 21).
const (
	AsksCondition   = "asks-for-dynamic-config"
	DryRunCondition = "install-proof-dry-run-only"
)

// Status is a check's verdict.
type Status string

// The verdicts: a Fail makes check-cluster exit non-zero.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Finding is one check of one object: what was checked, the verdict, and
// what was found against what was expected.
type Finding struct {
	Check  string `json:"check"`
	Object string `json:"object"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
}

// Webhook is one webhook of a Mutating- or ValidatingWebhookConfiguration,
// with what the checks need.
type Webhook struct {
	// Kind is mutatingwebhookconfiguration or validatingwebhookconfiguration.
	Kind            string
	Config          string
	Name            string
	ClientConfig    admissionv1.WebhookClientConfig
	FailurePolicy   *admissionv1.FailurePolicyType
	TimeoutSeconds  *int32
	MatchConditions []admissionv1.MatchCondition
}

// Object names the webhook as the findings do.
func (w Webhook) Object() string {
	return fmt.Sprintf("%s/%s webhook %s", w.Kind, w.Config, w.Name)
}

// Ours reports whether a webhook name is one of the product's.
func Ours(name string) bool { return strings.HasSuffix(name, webhookNameSuffix) }

// FromMutating lists the product's webhooks of a configuration.
func FromMutating(cfg *admissionv1.MutatingWebhookConfiguration) []Webhook {
	var out []Webhook
	for _, w := range cfg.Webhooks {
		if Ours(w.Name) {
			out = append(out, Webhook{Kind: "mutatingwebhookconfiguration", Config: cfg.Name, Name: w.Name, ClientConfig: w.ClientConfig,
				FailurePolicy: w.FailurePolicy, TimeoutSeconds: w.TimeoutSeconds, MatchConditions: w.MatchConditions})
		}
	}
	return out
}

// FromValidating lists the product's webhooks of a configuration.
func FromValidating(cfg *admissionv1.ValidatingWebhookConfiguration) []Webhook {
	var out []Webhook
	for _, w := range cfg.Webhooks {
		if Ours(w.Name) {
			out = append(out, Webhook{Kind: "validatingwebhookconfiguration", Config: cfg.Name, Name: w.Name, ClientConfig: w.ClientConfig,
				FailurePolicy: w.FailurePolicy, TimeoutSeconds: w.TimeoutSeconds, MatchConditions: w.MatchConditions})
		}
	}
	return out
}

// Serving is what a TLS handshake with the webhook's endpoint showed.
type Serving struct {
	// Address is what was dialled; Chain the certificates the endpoint
	// presented, leaf first; Err why there is no chain (unreachable from
	// here, or the handshake failed before a certificate was seen).
	Address string
	Chain   []*x509.Certificate
	Err     error
}

// Observed is what was read about one webhook's backend.
type Observed struct {
	// EndpointSlices of the clientConfig's Service (nil for a URL webhook).
	EndpointSlices []discoveryv1.EndpointSlice
	// EndpointsErr is why the slices could not be read.
	EndpointsErr error
	// Serving holds one handshake per dialled address (none: not dialled).
	Serving []Serving
}

// Expect is what the checks hold the webhooks to.
type Expect struct {
	// DeciderTimeout is the front door's --decider-timeout: timeoutSeconds
	// must leave 1s above it for the front door and the API server's call.
	DeciderTimeout time.Duration
	// Now is the time certificates are checked at.
	Now time.Time
}

// CheckWebhook runs every configuration check of one webhook.
func CheckWebhook(w Webhook, o Observed, e Expect) []Finding {
	out := []Finding{}
	roots, bundle := checkCABundle(w, e.Now)
	out = append(out, bundle)
	out = append(out, checkServing(w, o.Serving, roots, e.Now)...)
	out = append(out, checkEndpoints(w, o))
	out = append(out, checkFailurePolicy(w))
	out = append(out, checkMatchConditions(w))
	out = append(out, checkTimeout(w, e.DeciderTimeout))
	return out
}

func finding(w Webhook, check string, s Status, format string, args ...any) Finding {
	return Finding{Check: check, Object: w.Object(), Status: s, Detail: fmt.Sprintf(format, args...)}
}

// checkCABundle: present, PEM certificates only, each a CA valid now.
func checkCABundle(w Webhook, now time.Time) (*x509.CertPool, Finding) {
	const check = "caBundle"
	b := w.ClientConfig.CABundle
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, finding(w, check, Fail, "clientConfig.caBundle is empty; expected the PEM CA that signed the front door's serving certificate (tls.mode certManager: cert-manager's CA injector writes it; selfRotate: the front door does)")
	}
	pool := x509.NewCertPool()
	var certs []*x509.Certificate
	for rest := b; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			if len(strings.TrimSpace(string(rest))) > 0 {
				return nil, finding(w, check, Fail, "clientConfig.caBundle has %d bytes that are not PEM; expected PEM CERTIFICATE blocks only", len(strings.TrimSpace(string(rest))))
			}
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, finding(w, check, Fail, "clientConfig.caBundle holds a PEM %q block; expected CERTIFICATE blocks only", block.Type)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, finding(w, check, Fail, "clientConfig.caBundle certificate %d does not parse: %v", len(certs)+1, err)
		}
		certs = append(certs, c)
		pool.AddCert(c)
	}
	if len(certs) == 0 {
		return nil, finding(w, check, Fail, "clientConfig.caBundle holds no PEM certificate; expected the CA that signed the front door's serving certificate")
	}
	valid := 0
	var notes []string
	for _, c := range certs {
		switch {
		case now.After(c.NotAfter):
			notes = append(notes, fmt.Sprintf("%q expired %s", c.Subject.CommonName, c.NotAfter.UTC().Format(time.RFC3339)))
		case now.Before(c.NotBefore):
			notes = append(notes, fmt.Sprintf("%q is not valid before %s", c.Subject.CommonName, c.NotBefore.UTC().Format(time.RFC3339)))
		default:
			valid++
		}
	}
	if valid == 0 {
		return pool, finding(w, check, Fail, "clientConfig.caBundle holds %d certificate(s), none valid now (%s); expected a current CA", len(certs), strings.Join(notes, "; "))
	}
	detail := fmt.Sprintf("%d certificate(s), %d valid now", len(certs), valid)
	if len(notes) > 0 {
		detail += " (" + strings.Join(notes, "; ") + ")"
	}
	return pool, finding(w, check, OK, "%s", detail)
}

// ServerName is the name the API server verifies the webhook's certificate
// against: the Service's <name>.<namespace>.svc, or the URL's host.
func ServerName(cc admissionv1.WebhookClientConfig) string {
	if cc.Service != nil {
		return cc.Service.Name + "." + cc.Service.Namespace + ".svc"
	}
	if cc.URL != nil {
		if u, err := url.Parse(*cc.URL); err == nil {
			return u.Hostname()
		}
	}
	return ""
}

// checkServing verifies every presented chain against the caBundle, for the
// name the API server uses, as the API server does.
func checkServing(w Webhook, serving []Serving, roots *x509.CertPool, now time.Time) []Finding {
	const check = "serving certificate"
	if len(serving) == 0 {
		return []Finding{finding(w, check, Skip, "no endpoint dialled (none ready, or --no-dial); the install proof checks the certificate through the API server")}
	}
	name := ServerName(w.ClientConfig)
	var out []Finding
	for _, s := range serving {
		switch {
		case s.Err != nil:
			out = append(out, finding(w, check, Warn, "%s not reachable from here: %v; the install proof checks the certificate through the API server", s.Address, s.Err))
		case len(s.Chain) == 0:
			out = append(out, finding(w, check, Fail, "%s presented no certificate; expected one for %s", s.Address, name))
		case roots == nil:
			out = append(out, finding(w, check, Fail, "%s presents %q but the caBundle is unusable, so the API server cannot verify it", s.Address, s.Chain[0].Subject.CommonName))
		default:
			inter := x509.NewCertPool()
			for _, c := range s.Chain[1:] {
				inter.AddCert(c)
			}
			leaf := s.Chain[0]
			_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, Intermediates: inter, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			if err != nil {
				out = append(out, finding(w, check, Fail, "%s presents a certificate the caBundle does not verify for %s: %v", s.Address, name, err))
				continue
			}
			out = append(out, finding(w, check, OK, "%s: verified by the caBundle for %s, expires %s", s.Address, name, leaf.NotAfter.UTC().Format(time.RFC3339)))
		}
	}
	return out
}

// checkEndpoints wants at least one ready endpoint of the Service serving
// the webhook's port.
func checkEndpoints(w Webhook, o Observed) Finding {
	const check = "endpoints"
	svc := w.ClientConfig.Service
	if svc == nil {
		return finding(w, check, Skip, "clientConfig.url: no Service to check")
	}
	object := fmt.Sprintf("service %s/%s", svc.Namespace, svc.Name)
	if o.EndpointsErr != nil {
		return finding(w, check, Fail, "EndpointSlices of %s: %v", object, o.EndpointsErr)
	}
	ready, total := ReadyEndpoints(o.EndpointSlices)
	if ready == 0 {
		return finding(w, check, Fail, "%s has %d endpoint(s), none ready; expected at least one ready front door", object, total)
	}
	return finding(w, check, OK, "%s: %d of %d endpoint(s) ready", object, ready, total)
}

// ReadyEndpoints counts the ready endpoints of slices (a nil condition is
// ready, as the EndpointSlice API says).
func ReadyEndpoints(slices []discoveryv1.EndpointSlice) (ready, total int) {
	for _, s := range slices {
		for _, ep := range s.Endpoints {
			total++
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				ready++
			}
		}
	}
	return ready, total
}

// checkFailurePolicy: Fail is the chart's default; Ignore admits a pod that
// asked without its agent while the webhook is unreachable.
func checkFailurePolicy(w Webhook) Finding {
	const check = "failurePolicy"
	policy := admissionv1.Fail // the API's default
	if w.FailurePolicy != nil {
		policy = *w.FailurePolicy
	}
	if policy == admissionv1.Ignore {
		if w.Name == ProofWebhook {
			return finding(w, check, Fail, "Ignore; expected Fail: a failing install proof must say why")
		}
		return finding(w, check, Warn, "Ignore: while the webhook is unreachable, pods are admitted without it (dynamic-config audit-pods finds the pods that asked)")
	}
	return finding(w, check, OK, "%s", policy)
}

// checkMatchConditions: the injection webhooks must keep every pod that does
// not ask away from the front door; the proof webhook must answer only dry
// runs.
func checkMatchConditions(w Webhook) Finding {
	const check = "matchConditions"
	var names []string
	for _, c := range w.MatchConditions {
		names = append(names, c.Name)
	}
	var want []string
	switch w.Name {
	case InjectWebhook:
		want = []string{AsksCondition}
	case ProofWebhook:
		want = []string{DryRunCondition, AsksCondition}
	}
	var missing []string
	for _, n := range want {
		found := false
		for _, c := range w.MatchConditions {
			found = found || c.Name == n
		}
		if !found {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		status := Fail
		if w.FailurePolicy != nil && *w.FailurePolicy == admissionv1.Ignore && w.Name != ProofWebhook {
			status = Warn
		}
		return finding(w, check, status, "missing %s (has: %s); expected the chart's conditions, without which every pod of every selected namespace waits on the front door", strings.Join(missing, ", "), orNone(names))
	}
	return finding(w, check, OK, "%s", orNone(names))
}

// checkTimeout: the API server's timeout must leave 1s above the decider
// deadline for the front door's own work and the call (the chart's rule).
func checkTimeout(w Webhook, decider time.Duration) Finding {
	const check = "timeoutSeconds"
	seconds := int32(10) // the API's default
	if w.TimeoutSeconds != nil {
		seconds = *w.TimeoutSeconds
	}
	need := decider + time.Second
	if decider > 0 && time.Duration(seconds)*time.Second < need {
		return finding(w, check, Fail, "%ds; expected at least %s: the decider deadline %s plus 1s for the front door and the API server's call", seconds, need, decider)
	}
	return finding(w, check, OK, "%ds (decider deadline %s)", seconds, decider)
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
