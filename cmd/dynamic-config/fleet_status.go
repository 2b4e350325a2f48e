package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/doors/fleetstatus"
)

// deciderFleetFlags are the flags of the commands that ask every decider
// replica (fleet-status, rollout status; issue 12). The decider connection
// flags and variables are the front door's, so the commands run unchanged
// inside a front door container.
type deciderFleetFlags struct {
	global        globalFlags
	deciderTarget string
	decider       deciderClientFlags
	timeout       time.Duration
}

func (f *deciderFleetFlags) register(fs *flagSet) {
	f.global.register(fs, "text")
	fs.stringVar(&f.deciderTarget, "decider-target", "DYNAMIC_CONFIG_DECIDER_TARGET", "", "the deciders: dns:///name:port (every address the name resolves to) or static:///host:port,host:port (required)")
	f.decider.register(fs, "decider", "DYNAMIC_CONFIG_DECIDER_", "the deciders", "the dns:/// name")
	fs.durationVar(&f.timeout, "timeout", "", 5*time.Second, "bound for resolving and for each replica's answer")
}

// ask asks every replica for its installation; the problem of a target
// that names none is printed (ok false: exit 2).
func (f *deciderFleetFlags) ask(ctx context.Context, cmd string, stderr io.Writer, more ...positiveFlag) (replicas []fleetstatus.Replica, ok bool) {
	if f.deciderTarget == "" {
		fmt.Fprintf(stderr, "%s: --decider-target is required\n", cmd)
		return nil, false
	}
	if !allPositive(stderr, cmd, append([]positiveFlag{durationFlag("timeout", f.timeout)}, more...)...) {
		return nil, false
	}
	replicas, err := fleetstatus.AskTarget(ctx, f.deciderTarget, f.decider.config(""), f.timeout)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return nil, false
	}
	return replicas, true
}

// runFleetStatus is `dynamic-config fleet-status`: one line per decider
// replica (revision, loaded-at, last reload), exit 1 on revision skew, an
// unreachable replica, or a follower behind or refusing (doors/fleetstatus).
func runFleetStatus(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return fleetStatusMain(ctx, args, stdout, stderr)
}

func fleetStatusMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("fleet-status", stderr)
	var f deciderFleetFlags
	f.register(fs)
	var skewGrace time.Duration
	var output string
	fs.durationVar(&skewGrace, "skew-grace", "", 60*time.Second, "a connected follower on another revision than its leader for longer than this is skew (spec 09 §4)")
	fs.StringVar(&output, "o", fleetstatus.Outputs[0], "output: table or json")
	fs.completeValues("o", fleetstatus.Outputs...)
	if _, code, done := parseArgs(fs, &f.global, args, stderr); done {
		return code
	}
	if err := fleetstatus.CheckFlags(f.deciderTarget, output); err != nil {
		return usageError(stderr, "fleet-status", err)
	}
	replicas, ok := f.ask(ctx, "fleet-status", stderr, durationFlag("skew-grace", skewGrace))
	if !ok {
		return exitUsage
	}
	if agreed, err := fleetstatus.Write(stdout, replicas, output, skewGrace, time.Now()); err != nil || !agreed {
		return exitRefused
	}
	return exitOK
}
