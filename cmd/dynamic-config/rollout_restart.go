package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/dynamic-config-admission/dynamic-config/doors/outdated"
	"github.com/dynamic-config-admission/dynamic-config/internal/kubeclient"
)

// audit-pods --outdated and rollout restart --outdated (spec 10 §8, issue
// 42): the flags; what they do is package doors/outdated's.

const rolloutRestartSynopsis = "usage: dynamic-config rollout restart --outdated --decider-target TARGET [-n NAMESPACE | -A] [--max-in-flight N] [--dry-run] [--timeout DURATION] [--kubeconfig FILE]"

var rolloutRestartExamples = []example{
	{"restart the Deployments, StatefulSets and DaemonSets of shop that audit-pods --outdated lists, one at a time", "dynamic-config rollout restart --outdated -n shop --decider-target static:///127.0.0.1:9443 --decider-plaintext"},
	{"what it would restart in every namespace (the API server's dry run: nothing changes)", "dynamic-config rollout restart --outdated -A --dry-run --decider-target static:///127.0.0.1:9443 --decider-plaintext"},
}

// outdatedFlags are what selects the outdated workloads: kubectl's
// --kubeconfig, -n and -A, and the cluster's decider whose active
// installation they are compared with (the front door's flags).
type outdatedFlags struct {
	kubeconfig, namespace, target string
	all, outdated                 bool
	decider                       deciderClientFlags
}

// register adds all but --kubeconfig, which audit-pods shares with
// audit-reporter (auditClientFlags).
func (o *outdatedFlags) register(fs *flagSet, what, outdatedHelp string) {
	fs.stringVar(&o.namespace, "namespace", "", "", "the namespace to "+what+" (default: the kubeconfig context's, \"default\" without one)")
	fs.StringVar(&o.namespace, "n", "", "") // -n: the shorthand of --namespace (pflags.go)
	fs.boolVar(&o.all, "all-namespaces", "", false, what+" every namespace")
	fs.BoolVar(&o.all, "A", false, "") // -A: the shorthand of --all-namespaces
	fs.boolVar(&o.outdated, "outdated", "", false, outdatedHelp)
	fs.stringVar(&o.target, "decider-target", "DYNAMIC_CONFIG_DECIDER_TARGET", "", "with --outdated: the cluster's decider, whose active installation the pods are compared with (dns:///name:port, static:///host:port)")
	o.decider.register(fs, "decider", "DYNAMIC_CONFIG_DECIDER_", "the decider", "the target's host")
}

// list is the outdated workloads (the report nil when it failed: the
// problem is printed) and the client that read them.
func (o *outdatedFlags) list(ctx context.Context, cmd string, stderr io.Writer) (kubernetes.Interface, *outdated.Report) {
	typed, report, err := outdated.Selection{Kubeconfig: kubeclient.Kubeconfig{Path: o.kubeconfig, UserAgent: "dynamic-config-" + cmd, QPS: 50},
		Namespace: o.namespace, All: o.all, Decider: o.decider.config(o.target)}.List(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil, nil
	}
	return typed, report
}

// runRolloutRestart is `dynamic-config rollout restart --outdated`: exit 0
// when every listed rollout finished (or, --dry-run, the API server took
// every patch), 1 at the first that did not, 2 on a usage error or when the
// workloads could not be listed.
func runRolloutRestart(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("rollout restart", stderr)
	var (
		global      globalFlags
		o           outdatedFlags
		opts        outdated.RestartOptions
		maxInFlight int64
	)
	global.register(fs, "text")
	fs.stringVar(&o.kubeconfig, "kubeconfig", "", "", kubeconfigHelp)
	o.register(fs, "restart", "restart the workloads audit-pods --outdated lists (required: the only selection there is)")
	fs.int64Var(&maxInFlight, "max-in-flight", "", 1, "rollouts at once; each is waited for until it finishes")
	fs.boolVar(&opts.DryRun, "dry-run", "", false, "send each patch as the API server's dry run (checked, RBAC included; nothing changes)")
	fs.durationVar(&opts.Timeout, "timeout", "", 5*time.Minute, "bound for each rollout; the first that does not finish in time stops the restart (exit 1)")
	if _, code, done := parseArgs(fs, &global, args, stderr); done {
		return code
	}
	if !o.outdated {
		fmt.Fprintln(stderr, "rollout restart: --outdated is required\n"+rolloutRestartSynopsis)
		return exitUsage
	}
	if !allPositive(stderr, "rollout restart", durationFlag("timeout", opts.Timeout), positiveFlag{"max-in-flight", fmt.Sprint(maxInFlight), maxInFlight > 0}) {
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	typed, report := o.list(ctx, "rollout restart", stderr)
	if report == nil {
		return exitUsage
	}
	opts.MaxInFlight, opts.Out = int(maxInFlight), stdout
	if err := outdated.Restart(ctx, typed, report.Workloads, opts); err != nil {
		fmt.Fprintln(stderr, "rollout restart: "+err.Error())
		return exitRefused
	}
	return exitOK
}
