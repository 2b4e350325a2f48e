package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/clustercheck"
	"github.com/dynamic-config-admission/dynamic-config/internal/kubeclient"
	"github.com/dynamic-config-admission/dynamic-config/internal/pflagview"
)

// `dynamic-config check-cluster` (issue 21): the install proof and the
// webhook configuration checks of package clustercheck, against the API
// server of a kubeconfig (flag, $KUBECONFIG, ~/.kube/config) or, in a pod,
// the in-cluster service account. The chart's install-proof hook Job runs
// it with --probe-only.

const checkClusterSynopsis = "usage: dynamic-config check-cluster [-n NAMESPACE] [--kubeconfig FILE] [--probe-only | --no-probe] [--mutating-webhook-configuration NAME] [-o text|json]"

var checkClusterExamples = []example{
	{"prove injection and check the webhooks of the release in namespace dynamic-config", "dynamic-config check-cluster -n dynamic-config"},
	{"what the chart's install-proof hook Job runs", "dynamic-config check-cluster --probe-only -n dynamic-config --probe-timeout 2m"},
	{"only the webhook configurations, as JSON", "dynamic-config check-cluster --no-probe --mutating-webhook-configuration dynamic-config -o json"},
}

type checkClusterFlags struct {
	global                globalFlags
	kubeconfig, namespace string
	output                string
	mutating, validating  string
	probeOnly, noProbe    bool
	noDial                bool
	deciderTimeout        time.Duration
	dialTimeout           time.Duration
	probe                 clustercheck.Probe
	probeAnnotations      pflagview.Repeated
}

func (f *checkClusterFlags) register(fs *flagSet) {
	f.global.register(fs, "text")
	fs.stringVar(&f.kubeconfig, "kubeconfig", "", "", "kubeconfig (default: $KUBECONFIG, ~/.kube/config, else the in-cluster service account)")
	fs.stringVar(&f.namespace, "namespace", "POD_NAMESPACE", "dynamic-config", "the release namespace: the probe pod is dry-run created there")
	fs.StringVar(&f.namespace, "n", "dynamic-config", "alias of --namespace")
	fs.StringVar(&f.output, "o", "text", "output: text or json")
	fs.completeValues("o", "text", "json")
	fs.stringVar(&f.mutating, "mutating-webhook-configuration", "", "", "comma-separated MutatingWebhookConfiguration names (default: every one holding a *.dynamic-config.rs webhook)")
	fs.stringVar(&f.validating, "validating-webhook-configuration", "", "", "comma-separated ValidatingWebhookConfiguration names (default: every one holding a *.dynamic-config.rs webhook)")
	fs.boolVar(&f.probeOnly, "probe-only", "", false, "only the install proof (what the hook Job runs: it needs create on pods in the namespace, nothing else)")
	fs.boolVar(&f.noProbe, "no-probe", "", false, "only the webhook configuration checks")
	fs.boolVar(&f.noDial, "no-dial", "", false, "do not dial the front door's endpoints for their serving certificate")
	fs.durationVar(&f.deciderTimeout, "decider-timeout", "", 2*time.Second, "the front door's --decider-timeout: timeoutSeconds must leave 1s above it")
	fs.durationVar(&f.dialTimeout, "dial-timeout", "", 3*time.Second, "bound for each TLS handshake with an endpoint")
	fs.stringVar(&f.probe.NamePrefix, "probe-name-prefix", "", "dynamic-config-install-proof", "the probe pod's generateName prefix")
	fs.stringVar(&f.probe.Image, "probe-image", "", "ghcr.io/dynamic-config-admission/dynamic-config:"+strings.ReplaceAll(binaryVersion(), "+", "_"), "the probe pod's container image (never pulled: the pod is never stored)")
	f.probeAnnotations.TypeName = "KEY=VALUE"
	fs.Var(&f.probeAnnotations, "probe-annotation", "an annotation of the probe pod, repeatable (default: inject, source consul, endpoint, key and path)")
	fs.durationVar(&f.probe.Timeout, "probe-timeout", "", 2*time.Minute, "bound for the whole install proof")
	fs.durationVar(&f.probe.AttemptTimeout, "probe-attempt-timeout", "", 15*time.Second, "bound for each dry-run create")
	fs.durationVar(&f.probe.InitialBackoff, "probe-backoff", "", time.Second, "the first wait between attempts; doubled after each")
	fs.durationVar(&f.probe.MaxBackoff, "probe-max-backoff", "", 10*time.Second, "the longest wait between attempts")
}

func runCheckCluster(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fs := newFlagSet("check-cluster", stderr)
	var f checkClusterFlags
	f.register(fs)
	logger, code, done := parseArgs(fs, &f.global, args, stderr)
	if done {
		return code
	}
	if err := f.usageError(); err != nil {
		fmt.Fprintf(stderr, "check-cluster: %v\nSee 'dynamic-config check-cluster --help'.\n", err)
		return exitUsage
	}
	client, err := kubeclient.Kubeconfig{Path: f.kubeconfig, UserAgent: "dynamic-config-check-cluster"}.Typed()
	if err != nil {
		return usageError(stderr, "check-cluster", err)
	}

	var findings []clustercheck.Finding
	if !f.probeOnly {
		c := clustercheck.Cluster{Client: client, MutatingConfigs: commaList(f.mutating), ValidatingConfigs: commaList(f.validating), Dial: !f.noDial, DialTimeout: f.dialTimeout}
		findings = append(findings, c.Check(ctx, clustercheck.Expect{DeciderTimeout: f.deciderTimeout, Now: time.Now()})...)
	}
	if !f.noProbe {
		p := f.probe
		p.Client, p.Namespace, p.Logger = client, f.namespace, logger
		res, err := p.Run(ctx)
		findings = append(findings, clustercheck.ProofFinding(&p, res, err))
	}
	report := clustercheck.NewReport(findings)
	if err := report.Write(stdout, f.output); err != nil {
		return usageError(stderr, "check-cluster", err)
	}
	if !report.OK {
		return exitRefused
	}
	return exitOK
}

func (f *checkClusterFlags) usageError() error {
	switch {
	case f.output != "text" && f.output != "json":
		return fmt.Errorf("-o is %q: text or json", f.output)
	case f.probeOnly && f.noProbe:
		return fmt.Errorf("--probe-only and --no-probe exclude each other")
	case f.namespace == "":
		return fmt.Errorf("--namespace is empty")
	}
	for _, d := range []positiveFlag{durationFlag("probe-timeout", f.probe.Timeout), durationFlag("probe-attempt-timeout", f.probe.AttemptTimeout),
		durationFlag("probe-backoff", f.probe.InitialBackoff), durationFlag("probe-max-backoff", f.probe.MaxBackoff), durationFlag("dial-timeout", f.dialTimeout)} {
		if !d.positive {
			return fmt.Errorf("--%s is %s: it must be positive", d.name, d.value)
		}
	}
	var err error
	f.probe.Annotations, err = clustercheck.ProbeAnnotations(f.probeAnnotations.Values)
	return err
}
