package main

import (
	"time"

	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"
)

// selfRotateFlags are the front door's tls.mode selfRotate flags: the only
// ones that make it talk to the API server (off by default).
type selfRotateFlags struct {
	enabled           bool
	kubeconfig        string
	namespace         string
	secret            string
	lease             string
	hosts             string
	mutatingWebhook   string
	validatingWebhook string
	caValidity        time.Duration
	leafValidity      time.Duration
	interval          time.Duration
	deciderSecret     string
	deciderHosts      string
	clientSecret      string
	clientName        string
	handover          time.Duration
}

func (s *selfRotateFlags) register(fs *flagSet) {
	fs.boolVar(&s.enabled, "self-rotate", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE", false, "mint and rotate the serving CA in a Secret and write the webhook configurations' caBundle (needs the API server)")
	fs.stringVar(&s.kubeconfig, "kubeconfig", "DYNAMIC_CONFIG_WEBHOOK_KUBECONFIG", "", "kubeconfig for --self-rotate (default: the in-cluster service account)")
	fs.stringVar(&s.namespace, "self-rotate-namespace", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_NAMESPACE", "", "namespace of the CA Secret and the Lease (default: $POD_NAMESPACE, then the service account's namespace)")
	fs.stringVar(&s.secret, "self-rotate-secret", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_SECRET", "dynamic-config-frontdoor-ca", "the Secret holding the CA (ca.crt, ca.key, ca-bundle.crt)")
	fs.stringVar(&s.lease, "self-rotate-lease", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_LEASE", "dynamic-config-frontdoor-ca", "the coordination.k8s.io Lease electing the one replica that mints and rotates the CA")
	fs.stringVar(&s.hosts, "self-rotate-hosts", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HOSTS", "", "comma-separated DNS names and IP addresses of the serving certificate (required with --self-rotate)")
	fs.stringVar(&s.mutatingWebhook, "self-rotate-mutating-webhook", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_MUTATING_WEBHOOK", "dynamic-config", "MutatingWebhookConfiguration whose caBundle is written (empty = none)")
	fs.stringVar(&s.validatingWebhook, "self-rotate-validating-webhook", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_VALIDATING_WEBHOOK", "dynamic-config-env-policy", "ValidatingWebhookConfiguration whose caBundle is written when it exists (empty = none)")
	fs.durationVar(&s.caValidity, "self-rotate-ca-validity", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CA_VALIDITY", 365*24*time.Hour, "lifetime of a minted CA; it is rotated after two thirds")
	fs.durationVar(&s.leafValidity, "self-rotate-cert-validity", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CERT_VALIDITY", 7*24*time.Hour, "lifetime of a replica's serving certificate; re-signed after two thirds")
	fs.durationVar(&s.interval, "self-rotate-interval", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_INTERVAL", time.Minute, "how often the Secret and the webhook configurations are checked")
	// issue 20: the mTLS pairs between front door and decider from the same CA
	fs.stringVar(&s.deciderSecret, "self-rotate-decider-secret", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_SECRET", "", "Secret the CA leader fills with the decider's serving pair (tls.crt, tls.key) and the bundle that verifies the front door (ca.crt); empty = none")
	fs.stringVar(&s.deciderHosts, "self-rotate-decider-hosts", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_DECIDER_HOSTS", "", "comma-separated DNS names and IP addresses of the decider's serving certificate (required with --self-rotate-decider-secret)")
	fs.stringVar(&s.clientSecret, "self-rotate-client-secret", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_SECRET", "", "Secret the CA leader fills with the front door's client pair for the decider (tls.crt, tls.key) and the bundle that verifies the decider (ca.crt); empty = none")
	fs.stringVar(&s.clientName, "self-rotate-client-name", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_CLIENT_NAME", "dynamic-config-frontdoor-client", "subject common name of the front door's client certificate")
	fs.durationVar(&s.handover, "self-rotate-handover", "DYNAMIC_CONFIG_WEBHOOK_SELF_ROTATE_HANDOVER", 5*time.Minute, "how long a new CA is trusted in both pair Secrets before the pairs move to it (the kubelet's Secret-volume sync and a reload)")
}

// config is the front door's SelfRotate (nil without --self-rotate).
// The namespace defaults to $POD_NAMESPACE here, and to the service
// account's namespace in the frontdoord.
func (s *selfRotateFlags) config() *frontdoord.SelfRotate {
	if !s.enabled {
		return nil
	}
	namespace := s.namespace
	if namespace == "" {
		namespace, _ = lookupEnvVar("POD_NAMESPACE")
	}
	return &frontdoord.SelfRotate{
		Kubeconfig: s.kubeconfig, Namespace: namespace, Secret: s.secret, Lease: s.lease,
		Hosts: commaList(s.hosts), MutatingWebhook: s.mutatingWebhook, ValidatingWebhook: s.validatingWebhook,
		CAValidity: s.caValidity, LeafValidity: s.leafValidity, Interval: s.interval,
		DeciderSecret: s.deciderSecret, DeciderHosts: commaList(s.deciderHosts),
		ClientSecret: s.clientSecret, ClientName: s.clientName, Handover: s.handover,
	}
}
