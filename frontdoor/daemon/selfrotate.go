package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/selfrotate"
	"github.com/dynamic-config-admission/dynamic-config/internal/certs"
)

// inClusterNamespaceFile holds the pod's namespace under a service account.
const inClusterNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// rotator builds the rotator that signs pair's certificate.
func (s *SelfRotate) rotator(pair *certs.Pair, logger *slog.Logger) (*selfrotate.Rotator, error) {
	if len(s.Hosts) == 0 {
		return nil, errors.New("--self-rotate needs --self-rotate-hosts (the front door Service's DNS names)")
	}
	var leaves []selfrotate.Leaf
	if s.DeciderSecret != "" {
		if len(s.DeciderHosts) == 0 {
			return nil, errors.New("--self-rotate-decider-secret needs --self-rotate-decider-hosts (the decider Service's DNS names)")
		}
		leaves = append(leaves, selfrotate.Leaf{Secret: s.DeciderSecret, Hosts: s.DeciderHosts})
	} else if s.DeciderHosts != nil {
		return nil, errors.New("--self-rotate-decider-hosts needs --self-rotate-decider-secret")
	}
	if s.ClientSecret != "" {
		leaves = append(leaves, selfrotate.Leaf{Secret: s.ClientSecret, CommonName: s.ClientName})
	}
	namespace := s.Namespace
	if namespace == "" {
		if b, err := os.ReadFile(inClusterNamespaceFile); err == nil {
			namespace = strings.TrimSpace(string(b))
		}
	}
	if namespace == "" {
		return nil, errors.New("--self-rotate needs --self-rotate-namespace outside a pod")
	}
	var config *rest.Config
	var err error
	if s.Kubeconfig != "" {
		config, err = clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	} else {
		config, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("--self-rotate: API server client: %w", err)
	}
	config.UserAgent = "dynamic-config-frontdoor"
	klog.SetSlogLogger(logger) // client-go's leader election logs through the front door's logger
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("--self-rotate: API server client: %w", err)
	}
	host, _ := os.Hostname()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return selfrotate.New(selfrotate.Config{
		Client:            client,
		Namespace:         namespace,
		SecretName:        s.Secret,
		LeaseName:         s.Lease,
		Identity:          host + "_" + hex.EncodeToString(suffix),
		MutatingWebhook:   s.MutatingWebhook,
		ValidatingWebhook: s.ValidatingWebhook,
		Hosts:             s.Hosts,
		CAValidity:        s.CAValidity,
		LeafValidity:      s.LeafValidity,
		Interval:          s.Interval,
		Leaves:            leaves,
		Handover:          s.Handover,
		Use:               pair.Use,
		Logger:            logger,
	})
}
