// Package kubeclient reaches the API server the way kubectl does, for the
// commands that read or change the cluster from outside the two processes
// (check-cluster, audit-pods, audit-reporter, and the rollout and what-if
// commands): the kubeconfig at the path given, else $KUBECONFIG, else
// ~/.kube/config, else the in-cluster service account.
package kubeclient

import (
	"errors"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Kubeconfig is where the client's configuration comes from: Path ("" for
// kubectl's search) and the name the API server sees in its audit log.
type Kubeconfig struct {
	Path      string
	UserAgent string
	// QPS bounds the request rate (0: client-go's default); the burst is
	// twice it.
	QPS float32
}

func (k Kubeconfig) loader() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.Path
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
}

// REST is the client configuration.
func (k Kubeconfig) REST() (*rest.Config, error) {
	cfg, err := k.loader().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("API server client: %w", err)
	}
	cfg.UserAgent = k.UserAgent
	if k.QPS > 0 {
		cfg.QPS, cfg.Burst = k.QPS, int(2*k.QPS)
	}
	return cfg, nil
}

// Typed is the typed clientset.
func (k Kubeconfig) Typed() (kubernetes.Interface, error) {
	cfg, err := k.REST()
	if err != nil {
		return nil, err
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("API server client: %w", err)
	}
	return c, nil
}

// Metadata is the metadata-only client (objects as PartialObjectMetadata).
func (k Kubeconfig) Metadata() (metadata.Interface, error) {
	cfg, err := k.REST()
	if err != nil {
		return nil, err
	}
	c, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("API server client: %w", err)
	}
	return c, nil
}

// Namespace is the kubeconfig context's namespace, as kubectl reads it:
// "default" when the context names none.
func (k Kubeconfig) Namespace() string {
	ns, _, err := k.loader().Namespace()
	if err != nil || ns == "" {
		return "default"
	}
	return ns
}

// Scope is the namespace a command with kubectl's -n and -A reads: "" (every
// namespace) with -A, the one given, else the kubeconfig context's; -n with
// -A is an error.
func (k Kubeconfig) Scope(namespace string, all bool) (string, error) {
	switch {
	case all && namespace != "":
		return "", errors.New("-n and -A exclude each other")
	case all:
		return "", nil
	case namespace != "":
		return namespace, nil
	}
	return k.Namespace(), nil
}
