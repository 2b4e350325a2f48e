package main

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// runTLS checks the self-signed material of a render (spec 07 §6.2): the three Secrets share
// one CA, which is also both webhooks' caBundle; each pair chains to it; the serving
// certificates name their Service; the client certificate can authenticate a client.
func runTLS(args []string) error {
	fs := flag.NewFlagSet("tls", flag.ContinueOnError)
	file := fs.String("f", "", "rendered manifests")
	if err := fs.Parse(args); err != nil {
		return err
	}
	objs, err := readObjects(*file)
	if err != nil {
		return err
	}
	secrets := map[string]object{}
	var bundles []string
	for _, o := range objs {
		switch str(o, "kind") {
		case "Secret":
			secrets[str(o, "metadata", "name")] = o
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks, _ := o["webhooks"].([]any)
			for _, w := range hooks {
				bundles = append(bundles, str(w.(object), "clientConfig", "caBundle"))
			}
		}
	}
	ns := ""
	var ca string
	checks := []struct {
		suffix, service string
		usage           x509.ExtKeyUsage
	}{
		{"-frontdoor-tls", "frontdoor", x509.ExtKeyUsageServerAuth},
		{"-decider-tls", "decider", x509.ExtKeyUsageServerAuth},
		{"-frontdoor-client-tls", "", x509.ExtKeyUsageClientAuth},
	}
	for _, c := range checks {
		var s object
		for name, o := range secrets {
			if strings.HasSuffix(name, c.suffix) && !strings.HasSuffix(name, "-client"+c.suffix) {
				s = o
			}
		}
		if s == nil {
			return fmt.Errorf("no Secret *%s", c.suffix)
		}
		ns = str(s, "metadata", "namespace")
		full := strings.TrimSuffix(str(s, "metadata", "name"), c.suffix)
		if ca == "" {
			ca = str(s, "data", "ca.crt")
		} else if str(s, "data", "ca.crt") != ca {
			return fmt.Errorf("%s has another ca.crt than the other Secrets", str(s, "metadata", "name"))
		}
		roots, err := pool(ca)
		if err != nil {
			return err
		}
		cert, err := parse(str(s, "data", "tls.crt"))
		if err != nil {
			return fmt.Errorf("%s: %w", str(s, "metadata", "name"), err)
		}
		if str(s, "data", "tls.key") == "" {
			return fmt.Errorf("%s has no tls.key", str(s, "metadata", "name"))
		}
		opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{c.usage}}
		if c.service != "" {
			host := fmt.Sprintf("%s-%s.%s.svc", full, c.service, ns)
			opts.DNSName = host
			if !slices.Contains(cert.DNSNames, fmt.Sprintf("%s-%s.%s", full, c.service, ns)) {
				return fmt.Errorf("%s does not name %s-%s.%s", str(s, "metadata", "name"), full, c.service, ns)
			}
		}
		if _, err := cert.Verify(opts); err != nil {
			return fmt.Errorf("%s: %w", str(s, "metadata", "name"), err)
		}
	}
	if len(bundles) == 0 {
		return errors.New("no webhook configuration")
	}
	for _, b := range bundles {
		if b != ca {
			return errors.New("a webhook's caBundle is not the CA of the Secrets")
		}
	}
	fmt.Printf("tls: one CA in the three Secrets and %d webhook caBundle(s); every pair verifies\n", len(bundles))
	return nil
}

func decode(b64 string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("not PEM")
	}
	return block.Bytes, nil
}

func parse(b64 string) (*x509.Certificate, error) {
	der, err := decode(b64)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

func pool(b64 string) (*x509.CertPool, error) {
	cert, err := parse(b64)
	if err != nil {
		return nil, fmt.Errorf("ca.crt: %w", err)
	}
	p := x509.NewCertPool()
	p.AddCert(cert)
	return p, nil
}
