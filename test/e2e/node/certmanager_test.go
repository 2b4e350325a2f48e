package node

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The cert-manager stand-in. cert-manager's controller and CA injector are
// images this machine cannot pull; its CRDs are not: they come from its Go
// module (deploy/crds), so the chart's Certificates are validated by the real
// schema. The issuer's part — a CA ClusterIssuer signing each Certificate
// into its Secret, as cert-manager writes it — and the CA injector's — the
// webhook configurations' caBundle from cert-manager.io/inject-ca-from —
// are played by this loop in the test process. Like cert-manager it never
// deletes a Secret it wrote: what removes them is the chart's business.

const (
	certManagerNS = "dcnode-cert-manager"
	clusterIssuer = "dcnode-ca"
)

type certManagerStandIn struct {
	ca       *testCA
	stop     chan struct{}
	done     chan struct{}
	issued   atomic.Int64
	injected atomic.Int64
	mu       sync.Mutex
	lastErr  error
}

// startCertManager installs cert-manager's CRDs and a CA ClusterIssuer and
// starts the stand-in's loop.
func startCertManager(t *testing.T) *certManagerStandIn {
	t.Helper()
	crds := filepath.Join(theNode.certManager, "deploy", "crds")
	var files []string
	for _, kind := range []string{"certificates", "certificaterequests", "issuers", "clusterissuers"} {
		files = append(files, "-f", filepath.Join(crds, "cert-manager.io_"+kind+".yaml"))
	}
	mustKubectl(t, nil, append([]string{"apply", "--server-side"}, files...)...)
	// (kubectl wait fails on a CRD that has no status yet instead of waiting.)
	for _, crd := range []string{"certificates.cert-manager.io", "clusterissuers.cert-manager.io"} {
		eventually(t, "CRD "+crd+" Established", time.Minute, 500*time.Millisecond, func() error {
			var c struct {
				Status struct {
					Conditions []struct{ Type, Status string } `json:"conditions"`
				} `json:"status"`
			}
			if err := theNode.api.do(context.Background(), "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+crd, "", nil, &c); err != nil {
				return err
			}
			for _, cond := range c.Status.Conditions {
				if cond.Type == "Established" && cond.Status == "True" {
					return nil
				}
			}
			return fmt.Errorf("not Established: %+v", c.Status.Conditions)
		})
	}
	ca, err := newTestCA("dcnode cert-manager CA issuer")
	if err != nil {
		t.Fatal(err)
	}
	apply(t, fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: %[1]s}
---
apiVersion: v1
kind: Secret
metadata: {name: %[2]s, namespace: %[1]s}
type: kubernetes.io/tls
data: {tls.crt: %[3]s, tls.key: %[4]s}
---
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: %[2]s}
spec:
  ca: {secretName: %[2]s}
`, certManagerNS, clusterIssuer, base64.StdEncoding.EncodeToString(ca.certPEM), base64.StdEncoding.EncodeToString(ca.keyPEM)))
	// The API server serves a new CRD's objects a moment after it is Established.
	eventually(t, "the Certificate API serves", time.Minute, 500*time.Millisecond, func() error {
		return theNode.api.do(context.Background(), "GET", "/apis/cert-manager.io/v1/namespaces/"+releaseNS+"/certificates", "", nil, nil)
	})
	s := &certManagerStandIn{ca: ca, stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	mark("cert-manager %s CRDs installed from its Go module; the stand-in issuer %q and CA injector running", filepath.Base(theNode.certManager), clusterIssuer)
	return s
}

func (s *certManagerStandIn) close() error {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

func (s *certManagerStandIn) loop() {
	defer close(s.done)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := errors.Join(s.issue(ctx), s.inject(ctx))
		cancel()
		if err == nil {
			s.mu.Lock()
			s.lastErr = nil
			s.mu.Unlock()
		}
		if err != nil {
			s.mu.Lock()
			if s.lastErr == nil || s.lastErr.Error() != err.Error() {
				mark("cert-manager stand-in: %v", err)
			}
			s.lastErr = err
			s.mu.Unlock()
		}
		select {
		case <-s.stop:
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

type certificate struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		SecretName string   `json:"secretName"`
		CommonName string   `json:"commonName"`
		DNSNames   []string `json:"dnsNames"`
		Usages     []string `json:"usages"`
		IssuerRef  struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
		} `json:"issuerRef"`
		SecretTemplate struct {
			Labels map[string]string `json:"labels"`
		} `json:"secretTemplate"`
	} `json:"spec"`
}

type secretObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		Labels          map[string]string `json:"labels,omitempty"`
		Annotations     map[string]string `json:"annotations,omitempty"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
	} `json:"metadata"`
	Type string            `json:"type"`
	Data map[string][]byte `json:"data"`
}

// issue signs every Certificate of the release namespace that names our
// ClusterIssuer into its Secret, when the Secret is missing or not ours.
func (s *certManagerStandIn) issue(ctx context.Context) error {
	var list struct {
		Items []certificate `json:"items"`
	}
	if err := theNode.api.do(ctx, "GET", "/apis/cert-manager.io/v1/namespaces/"+releaseNS+"/certificates", "", nil, &list); err != nil {
		return err
	}
	for _, c := range list.Items {
		if c.Spec.IssuerRef.Kind != "ClusterIssuer" || c.Spec.IssuerRef.Name != clusterIssuer {
			continue
		}
		secretPath := "/api/v1/namespaces/" + releaseNS + "/secrets/" + c.Spec.SecretName
		var current secretObject
		getErr := theNode.api.do(ctx, "GET", secretPath, "", nil, &current)
		exists := getErr == nil
		switch {
		case exists && current.Metadata.Annotations["cert-manager.io/certificate-name"] == c.Metadata.Name && s.ca.signedByMe(current.Data["tls.crt"]):
			continue
		case exists && current.Type != "kubernetes.io/tls":
			return fmt.Errorf("certificate %s: Secret %s is %s: cert-manager cannot write a kubernetes.io/tls Secret over it", c.Metadata.Name, c.Spec.SecretName, current.Type)
		case !exists && !errors.Is(getErr, errNotFound):
			return getErr
		}
		var usages []x509.ExtKeyUsage
		for _, u := range c.Spec.Usages {
			switch u {
			case "server auth":
				usages = append(usages, x509.ExtKeyUsageServerAuth)
			case "client auth":
				usages = append(usages, x509.ExtKeyUsageClientAuth)
			}
		}
		cn := c.Spec.CommonName
		if cn == "" && len(c.Spec.DNSNames) > 0 {
			cn = c.Spec.DNSNames[0]
		}
		p, err := s.ca.sign(cn, c.Spec.DNSNames, usages)
		if err != nil {
			return err
		}
		// The Certificate may have gone since the list (a switch away from
		// certManager): cert-manager issues only for one that exists.
		if err := theNode.api.do(ctx, "GET", "/apis/cert-manager.io/v1/namespaces/"+releaseNS+"/certificates/"+c.Metadata.Name, "", nil, nil); err != nil {
			continue
		}
		sec := secretObject{APIVersion: "v1", Kind: "Secret", Type: "kubernetes.io/tls",
			Data: map[string][]byte{"tls.crt": p.certPEM, "tls.key": p.keyPEM, "ca.crt": s.ca.certPEM}}
		sec.Metadata.Name, sec.Metadata.Namespace = c.Spec.SecretName, releaseNS
		sec.Metadata.Labels = map[string]string{"controller.cert-manager.io/fao": "true"}
		for k, v := range c.Spec.SecretTemplate.Labels {
			sec.Metadata.Labels[k] = v
		}
		sec.Metadata.Annotations = map[string]string{
			"cert-manager.io/certificate-name": c.Metadata.Name,
			"cert-manager.io/issuer-name":      clusterIssuer,
			"cert-manager.io/issuer-kind":      "ClusterIssuer",
			"cert-manager.io/issuer-group":     "cert-manager.io",
			"cert-manager.io/common-name":      cn,
			"cert-manager.io/alt-names":        strings.Join(c.Spec.DNSNames, ","),
		}
		if exists {
			sec.Metadata.ResourceVersion = current.Metadata.ResourceVersion
			err = theNode.api.do(ctx, "PUT", secretPath, "", sec, nil)
		} else {
			err = theNode.api.do(ctx, "POST", "/api/v1/namespaces/"+releaseNS+"/secrets", "", sec, nil)
		}
		if err != nil {
			return fmt.Errorf("certificate %s: write Secret %s: %w", c.Metadata.Name, c.Spec.SecretName, err)
		}
		s.issued.Add(1)
		status := map[string]any{"status": map[string]any{"conditions": []map[string]any{{
			"type": "Ready", "status": "True", "reason": "Issued",
			"message":            "issued by the real-node tier's cert-manager stand-in",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
		}}}}
		_ = theNode.api.do(ctx, "PATCH", "/apis/cert-manager.io/v1/namespaces/"+releaseNS+"/certificates/"+c.Metadata.Name+"/status",
			"application/merge-patch+json", status, nil)
	}
	return nil
}

type webhookConfiguration struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Webhooks []struct {
		ClientConfig struct {
			CABundle []byte `json:"caBundle"`
		} `json:"clientConfig"`
	} `json:"webhooks"`
}

// inject writes the CA of the Certificate a webhook configuration names in
// cert-manager.io/inject-ca-from into each of its webhooks' caBundle.
func (s *certManagerStandIn) inject(ctx context.Context) error {
	for _, kind := range []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"} {
		base := "/apis/admissionregistration.k8s.io/v1/" + kind
		var list struct {
			Items []webhookConfiguration `json:"items"`
		}
		if err := theNode.api.do(ctx, "GET", base, "", nil, &list); err != nil {
			return err
		}
		for _, w := range list.Items {
			from := w.Metadata.Annotations["cert-manager.io/inject-ca-from"]
			ns, name, ok := strings.Cut(from, "/")
			if !ok {
				continue
			}
			var c certificate
			if err := theNode.api.do(ctx, "GET", "/apis/cert-manager.io/v1/namespaces/"+ns+"/certificates/"+name, "", nil, &c); err != nil {
				continue
			}
			var sec secretObject
			if err := theNode.api.do(ctx, "GET", "/api/v1/namespaces/"+ns+"/secrets/"+c.Spec.SecretName, "", nil, &sec); err != nil {
				continue
			}
			ca := sec.Data["ca.crt"]
			var ops []map[string]any
			for i, h := range w.Webhooks {
				if string(h.ClientConfig.CABundle) != string(ca) {
					ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i), "value": ca})
				}
			}
			if len(ops) == 0 {
				continue
			}
			if err := theNode.api.do(ctx, "PATCH", base+"/"+w.Metadata.Name, "application/json-patch+json", ops, nil); err != nil {
				return err
			}
			s.injected.Add(1)
		}
	}
	return nil
}

// platformSecrets is tls.mode existingSecrets' material: three Secrets of
// the platform's own PKI, created before the switch to the mode and deleted
// by the platform (the test) after the last switch away from it.
type platformSecrets struct {
	ca                         *testCA
	frontdoor, decider, client string
}

func createPlatformSecrets(t *testing.T) platformSecrets {
	t.Helper()
	ca, err := newTestCA("platform PKI")
	if err != nil {
		t.Fatal(err)
	}
	ps := platformSecrets{ca: ca, frontdoor: "platform-frontdoor-tls", decider: "platform-decider-tls", client: "platform-frontdoor-client-tls"}
	svc := func(component string) []string {
		return []string{fmt.Sprintf("%s-%s.%s.svc", fullname, component, releaseNS), fmt.Sprintf("%s-%s.%s", fullname, component, releaseNS)}
	}
	for _, s := range []struct {
		name, cn string
		dns      []string
		usage    x509.ExtKeyUsage
	}{
		{ps.frontdoor, svc("frontdoor")[0], svc("frontdoor"), x509.ExtKeyUsageServerAuth},
		{ps.decider, svc("decider")[0], svc("decider"), x509.ExtKeyUsageServerAuth},
		{ps.client, fullname + "-frontdoor-client", nil, x509.ExtKeyUsageClientAuth},
	} {
		p, err := ca.sign(s.cn, s.dns, []x509.ExtKeyUsage{s.usage})
		if err != nil {
			t.Fatal(err)
		}
		apply(t, fmt.Sprintf(`apiVersion: v1
kind: Secret
metadata: {name: %s, namespace: %s}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s, ca.crt: %s}
`, s.name, releaseNS, base64.StdEncoding.EncodeToString(p.certPEM), base64.StdEncoding.EncodeToString(p.keyPEM),
			base64.StdEncoding.EncodeToString(ca.certPEM)))
	}
	return ps
}

func (ps platformSecrets) names() []string { return []string{ps.frontdoor, ps.decider, ps.client} }

// valuesCABundle is the CA as a YAML block scalar for tls.existingSecrets.caBundle.
func (ps platformSecrets) valuesCABundle() string {
	lines := strings.Split(strings.TrimSpace(string(ps.ca.certPEM)), "\n")
	return "|\n      " + strings.Join(lines, "\n      ")
}

// sortedCopy returns a sorted copy of names.
func sortedCopy(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	return out
}
