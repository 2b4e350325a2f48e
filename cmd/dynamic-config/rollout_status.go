package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/doors/rolloutstatus"
)

const rolloutStatusSynopsis = "usage: dynamic-config rollout status --decider-target TARGET [--decider-plaintext | --decider-ca FILE] [--min-decisions N] [--soak DURATION] [-o text|json]"

var rolloutStatusExamples = []example{
	{"is the candidate ready to promote? (exit 0 ready, 1 not-ready or halted)", "dynamic-config rollout status --decider-target dns:///dynamic-config-decider.dynamic-config.svc:9090 --decider-ca ca.crt"},
	{"a stricter bar, as JSON for a pipeline", "dynamic-config rollout status --decider-target static:///127.0.0.1:9090 --decider-plaintext --min-decisions 1000 --soak 24h -o json"},
}

// runRolloutStatus is `dynamic-config rollout status` (spec 10 §5): the
// rollout of every decider replica and follower and the verdict
// (doors/rolloutstatus); exit 0 ready, 1 not-ready or halted, 2 usage.
func runRolloutStatus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("rollout status", stderr)
	var f deciderFleetFlags
	f.register(fs)
	c := rolloutstatus.DefaultCriteria
	fs.Uint64Var(&c.MinDecisions, "min-decisions", c.MinDecisions, "ready takes at least this many decisions compared, over every decider")
	fs.durationVar(&c.Soak, "soak", "", c.Soak, "ready takes the candidate compared for at least this long")
	output := fs.String("o", "text", "output: text or json (one JSON value)")
	fs.completeValues("o", rolloutstatus.Outputs...)
	if _, code, done := parseArgs(fs, &f.global, args, stderr); done {
		return code
	}
	if !slices.Contains(rolloutstatus.Outputs, *output) {
		fmt.Fprintf(stderr, "rollout status: -o is %q: text or json\n", *output)
		return exitUsage
	}
	replicas, ok := f.ask(context.Background(), "rollout status", stderr, positiveFlag{"soak", c.Soak.String(), c.Soak >= 0})
	if !ok {
		return exitUsage
	}
	report := rolloutstatus.Build(replicas, c, time.Now())
	if err := report.Write(stdout, *output); err != nil {
		return usageError(stderr, "rollout status", err)
	}
	if report.Verdict != rolloutstatus.Ready {
		return exitRefused
	}
	return exitOK
}
