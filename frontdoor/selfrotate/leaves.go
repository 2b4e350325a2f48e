package selfrotate

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys of a leaf Secret (the kubernetes.io/tls layout, in an Opaque Secret:
// the chart renders it empty, and a kubernetes.io/tls Secret cannot be).
const (
	KeyTLSCert = "tls.crt" // the pair's certificate (PEM)
	KeyTLSKey  = "tls.key" // its private key (PEM, EC)
	KeyTLSCA   = "ca.crt"  // the trust bundle that verifies the peer: the CA Secret's ca-bundle.crt
)

// AnnotationTrustedSince is set on a leaf Secret to the time (RFC 3339) its
// ca.crt first held the signing CA. The pairs move to a new CA only once
// every leaf Secret has trusted it for Config.Handover: by then the kubelet
// has put the new bundle into every pod that mounts one, so both ends of
// the mTLS connection accept the new chain before either presents it.
const AnnotationTrustedSince = "dynamic-config.rs/ca-trusted-since"

// Leaf is a Secret the leader keeps filled with a pair signed by the
// rotating CA and with the trust bundle: the decider's serving pair (Hosts
// set) or the front door's client pair towards the decider (CommonName).
type Leaf struct {
	Secret     string
	Hosts      []string // a serving pair's DNS names and IP addresses
	CommonName string   // a client pair's subject (when Hosts is empty)
}

func (l Leaf) usage() x509.ExtKeyUsage {
	if len(l.Hosts) > 0 {
		return x509.ExtKeyUsageServerAuth
	}
	return x509.ExtKeyUsageClientAuth
}

func (l Leaf) issue(ca *Authority, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(l.Hosts) > 0 {
		return ca.Issue(l.Hosts, now, validity)
	}
	return ca.IssueClient(l.CommonName, now, validity)
}

// usable reports whether cert still serves as this leaf at now: it verifies
// against bundle for its usage and carries every host.
func (l Leaf) usable(cert *x509.Certificate, bundle []byte, now time.Time) bool {
	pool := x509.NewCertPool()
	if cert == nil || !pool.AppendCertsFromPEM(bundle) {
		return false
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{l.usage()}}); err != nil {
		return false
	}
	for _, h := range l.Hosts {
		if cert.VerifyHostname(h) != nil {
			return false
		}
	}
	return true
}

// leafState is one leaf Secret during a pass.
type leafState struct {
	leaf    Leaf
	secret  *corev1.Secret
	create  bool              // the Secret does not exist yet
	cert    *x509.Certificate // tls.crt when it forms a pair with tls.key
	changed bool
	// newTrust: ca.crt gains the signing CA in this pass; the hand-over is
	// counted from the write (stamped then: a slow pass must not use it up)
	newTrust bool
}

// reconcileLeaves is the leader's leaf duty, after the CA pass: every leaf
// Secret gets bundle as ca.crt at once (trust before use); a pair that is
// missing or no longer usable is signed at once; a pair of an earlier CA,
// or past two thirds of its lifetime, is re-signed by ca once the signing
// CA has been trusted in every leaf Secret for the hand-over.
func (r *Rotator) reconcileLeaves(ctx context.Context, ca *Authority, bundle []byte, now time.Time) error {
	secrets := r.cfg.Client.CoreV1().Secrets(r.cfg.Namespace)
	states := make([]*leafState, 0, len(r.cfg.Leaves))
	settled := true
	for _, l := range r.cfg.Leaves {
		st := &leafState{leaf: l}
		s, err := secrets.Get(ctx, l.Secret, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			st.create = true
			st.secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: l.Secret, Namespace: r.cfg.Namespace}, Type: corev1.SecretTypeOpaque}
		case err != nil:
			return fmt.Errorf("read secret %s/%s: %w", r.cfg.Namespace, l.Secret, err)
		default:
			st.secret = s.DeepCopy()
		}
		if st.secret.Data == nil {
			st.secret.Data = map[string][]byte{}
		}
		if pair, err := tls.X509KeyPair(st.secret.Data[KeyTLSCert], st.secret.Data[KeyTLSKey]); err == nil {
			st.cert = pair.Leaf
		}
		since, err := time.Parse(time.RFC3339Nano, st.secret.Annotations[AnnotationTrustedSince])
		st.newTrust = err != nil // no (valid) record: count the hand-over from this write
		if old := st.secret.Data[KeyTLSCA]; !bytes.Equal(old, bundle) {
			st.secret.Data[KeyTLSCA] = bundle
			st.changed = true
			st.newTrust = st.newTrust || !holds(old, ca.Cert)
		}
		if st.newTrust || now.Sub(since) < r.cfg.Handover {
			settled = false
		}
		states = append(states, st)
	}
	for _, st := range states {
		var why string
		switch {
		case !st.leaf.usable(st.cert, bundle, now):
			why = "missing or no longer trusted"
		case st.cert.CheckSignatureFrom(ca.Cert) == nil && now.Before(renewAt(st.cert)):
		case !settled:
			r.cfg.Logger.Debug("self-rotate: pair waits for the hand-over", "secret", st.leaf.Secret)
		case st.cert.CheckSignatureFrom(ca.Cert) != nil:
			why = "signed by an earlier CA"
		default:
			why = "past two thirds of its lifetime"
		}
		if why != "" {
			certPEM, keyPEM, err := st.leaf.issue(ca, now, r.cfg.LeafValidity)
			if err != nil {
				return fmt.Errorf("secret %s/%s: %w", r.cfg.Namespace, st.leaf.Secret, err)
			}
			st.secret.Data[KeyTLSCert], st.secret.Data[KeyTLSKey] = certPEM, keyPEM
			st.changed = true
			r.cfg.Logger.Info("self-rotate: pair signed", "secret", st.leaf.Secret, "reason", why,
				"ca_not_after", ca.Cert.NotAfter.UTC().Format(time.RFC3339))
		}
		if st.newTrust {
			if st.secret.Annotations == nil {
				st.secret.Annotations = map[string]string{}
			}
			st.secret.Annotations[AnnotationTrustedSince] = r.cfg.Now().UTC().Format(time.RFC3339Nano)
			st.changed = true
		}
		if !st.changed {
			continue
		}
		var err error
		if st.create {
			_, err = secrets.Create(ctx, st.secret, metav1.CreateOptions{})
		} else {
			_, err = secrets.Update(ctx, st.secret, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("write secret %s/%s: %w", r.cfg.Namespace, st.leaf.Secret, err)
		}
	}
	return nil
}

// holds reports whether the PEM text bundle holds certificate c.
func holds(bundle []byte, c *x509.Certificate) bool {
	certs, _ := parseCertificates(bundle)
	for _, b := range certs {
		if bytes.Equal(b.Raw, c.Raw) {
			return true
		}
	}
	return false
}
