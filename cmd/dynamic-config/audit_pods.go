package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"

	"github.com/dynamic-config-admission/dynamic-config/doors/outdated"
	"github.com/dynamic-config-admission/dynamic-config/internal/kubeclient"
	"github.com/dynamic-config-admission/dynamic-config/internal/promruntime"
	"github.com/dynamic-config-admission/dynamic-config/podaudit"
)

// audit-pods and audit-reporter (issue 21): the flags and the wiring; what
// they do is package podaudit's.

const (
	auditPodsSynopsis     = "usage: dynamic-config audit-pods [-n NAMESPACE | -A] [-o table|json] [--kubeconfig FILE] [--webhook-configuration NAME] [--outdated --decider-target TARGET]"
	auditReporterSynopsis = "usage: dynamic-config audit-reporter [--kubeconfig FILE] [--webhook-configuration NAME] [--metrics-addr HOST:PORT] [--interval DURATION] [--max-namespaces N]"
)

var (
	auditPodsExamples = []example{
		{"every pod of the cluster that asked for the agent and was admitted without it (exit 1 when there is one)", "dynamic-config audit-pods -A"},
		{"one namespace, as JSON, against the release \"platform\"'s webhook where several releases run", "dynamic-config audit-pods -n shop -o json --webhook-configuration platform-dynamic-config"},
		{"the workloads an older revision injected whose agent part the decider's active installation would change (exit 1 when there is one)", "dynamic-config audit-pods -A --outdated --decider-target static:///127.0.0.1:9443 --decider-plaintext"},
	}
	auditReporterExamples = []example{
		{"the in-cluster reporter, as the chart runs it (audit.enabled)", "dynamic-config audit-reporter --webhook-configuration dynamic-config"},
	}
)

const kubeconfigHelp = "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster service account)"

// auditClientFlags are the API server flags both audit commands share.
type auditClientFlags struct {
	kubeconfig, configuration, webhook string
}

func (a *auditClientFlags) register(fs *flagSet) {
	fs.stringVar(&a.kubeconfig, "kubeconfig", "", "", kubeconfigHelp)
	fs.stringVar(&a.configuration, "webhook-configuration", "DYNAMIC_CONFIG_AUDIT_WEBHOOK_CONFIGURATION", "", "the MutatingWebhookConfiguration holding the injection webhook (the chart's: the release's full name; default: the one that holds it)")
	fs.stringVar(&a.webhook, "webhook-name", "", podaudit.DefaultWebhookName, "the injection webhook's name inside it")
}

// clients builds the metadata and typed clients; qps bounds the rate.
func (a *auditClientFlags) clients(userAgent string, qps float32) (podaudit.Clients, error) {
	k := kubeclient.Kubeconfig{Path: a.kubeconfig, UserAgent: userAgent, QPS: qps}
	md, err := k.Metadata()
	if err != nil {
		return podaudit.Clients{}, err
	}
	typed, err := k.Typed()
	return podaudit.Clients{Metadata: md, Typed: typed}, err
}

// runAuditPods is `dynamic-config audit-pods`: exit 0 when no pod asked
// and went uninjected (declined pods may be listed), 1 when one did, 2 on a
// usage error or when the API server could not be read.
func runAuditPods(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("audit-pods", stderr)
	var (
		global  globalFlags
		client  auditClientFlags
		o       outdatedFlags
		output  string
		timeout time.Duration
	)
	global.register(fs, "text")
	client.register(fs)
	o.register(fs, "audit", "list instead the workloads whose pods an older revision injected and whose agent part the active installation would change (spec 10 §8)")
	fs.StringVar(&output, "o", "table", "output: table or json")
	fs.completeValues("o", "table", "json")
	fs.durationVar(&timeout, "timeout", "", 2*time.Minute, "bound for the whole listing")
	if _, code, done := parseArgs(fs, &global, args, stderr); done {
		return code
	}
	if problem := outdated.CheckOutput(output); problem != "" {
		fmt.Fprintln(stderr, "audit-pods: "+problem)
		return exitUsage
	}
	if !allPositive(stderr, "audit-pods", durationFlag("timeout", timeout)) {
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if o.kubeconfig = client.kubeconfig; o.outdated {
		return auditOutdated(ctx, &o, output, stdout, stderr)
	}
	namespace, err := kubeclient.Kubeconfig{Path: client.kubeconfig}.Scope(o.namespace, o.all)
	clients, cerr := client.clients("dynamic-config-audit-pods", 50)
	var report *podaudit.Report
	if err = errors.Join(err, cerr); err == nil {
		report, err = podaudit.List(ctx, clients, podaudit.ListOptions{Namespace: namespace, Configuration: client.configuration, Webhook: client.webhook})
	}
	if err == nil {
		err = podaudit.Write(stdout, stderr, output, report)
	}
	if err != nil {
		return usageError(stderr, "audit-pods", err)
	}
	if len(podaudit.Counted(report.Findings)) > 0 {
		return exitRefused
	}
	return exitOK
}

// auditOutdated is `audit-pods --outdated`: exit 1 when a workload is
// listed.
func auditOutdated(ctx context.Context, o *outdatedFlags, output string, stdout, stderr io.Writer) int {
	_, report := o.list(ctx, "audit-pods", stderr)
	if report == nil {
		return exitUsage
	}
	if err := outdated.Write(stdout, output, report); err != nil {
		return usageError(stderr, "audit-pods", err)
	}
	if len(report.Workloads) > 0 {
		return exitRefused
	}
	return exitOK
}

// runAuditReporter is `dynamic-config audit-reporter`: the in-cluster
// reporter (chart audit.enabled). It runs until SIGTERM; exit 1 when the
// caches cannot sync or a listener fails.
func runAuditReporter(args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := newFlagSet("audit-reporter", stderr)
	var (
		global                   globalFlags
		client                   auditClientFlags
		metricsAddr, namespace   string
		interval                 time.Duration
		maxNamespaces, maxEvents int64
	)
	global.register(fs, "json")
	client.register(fs)
	fs.stringVar(&metricsAddr, "metrics-addr", "DYNAMIC_CONFIG_AUDIT_METRICS_ADDR", "0.0.0.0:9094", "plain HTTP listener for /metrics, /healthz, /readyz")
	fs.stringVar(&namespace, "namespace", "DYNAMIC_CONFIG_AUDIT_NAMESPACE", "", "watch this namespace only (default: every namespace)")
	fs.durationVar(&interval, "interval", "DYNAMIC_CONFIG_AUDIT_INTERVAL", 30*time.Second, "how often the cached pods are audited and the gauge set")
	fs.int64Var(&maxNamespaces, "max-namespaces", "DYNAMIC_CONFIG_AUDIT_MAX_NAMESPACES", 50, "the gauge's namespace label values: the namespaces with the most uninjected pods keep their name, the rest are summed under namespace=\"_other\"")
	fs.int64Var(&maxEvents, "max-events-per-pass", "DYNAMIC_CONFIG_AUDIT_MAX_EVENTS_PER_PASS", 100, "Events posted per pass at most (the rest follow in the next passes); 0 = no Events")
	logger, code, done := parseArgs(fs, &global, args, stderr)
	if done {
		return code
	}
	if !allPositive(stderr, "audit-reporter", durationFlag("interval", interval),
		positiveFlag{"max-namespaces", fmt.Sprint(maxNamespaces), maxNamespaces > 0}) {
		return exitUsage
	}
	if maxEvents < 0 {
		fmt.Fprintf(stderr, "audit-reporter: --max-events-per-pass is %d: it must not be negative\n", maxEvents)
		return exitUsage
	}
	klog.SetSlogLogger(logger)
	clients, err := client.clients("dynamic-config-audit-reporter", 20)
	if err != nil {
		return usageError(stderr, "audit-reporter", err)
	}
	reg := prometheus.NewRegistry()
	if err := promruntime.Register(reg); err != nil {
		return usageError(stderr, "audit-reporter", err)
	}
	instance, _ := os.Hostname()
	rep, err := podaudit.NewReporter(podaudit.ReporterConfig{
		Clients: clients, Configuration: client.configuration, Webhook: client.webhook, Namespace: namespace,
		Interval: interval, MaxNamespaces: int(maxNamespaces), MaxEventsPerPass: int(maxEvents),
		Instance: instance, Logger: logger, Registry: reg,
	})
	if err != nil {
		return usageError(stderr, "audit-reporter", err)
	}
	lis, err := net.Listen("tcp", metricsAddr)
	if err != nil {
		fmt.Fprintf(stderr, "audit-reporter: metrics listener: %v\n", err)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if rep.Serve(ctx, lis, reg) != nil {
		return exitRefused
	}
	return exitOK
}
