// Package selfrotate is the front door's own TLS (tls.mode selfRotate): the
// front door keeps a CA in a Secret, every replica signs its own serving
// certificate with it (in memory), and one replica at a time — the holder
// of a coordination.k8s.io Lease — mints and rotates the CA and writes its
// trust bundle into the caBundle of both webhook configurations, and keeps
// the mTLS pairs between front door and decider (the leaf Secrets) signed by
// it, moving them to a new CA only after both ends trust it (leaves.go).
//
// Rotation never leaves a window in which the API server distrusts a
// serving certificate: the leader publishes a new CA in both webhook
// configurations before it stores it in the Secret (replicas sign only with
// the CA in the Secret), and the previous CA stays in the bundle until it
// expires. Only this mode makes the front door talk to the API server; its
// decisions stay with the decider.
package selfrotate

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Leader-election timing (client-go's usual values).
const (
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
)

// waitingPoll is how often a replica without a certificate re-reads the
// Secret (bounded above by Config.Interval).
const waitingPoll = time.Second

// Config configures a Rotator.
type Config struct {
	Client     kubernetes.Interface
	Namespace  string // of the Secret and the Lease
	SecretName string // the CA Secret
	LeaseName  string
	Identity   string // this replica's holder identity in the Lease
	// The webhook configurations whose every webhook gets the caBundle; ""
	// = none. A configuration that does not exist is skipped (the
	// env-policy one exists only with rules).
	MutatingWebhook   string
	ValidatingWebhook string
	Hosts             []string      // DNS names and IP addresses of the serving certificate
	CAValidity        time.Duration // of a newly minted CA
	LeafValidity      time.Duration // of a serving certificate (capped at the CA's notAfter)
	Interval          time.Duration // how often the Secret and the webhook configurations are checked
	// Leaves are the Secrets the leader keeps filled with pairs signed by
	// the CA (the decider's serving pair, the front door's client pair), each
	// with the bundle as ca.crt; Handover is how long a new CA must have
	// been trusted in all of them before their pairs move to it.
	Leaves   []Leaf
	Handover time.Duration
	// Use puts a newly signed serving pair in use (certs.Pair.Use).
	Use    func(certPEM, keyPEM []byte) error
	Logger *slog.Logger
	Now    func() time.Time // nil = time.Now
}

// Rotator runs the Lease election, the leader's CA duty and every replica's
// serving-certificate duty.
type Rotator struct {
	cfg Config

	mu   sync.Mutex
	leaf *x509.Certificate // the serving certificate in use
}

// New checks cfg and returns a rotator; Run starts it.
func New(cfg Config) (*Rotator, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("self-rotate: no Kubernetes client")
	case cfg.Namespace == "":
		return nil, errors.New("self-rotate: no namespace (set --self-rotate-namespace or POD_NAMESPACE)")
	case cfg.SecretName == "" || cfg.LeaseName == "":
		return nil, errors.New("self-rotate: the Secret and the Lease need names")
	case cfg.Identity == "":
		return nil, errors.New("self-rotate: no holder identity")
	case len(cfg.Hosts) == 0:
		return nil, errors.New("self-rotate: no host names for the serving certificate (--self-rotate-hosts)")
	case cfg.CAValidity <= 0 || cfg.LeafValidity <= 0 || cfg.Interval <= 0:
		return nil, errors.New("self-rotate: validities and interval must be positive")
	case cfg.Handover < 0:
		return nil, errors.New("self-rotate: the hand-over must not be negative")
	case cfg.Handover >= cfg.LeafValidity/3 || cfg.Handover >= cfg.CAValidity/3:
		return nil, errors.New("self-rotate: the hand-over must be shorter than a third of the CA and certificate validities")
	case cfg.Use == nil:
		return nil, errors.New("self-rotate: nowhere to put the serving pair")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Rotator{cfg: cfg}, nil
}

// Run contends for the Lease and keeps this replica's serving certificate
// current until ctx ends.
func (r *Rotator) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.elect(ctx)
	}()
	r.serve(ctx)
	wg.Wait()
}

// elect runs leader election until ctx ends; leadership runs lead.
func (r *Rotator) elect(ctx context.Context) {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: r.cfg.LeaseName, Namespace: r.cfg.Namespace},
		Client:     r.cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: r.cfg.Identity},
	}
	for ctx.Err() == nil {
		elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   leaseDuration,
			RenewDeadline:   renewDeadline,
			RetryPeriod:     retryPeriod,
			ReleaseOnCancel: true,
			Name:            r.cfg.LeaseName,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: r.lead,
				OnStoppedLeading: func() {
					r.cfg.Logger.Info("self-rotate: no longer the CA leader", "lease", r.cfg.LeaseName)
				},
			},
		})
		if err != nil { // only a configuration error; the values above are valid
			r.cfg.Logger.Error("self-rotate: leader election", "error", err.Error())
			return
		}
		elector.Run(ctx) // returns when leadership is lost or ctx ends
	}
}

// lead is the leader's duty: reconcile now and every interval.
func (r *Rotator) lead(ctx context.Context) {
	r.cfg.Logger.Info("self-rotate: CA leader", "lease", r.cfg.LeaseName, "identity", r.cfg.Identity)
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		if err := r.Reconcile(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("self-rotate: CA not reconciled; retrying", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Reconcile is one pass of the leader's duty: mint or rotate the CA when it
// is missing or due, make both webhook configurations trust the bundle, then
// keep every leaf Secret's pair and bundle current (reconcileLeaves).
func (r *Rotator) Reconcile(ctx context.Context) error {
	now := r.cfg.Now()
	ca, bundle, err := r.reconcileCA(ctx, now)
	if err != nil || len(r.cfg.Leaves) == 0 {
		return err
	}
	return r.reconcileLeaves(ctx, ca, bundle, now)
}

// reconcileCA is the CA part of Reconcile; it returns the signing CA and
// the bundle in force.
func (r *Rotator) reconcileCA(ctx context.Context, now time.Time) (*Authority, []byte, error) {
	secret, err := r.cfg.Client.CoreV1().Secrets(r.cfg.Namespace).Get(ctx, r.cfg.SecretName, metav1.GetOptions{})
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return nil, nil, fmt.Errorf("read secret %s/%s: %w", r.cfg.Namespace, r.cfg.SecretName, err)
	}
	var current *Authority
	var previousBundle []byte
	if !missing {
		previousBundle = secret.Data[KeyCABundle]
		if current, err = ParseAuthority(secret.Data[KeyCACert], secret.Data[KeyCAKey]); err != nil && len(secret.Data) > 0 {
			r.cfg.Logger.Warn("self-rotate: the CA in the secret does not load; minting a new one",
				"secret", r.cfg.SecretName, "error", err.Error())
		}
	}
	if !CADue(current, now) {
		bundle := Bundle(current.Cert, previousBundle, now)
		if err := r.publish(ctx, bundle); err != nil {
			return nil, nil, err
		}
		if bytes.Equal(bundle, previousBundle) {
			return current, bundle, nil
		}
		// an earlier CA expired: the Secret's bundle drops it too
		secret = secret.DeepCopy()
		secret.Data[KeyCABundle] = bundle
		if _, err := r.cfg.Client.CoreV1().Secrets(r.cfg.Namespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
			return nil, nil, fmt.Errorf("write secret %s/%s: %w", r.cfg.Namespace, r.cfg.SecretName, err)
		}
		return current, bundle, nil
	}

	next, err := NewAuthority("dynamic-config front door CA", now, r.cfg.CAValidity)
	if err != nil {
		return nil, nil, err
	}
	bundle := Bundle(next.Cert, previousBundle, now)
	// Trust before use: the webhook configurations learn the new CA before
	// any replica can sign with it.
	if err := r.publish(ctx, bundle); err != nil {
		return nil, nil, err
	}
	data := map[string][]byte{KeyCACert: next.CertPEM, KeyCAKey: next.KeyPEM, KeyCABundle: bundle}
	if missing {
		_, err = r.cfg.Client.CoreV1().Secrets(r.cfg.Namespace).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: r.cfg.SecretName, Namespace: r.cfg.Namespace},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}, metav1.CreateOptions{})
	} else {
		secret = secret.DeepCopy()
		secret.Data = data
		_, err = r.cfg.Client.CoreV1().Secrets(r.cfg.Namespace).Update(ctx, secret, metav1.UpdateOptions{})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("write secret %s/%s: %w", r.cfg.Namespace, r.cfg.SecretName, err)
	}
	r.cfg.Logger.Info("self-rotate: new CA in force", "secret", r.cfg.SecretName,
		"not_after", next.Cert.NotAfter.UTC().Format(time.RFC3339), "rotated", current != nil)
	return next, bundle, nil
}

// publish sets caBundle on every webhook of both configurations, writing
// only the ones that differ. A missing mutating configuration is warned
// about; the validating one exists only with envPolicy rules.
func (r *Rotator) publish(ctx context.Context, bundle []byte) error {
	adm := r.cfg.Client.AdmissionregistrationV1()
	mutating := webhookConfiguration[*admissionregistrationv1.MutatingWebhookConfiguration]{
		kind:           "mutatingwebhookconfiguration",
		missingWarning: "self-rotate: the mutating webhook configuration does not exist",
		get:            adm.MutatingWebhookConfigurations().Get,
		update:         adm.MutatingWebhookConfigurations().Update,
		setCABundle: func(c *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte) bool {
			return setCABundle(c.Webhooks, func(w *admissionregistrationv1.MutatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			}, bundle)
		},
	}
	validating := webhookConfiguration[*admissionregistrationv1.ValidatingWebhookConfiguration]{
		kind:   "validatingwebhookconfiguration",
		get:    adm.ValidatingWebhookConfigurations().Get,
		update: adm.ValidatingWebhookConfigurations().Update,
		setCABundle: func(c *admissionregistrationv1.ValidatingWebhookConfiguration, bundle []byte) bool {
			return setCABundle(c.Webhooks, func(w *admissionregistrationv1.ValidatingWebhook) *admissionregistrationv1.WebhookClientConfig {
				return &w.ClientConfig
			}, bundle)
		},
	}
	if err := mutating.publish(ctx, r.cfg.Logger, r.cfg.MutatingWebhook, bundle); err != nil {
		return err
	}
	return validating.publish(ctx, r.cfg.Logger, r.cfg.ValidatingWebhook, bundle)
}

// webhookConfiguration is one kind of webhook configuration as publish reads
// and writes it: C is the mutating or the validating configuration.
type webhookConfiguration[C any] struct {
	kind           string // the resource, as the log and the errors name it
	missingWarning string // logged when the configuration does not exist; "" = skipped quietly
	get            func(context.Context, string, metav1.GetOptions) (C, error)
	update         func(context.Context, C, metav1.UpdateOptions) (C, error)
	setCABundle    func(C, []byte) bool // reports whether a webhook's caBundle changed
}

// publish sets caBundle on every webhook of the configuration name ("" =
// none) and writes the configuration when one differed; a configuration that
// does not exist is skipped.
func (w webhookConfiguration[C]) publish(ctx context.Context, logger *slog.Logger, name string, bundle []byte) error {
	if name == "" {
		return nil
	}
	cfg, err := w.get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if w.missingWarning != "" {
			logger.Warn(w.missingWarning, "name", name)
		}
		return nil
	case err != nil:
		return fmt.Errorf("read %s %s: %w", w.kind, name, err)
	}
	if !w.setCABundle(cfg, bundle) {
		return nil
	}
	if _, err := w.update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("write the caBundle of %s %s: %w", w.kind, name, err)
	}
	logger.Info("self-rotate: caBundle written", w.kind, name)
	return nil
}

// setCABundle sets bundle as the caBundle of every webhook of hooks, whose
// client configuration clientConfig points at, and reports whether one
// differed.
func setCABundle[W any](hooks []W, clientConfig func(*W) *admissionregistrationv1.WebhookClientConfig, bundle []byte) bool {
	changed := false
	for i := range hooks {
		if cc := clientConfig(&hooks[i]); !bytes.Equal(cc.CABundle, bundle) {
			cc.CABundle, changed = bundle, true
		}
	}
	return changed
}

// serve is every replica's duty: re-read the Secret (every second while
// this replica has no certificate, then every interval) and sign a new
// serving certificate when the one in use is missing, from another CA, or due.
func (r *Rotator) serve(ctx context.Context) {
	for {
		if err := r.Refresh(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("self-rotate: serving certificate not refreshed", "error", err.Error())
		}
		wait := r.cfg.Interval
		if !r.HasCertificate() && waitingPoll < wait {
			wait = waitingPoll
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// HasCertificate reports whether this replica has signed a serving certificate.
func (r *Rotator) HasCertificate() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leaf != nil
}

// Refresh reads the CA from the Secret and signs a new serving certificate
// when one is due. A Secret that does not exist yet (the leader has not
// minted the CA) is not an error.
func (r *Rotator) Refresh(ctx context.Context) error {
	secret, err := r.cfg.Client.CoreV1().Secrets(r.cfg.Namespace).Get(ctx, r.cfg.SecretName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && len(secret.Data[KeyCACert]) == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read secret %s/%s: %w", r.cfg.Namespace, r.cfg.SecretName, err)
	}
	ca, err := ParseAuthority(secret.Data[KeyCACert], secret.Data[KeyCAKey])
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", r.cfg.Namespace, r.cfg.SecretName, err)
	}
	now := r.cfg.Now()
	r.mu.Lock()
	leaf := r.leaf
	r.mu.Unlock()
	if !LeafDue(leaf, ca, now) {
		return nil
	}
	certPEM, keyPEM, err := ca.Issue(r.cfg.Hosts, now, r.cfg.LeafValidity)
	if err != nil {
		return err
	}
	if err := r.cfg.Use(certPEM, keyPEM); err != nil {
		return fmt.Errorf("put the serving pair in use: %w", err)
	}
	issued, err := parseCertificates(certPEM)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.leaf = issued[0]
	r.mu.Unlock()
	r.cfg.Logger.Info("self-rotate: serving certificate signed", "not_after",
		issued[0].NotAfter.UTC().Format(time.RFC3339), "ca_not_after", ca.Cert.NotAfter.UTC().Format(time.RFC3339))
	return nil
}
