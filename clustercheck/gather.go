package clustercheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Cluster reads our webhook configurations and what they point at.
type Cluster struct {
	Client kubernetes.Interface
	// MutatingConfigs and ValidatingConfigs name the configurations to check;
	// none named: every configuration holding one of our webhooks.
	MutatingConfigs, ValidatingConfigs []string
	// Dial makes a TLS handshake with every ready endpoint (a URL webhook:
	// its host) to see the serving certificate, bounded by DialTimeout.
	Dial        bool
	DialTimeout time.Duration
}

// Check reads the configurations and runs CheckWebhook on each of our
// webhooks. A configuration that cannot be read, or no webhook of ours at
// all, is a failed finding.
func (c Cluster) Check(ctx context.Context, e Expect) []Finding {
	hooks, out := c.webhooks(ctx)
	for _, w := range hooks {
		out = append(out, CheckWebhook(w, c.observe(ctx, w), e)...)
	}
	return out
}

func (c Cluster) webhooks(ctx context.Context) ([]Webhook, []Finding) {
	var hooks []Webhook
	var out []Finding
	read := func(kind string, names []string, get func(string) ([]Webhook, error), list func() ([]Webhook, error)) {
		if len(names) == 0 {
			ws, err := list()
			if err != nil {
				out = append(out, Finding{Check: "configuration", Object: kind, Status: Fail, Detail: fmt.Sprintf("list: %v", err)})
			}
			hooks = append(hooks, ws...)
			return
		}
		for _, n := range names {
			ws, err := get(n)
			object := kind + "/" + n
			switch {
			case err != nil:
				out = append(out, Finding{Check: "configuration", Object: object, Status: Fail, Detail: fmt.Sprintf("get: %v", err)})
			case len(ws) == 0:
				out = append(out, Finding{Check: "configuration", Object: object, Status: Fail, Detail: "holds no webhook named *" + webhookNameSuffix + "; expected " + InjectWebhook + " (or " + EnvPolicyWebhook + ")"})
			}
			hooks = append(hooks, ws...)
		}
	}
	mw := c.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	read("mutatingwebhookconfiguration", c.MutatingConfigs, func(n string) ([]Webhook, error) {
		cfg, err := mw.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return FromMutating(cfg), nil
	}, func() ([]Webhook, error) {
		l, err := mw.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var ws []Webhook
		for i := range l.Items {
			ws = append(ws, FromMutating(&l.Items[i])...)
		}
		return ws, nil
	})
	vw := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	read("validatingwebhookconfiguration", c.ValidatingConfigs, func(n string) ([]Webhook, error) {
		cfg, err := vw.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return FromValidating(cfg), nil
	}, func() ([]Webhook, error) {
		l, err := vw.List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var ws []Webhook
		for i := range l.Items {
			ws = append(ws, FromValidating(&l.Items[i])...)
		}
		return ws, nil
	})
	if len(hooks) == 0 && len(out) == 0 {
		out = append(out, Finding{Check: "configuration", Object: "mutatingwebhookconfiguration", Status: Fail, Detail: "no webhook configuration holds " + InjectWebhook + "; expected the release's MutatingWebhookConfiguration"})
	}
	return hooks, out
}

// observe reads the Service's EndpointSlices and, with Dial, what each
// ready endpoint presents.
func (c Cluster) observe(ctx context.Context, w Webhook) Observed {
	var o Observed
	cc := w.ClientConfig
	if cc.URL != nil {
		if c.Dial {
			if addr, err := urlAddress(*cc.URL); err != nil {
				o.Serving = append(o.Serving, Serving{Address: *cc.URL, Err: err})
			} else {
				o.Serving = append(o.Serving, c.handshake(ctx, addr, ServerName(cc)))
			}
		}
		return o
	}
	if cc.Service == nil {
		return o
	}
	svc := cc.Service
	l, err := c.Client.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name})
	if err != nil {
		o.EndpointsErr = err
		return o
	}
	o.EndpointSlices = l.Items
	if !c.Dial {
		return o
	}
	port, err := c.targetPort(ctx, cc.Service, l.Items)
	if err != nil {
		o.Serving = append(o.Serving, Serving{Address: fmt.Sprintf("service %s/%s", svc.Namespace, svc.Name), Err: err})
		return o
	}
	for _, s := range l.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || len(ep.Addresses) == 0 {
				continue
			}
			o.Serving = append(o.Serving, c.handshake(ctx, net.JoinHostPort(ep.Addresses[0], strconv.Itoa(int(port))), ServerName(cc)))
		}
	}
	return o
}

// targetPort maps the webhook's Service port to the endpoints' port: the
// Service port's name, looked up in the slices.
func (c Cluster) targetPort(ctx context.Context, ref *admissionv1.ServiceReference, slices []discoveryv1.EndpointSlice) (int32, error) {
	svc, err := c.Client.CoreV1().Services(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("service %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	want := int32(443)
	if ref.Port != nil {
		want = *ref.Port
	}
	var sp *corev1.ServicePort
	for i := range svc.Spec.Ports {
		if svc.Spec.Ports[i].Port == want {
			sp = &svc.Spec.Ports[i]
		}
	}
	if sp == nil {
		return 0, fmt.Errorf("service %s/%s has no port %d; expected the port clientConfig.service.port names", ref.Namespace, ref.Name, want)
	}
	for _, s := range slices {
		for _, p := range s.Ports {
			if p.Port != nil && (p.Name == nil && sp.Name == "" || p.Name != nil && *p.Name == sp.Name) {
				return *p.Port, nil
			}
		}
	}
	return 0, fmt.Errorf("service %s/%s: no EndpointSlice port named %q", ref.Namespace, ref.Name, sp.Name)
}

// handshake dials addr and returns the chain it presents (verification is
// checkServing's, against the caBundle).
func (c Cluster) handshake(ctx context.Context, addr, serverName string) Serving {
	timeout := c.DialTimeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var chain []*x509.Certificate
	d := tls.Dialer{Config: &tls.Config{
		ServerName: serverName,
		MinVersion: tls.VersionTLS12,
		// The chain is verified by checkServing against the caBundle, for the
		// name the API server uses; here it is only collected.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			chain = slices.Clone(cs.PeerCertificates)
			return nil
		},
	}}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if len(chain) > 0 {
			return Serving{Address: addr, Chain: chain}
		}
		return Serving{Address: addr, Err: err}
	}
	_ = conn.Close()
	return Serving{Address: addr, Chain: chain}
}

func urlAddress(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "https" {
		return "", errors.New("clientConfig.url is not https")
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
