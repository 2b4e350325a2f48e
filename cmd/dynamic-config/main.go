// Command dynamic-config is the one binary of the dynamic-config admission
// project: the decider, the front door, both in one process (serve), and the
// offline doors (inject, explain, check-installation, fleet-status), whose
// work is the doors library (doors/*); this package holds the flags, the
// wiring and the process lifecycle.
package main

import (
	"fmt"
	"io"
	"os"

	_ "golang.org/x/crypto/x509roots/fallback" // public CA roots where the system has none (the image: issue 40)

	"github.com/dynamic-config-admission/dynamic-config/internal/memlimit"
)

// Exit codes (spec 07 §1): one rule for every subcommand.
const (
	exitOK      = 0
	exitRefused = 1 // the pod was refused, or a long-running server failed at run time
	exitUsage   = 2 // usage, unreadable input, I/O error, or an invalid installation
)

// usageError prints err — after "<cmd>: ", or alone when it names its
// command itself (cmd "") — and is the exit code of a usage error.
func usageError(stderr io.Writer, cmd string, err error) int {
	if cmd != "" {
		err = fmt.Errorf("%s: %w", cmd, err)
	}
	fmt.Fprintln(stderr, err.Error())
	return exitUsage
}

// subcommand is one subcommand: what runs it and its help page (help.go).
type subcommand struct {
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
	summary string
	// synopsis is the usage line; examples are shown by --help, each a
	// comment line and a command.
	synopsis string
	examples []example
}

// subcommands is the command table. It is filled in init because the help
// pages and completion (which read it) are reached from the run functions.
var subcommands map[string]subcommand

func init() {
	subcommands = map[string]subcommand{
		"decider":            {runDecider, "the gRPC decider (holds and reloads the installation)", deciderSynopsis, deciderExamples},
		"frontdoor":          {runFrontdoor, "the admission HTTPS server (/mutate, /validate); stateless, talks to a decider", frontdoorSynopsis, frontdoorExamples},
		"serve":              {runServe, "decider and front door in one process on loopback", serveSynopsis, serveExamples},
		"inject":             {runInject, "offline mutation: prints the mutated manifest, or the refusal", injectUsage, injectExamples},
		"explain":            {runExplain, "per-value provenance and the whole decision", explainUsage, explainExamples},
		"check-installation": {runCheckInstallation, "validates an installation, prints every problem", checkInstallationSynopsis, checkInstallationExamples},
		"diff":               {runDiff, "what a candidate installation changes, workload by workload, on manifests or a cluster's workloads; exit 1 when anything differs", diffSynopsis, diffExamples},
		"check-cluster":      {runCheckCluster, "proves injection through the API server (a dry-run pod) and checks the webhook configurations", checkClusterSynopsis, checkClusterExamples},
		"audit-pods":         {runAuditPods, "pods that asked for the agent and were admitted without it, with why; exit 1 when there is one", auditPodsSynopsis, auditPodsExamples},
		"audit-reporter":     {runAuditReporter, "in-cluster reporter: watches pod metadata, exports the uninjected-pods gauge, posts an Event per pod", auditReporterSynopsis, auditReporterExamples},
		"rollout status":     {runRolloutStatus, "the rollout of every decider replica and follower and the verdict: ready, not-ready (why) or halted; exit 0 ready", rolloutStatusSynopsis, rolloutStatusExamples},
		"rollout promote":    {runRolloutPromote, "promotes the candidate: rewrites the chart values (rollout.candidate moved into place) or prints a rollout document's candidate as the installation document", rolloutPromoteSynopsis, rolloutPromoteExamples},
		"prune-secrets":      {runPruneSecrets, "deletes the Secrets cert-manager issued for the release's Certificates (the chart's hook after it stops using them)", pruneSecretsSynopsis, pruneSecretsExamples},
		"rollout restart":    {runRolloutRestart, "restarts the Deployments, StatefulSets and DaemonSets audit-pods --outdated lists, N at a time, each until its rollout finishes", rolloutRestartSynopsis, rolloutRestartExamples},
		"fleet-status":       {runFleetStatus, "every decider replica's revision, loaded-at and last reload; exit 1 on skew", fleetStatusSynopsis, fleetStatusExamples},
		"version":            {runVersion, "prints the binary version, the built-in agent image and the Go version", versionSynopsis, versionExamples},
		"completion":         {runCompletion, "prints a shell completion script: bash, zsh or fish", completionSynopsis, completionExamples},
	}
}

// groupSummaries names the groups of subcommands: a subcommand whose name
// is "<group> <verb>" (`dynamic-config rollout status`) is a verb of its
// group, with its own flags, help page and examples.
var groupSummaries = map[string]string{
	"rollout": "an installation change across the fleet: a candidate's rollout, its promotion, and the workloads an older revision injected",
}

func main() {
	memlimit.Apply(os.Getenv)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
