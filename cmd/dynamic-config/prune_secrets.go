package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dynamic-config-admission/dynamic-config/internal/kubeclient"
	"github.com/dynamic-config-admission/dynamic-config/internal/pflagview"
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
		secrets               = pflagview.Repeated{TypeName: "NAME"}
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
	if len(secrets.Values) == 0 || namespace == "" {
		fmt.Fprintf(stderr, "prune-secrets: --secret and --namespace are required\nSee 'dynamic-config prune-secrets --help'.\n")
		return exitUsage
	}
	client, err := kubeclient.Kubeconfig{Path: kubeconfig, UserAgent: "dynamic-config-prune-secrets"}.Typed()
	if err != nil {
		return usageError(stderr, "prune-secrets", err)
	}
	outcomes, err := secretprune.Prune(ctx, client, namespace, secrets.Values)
	secretprune.WriteOutcomes(stdout, namespace, outcomes)
	if err != nil {
		return usageError(stderr, "prune-secrets", err)
	}
	return exitOK
}
