package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// targetTwoProcessRollout is the two-process shape with a rollout in
// shadow (spec 10 §3, issue 41): the decider decides every admission with
// the candidate too, compares the two decisions and counts the result.
const targetTwoProcessRollout = "two-process+rollout"

// rolloutCandidateImage is the candidate's agent image: it changes every
// injected pod (result changed), so every admission also updates its
// workload's entry in the list of differing workloads — the costlier case.
const rolloutCandidateImage = "ghcr.io/dynamic-config-rs/dynamic-config-agent:v0.4.0"

// rolloutTarget is the most a rollout may add to the two-process CPU per
// admission (issue 41: at most one more DecidePlan in the decider).
const rolloutTarget = 1.15

// startTwoProcessUnderRollout starts the two-process shape whose decider
// reads a rollout document: the installation under measure as the
// candidate, with another agent image, in shadow.
func startTwoProcessUnderRollout(o *options, dir string) (*target, error) {
	doc, err := os.ReadFile(o.installation)
	if err != nil {
		return nil, fmt.Errorf("rollout: %w", err)
	}
	var b strings.Builder
	b.WriteString("candidate:\n")
	for _, line := range strings.Split(strings.TrimRight(string(doc), "\n"), "\n") {
		b.WriteString("  " + line + "\n")
	}
	b.WriteString("  environment:\n    DYNAMIC_CONFIG_AGENT_IMAGE: " + rolloutCandidateImage + "\nstage: shadow\n")
	path := filepath.Join(dir, "rollout.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return nil, fmt.Errorf("rollout: %w", err)
	}
	return startTwoProcess(o, o.binary, targetTwoProcessRollout, []string{"--rollout", path}, nil)
}

// reportRollout prints, per concurrency, the two-process CPU per admission
// with and without a rollout, measured in this run, their ratio, and both
// as ratios to the floor of the same concurrency.
func reportRollout(w io.Writer, cells []*cell) {
	var rows []string
	for _, x := range cells {
		if x.target != targetTwoProcessRollout {
			continue
		}
		two, floor := findCell(cells, targetTwoProcess, x.concurrency), findCell(cells, targetFloor, x.concurrency)
		if two == nil || floor == nil {
			continue
		}
		rows = append(rows, fmt.Sprintf("| %d | %.1f | %.1f | %.2f | %.1f | %.2f | %s | %s |", x.concurrency, two.cpuPerOp(), x.cpuPerOp(),
			ratio(x.cpuPerOp(), two.cpuPerOp()), floor.cpuPerOp(), ratio(x.cpuPerOp(), floor.cpuPerOp())-ratio(two.cpuPerOp(), floor.cpuPerOp()),
			short(two.quantile(0.5)), short(x.quantile(0.5))))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nrollout (issue 41): two-process with a rollout in shadow (the candidate changes every injected pod's agent image) against without, this run:")
	fmt.Fprintln(w, "| c | CPU µs/adm without | CPU µs/adm with | with ×without | floor CPU µs/adm | added ×floor | p50 without | p50 with |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rows {
		fmt.Fprintln(w, r)
	}
}

// checkRolloutTarget prints issue 41's target: at c=8 a rollout costs at
// most 1.15× the two-process CPU per admission.
func checkRolloutTarget(w io.Writer, cells []*cell) (missed bool) {
	with, without := findCell(cells, targetTwoProcessRollout, 8), findCell(cells, targetTwoProcess, 8)
	if with == nil || without == nil {
		return false
	}
	r := ratio(with.cpuPerOp(), without.cpuPerOp())
	verdict := "met"
	if r > rolloutTarget {
		verdict, missed = "MISSED", true
	}
	fmt.Fprintf(w, "\ntargets (a rollout against none, this run):\n  %-34s %-7s %.2f×\n", fmt.Sprintf("c=8 CPU/admission ≤ %.2f×", rolloutTarget), verdict, r)
	return missed
}
