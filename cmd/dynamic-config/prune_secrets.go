package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/dynamic-config-admission/dynamic-config/secretprune"
)

// `dynamic-config prune-secrets` (issue 40): the chart's prune-secrets hook
// Job deletes the Secrets cert-manager issued for the release's Certificates
// once the release no longer has them (package secretprune).

const pruneSecretsSynopsis = "usage: dynamic-config prune-secrets [-n NAMESPACE] [--kubeconfig FILE] --secret NAME [--secret NAME ...]"

var pruneSecretsExamples = []example{
	{"what the chart's hook runs after a switch away from tls.mode certManager, and after helm uninstall in that mode",
		"dynamic-config prune-secrets -n dynamic-config --secret dynamic-config-frontdoor-cert-manager-tls"},
}

func runPruneSecrets(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fs := newFlagSet("prune-secrets", stderr)
	var (
		global                globalFlags
		kubeconfig, namespace string
		secrets               secretNames
	)
	global.register(fs, "text")
	fs.stringVar(&kubeconfig, "kubeconfig", "", "", "kubeconfig (default: $KUBECONFIG, ~/.kube/config, else the in-cluster service account)")
	fs.stringVar(&namespace, "namespace", "POD_NAMESPACE", "dynamic-config", "the release namespace")
	fs.StringVar(&namespace, "n", "dynamic-config", "alias of --namespace")
	fs.Var(&secrets, "secret", "a Secret cert-manager issued for the release, repeatable: deleted unless Helm manages it or cert-manager did not write it")
	_, code, done := parseArgs(fs, &global, args, stderr)
	if done {
		return code
	}
	if len(secrets) == 0 || namespace == "" {
		fmt.Fprintf(stderr, "prune-secrets: --secret and --namespace are required\nSee 'dynamic-config prune-secrets --help'.\n")
		return exitUsage
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	config, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fmt.Fprintf(stderr, "prune-secrets: API server client: %v\n", err)
		return exitUsage
	}
	config.UserAgent = "dynamic-config-prune-secrets"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(stderr, "prune-secrets: API server client: %v\n", err)
		return exitUsage
	}
	outcomes, err := secretprune.Prune(ctx, client, namespace, secrets)
	for _, o := range outcomes {
		if o.Why == "" {
			fmt.Fprintf(stdout, "secret %s/%s: %s\n", namespace, o.Name, o.Action)
		} else {
			fmt.Fprintf(stdout, "secret %s/%s: %s: %s\n", namespace, o.Name, o.Action, o.Why)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "prune-secrets: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// secretNames is the repeatable --secret flag.
type secretNames []string

func (s *secretNames) String() string     { return strings.Join(*s, ",") }
func (s *secretNames) Set(v string) error { *s = append(*s, v); return nil }

// Type names the value in the help (pflag).
func (s *secretNames) Type() string { return "NAME" }
