package main

import (
	"context"
	"io"

	"github.com/dynamic-config-admission/dynamic-config/doors/whatif"
)

const diffSynopsis = "usage: dynamic-config diff (--installation OLD | --values OLD) (--candidate NEW | --candidate-values NEW | --rollout FILE) (-f FILE|DIR|- ... | --from-cluster [-n NS | -A]) [--show-values] [-o text|json]"

var diffExamples = []example{
	{"what a pull request's candidate values change on the repository's manifests (exit 1 when anything differs)", "dynamic-config diff --values values.yaml --candidate-values values.pr.yaml -f manifests/"},
	{"the values' own rollout.candidate against every workload of the cluster, with the values", "dynamic-config diff --values values.yaml --from-cluster -A --show-values"},
}

// runDiff is `dynamic-config diff` (spec 10 §7; package whatif): exit 0
// when nothing differs, 1 when a workload does, 2 on a usage or load error.
func runDiff(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o whatif.Options
	cmd := offlineCommand{name: "diff", synopsis: diffSynopsis, outputs: whatif.Outputs, outputDefault: whatif.OutputText, filesOptional: true,
		fileHelp: "manifests of Pods and workloads (as inject takes them): a file, a directory or - for stdin; repeatable",
		flags: func(fs *flagSet, _ *offlineFlags) {
			fs.StringVar(&o.Candidate, "candidate", "", "the candidate installation document")
			fs.StringVar(&o.CandidateValues, "candidate-values", "", "the candidate's chart values file (instead of --candidate)")
			fs.StringVar(&o.Rollout, "rollout", "", "a rollout document whose candidate is compared (default with --values: the values' rollout.candidate)")
			fs.BoolVar(&o.FromCluster, "from-cluster", false, "compare the cluster's workloads (through the kubeconfig) instead of -f")
			fs.BoolVar(&o.AllNamespaces, "A", false, "with --from-cluster: every namespace")
			fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file for --from-cluster (default: $KUBECONFIG, else ~/.kube/config)")
			fs.BoolVar(&o.ShowValues, "show-values", false, "add each differing path's old and new value")
		}}
	f, code, done := parseOfflineFlags(cmd, args, stderr)
	if done {
		return code
	}
	o.Active, o.ClassesFile, o.Files, o.Stdin, o.Namespace, o.Cluster = f.inst.source(), f.classesFile, f.files.Values, stdin, f.namespace, f.cluster
	report, err := whatif.Run(context.Background(), o)
	if err == nil {
		err = report.Write(stdout, f.output)
	}
	if err != nil {
		return usageError(stderr, "diff", err)
	}
	if report.Differs() {
		return exitRefused
	}
	return exitOK
}
