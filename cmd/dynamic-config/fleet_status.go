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
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/client"
)

// fleetStatusFlags are the flags of `dynamic-config fleet-status` (issue
// 12). The decider connection flags and variables are the front door's, so
// the command runs unchanged inside a front door container.
type fleetStatusFlags struct {
	global        globalFlags
	deciderTarget string
	decider       deciderClientFlags
	timeout       time.Duration
	skewGrace     time.Duration
	output        string
}

func (f *fleetStatusFlags) register(fs *flagSet) {
	f.global.register(fs, "text")
	fs.stringVar(&f.deciderTarget, "decider-target", "DYNAMIC_CONFIG_DECIDER_TARGET", "", "the deciders: dns:///name:port (every address the name resolves to) or static:///host:port,host:port (required)")
	f.decider.register(fs, "decider", "DYNAMIC_CONFIG_DECIDER_", "the deciders", "the dns:/// name")
	fs.durationVar(&f.timeout, "timeout", "", 5*time.Second, "bound for resolving and for each replica's answer")
	fs.durationVar(&f.skewGrace, "skew-grace", "", 60*time.Second, "a connected follower on another revision than its leader for longer than this is skew (spec 09 §4)")
	fs.StringVar(&f.output, "o", fleetstatus.Outputs[0], "output: table or json")
	fs.completeValues("o", fleetstatus.Outputs...)
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
	var f fleetStatusFlags
	f.register(fs)
	if _, code, done := parseArgs(fs, &f.global, args, stderr); done {
		return code
	}
	if err := fleetstatus.CheckFlags(f.deciderTarget, f.output); err != nil {
		fmt.Fprintln(stderr, "fleet-status: "+err.Error())
		return exitUsage
	}
	if !allPositive(stderr, "fleet-status", durationFlag("timeout", f.timeout), durationFlag("skew-grace", f.skewGrace)) {
		return exitUsage
	}
	resolveCtx, cancel := context.WithTimeout(ctx, f.timeout)
	addrs, name, err := fleetstatus.Addresses(resolveCtx, f.deciderTarget)
	cancel()
	if err != nil {
		fmt.Fprintln(stderr, "fleet-status: "+err.Error())
		return exitUsage
	}
	decider := f.decider
	if decider.serverName == "" {
		decider.serverName = name
	}

	replicas := fleetstatus.AskAll(ctx, addrs, func(addr string) client.Config { return decider.config("passthrough:///" + addr) }, f.timeout)
	if agreed, err := fleetstatus.Write(stdout, replicas, f.output, f.skewGrace, time.Now()); err != nil || !agreed {
		return exitRefused
	}
	return exitOK
}
