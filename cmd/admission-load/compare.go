package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"slices"
)

// pairResult is one base/new pair at one concurrency.
type pairResult struct {
	base, head *cell
}

// compare alternates the two-process shape of -base-binary and -binary,
// restarting both for every run, and prints the CPU-per-admission ratio
// new/base of each pair and their median and spread (issue 25): two builds
// measured minutes apart on a noisy machine differ by more than most
// changes do, two builds interleaved in one run do not. Each pair swaps
// which build goes first, so a drift of the machine falls on both.
func compare(ctx context.Context, o *options, clientTLS *tls.Config, stdout, stderr io.Writer) int {
	reqs, err := requests(false)
	if err != nil {
		fmt.Fprintln(stderr, "admission-load:", err)
		return 2
	}
	// The seed mix: every request a new question, so that a build with the
	// decision cache is measured on its miss path (issue 43).
	seed := &mix{name: mixSeed, reqs: reqs}
	fmt.Fprintf(stdout, "compare: new %s against base %s, two-process, the seed mix (every request a new question: the decider's path), %d pairs per concurrency, the first of each pair alternating\n\n", o.binary, o.baseBinary, o.pairs)
	errors := 0
	for _, c := range o.concurrency {
		var pairs []pairResult
		for i := range o.pairs {
			var p pairResult
			order := []string{o.baseBinary, o.binary}
			if i%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, bin := range order {
				cl, err := measureTwoProcess(ctx, o, bin, c, clientTLS, seed)
				if err != nil {
					fmt.Fprintln(stderr, "admission-load:", err)
					return 2
				}
				errors += cl.errors
				if bin == o.baseBinary {
					p.base = cl
				} else {
					p.head = cl
				}
			}
			fmt.Fprintf(stderr, "  c=%-3d pair %d: base %.0f, new %.0f CPU µs/adm\n", c, i+1, p.base.cpuPerOp(), p.head.cpuPerOp())
			pairs = append(pairs, p)
		}
		reportPairs(stdout, c, pairs)
	}
	if errors > 0 {
		fmt.Fprintf(stdout, "\nerrors: %d wrong or failed answers\n", errors)
		return 1
	}
	return 0
}

// measureTwoProcess starts binary's two-process shape, runs one cell at
// concurrency c and stops it.
func measureTwoProcess(ctx context.Context, o *options, binary string, c int, clientTLS *tls.Config, m *mix) (*cell, error) {
	t, err := startTwoProcess(o, binary)
	if t != nil {
		defer t.stop()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	do, done := httpsCaller(t.url, clientTLS, m, c)
	cl := closedLoop(ctx, t.name, c, o.warmup, o.window, do, t.cpu, nil)
	done()
	if err := t.alive(); err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	return cl, nil
}

// reportPairs prints each pair's CPU per admission and p50, the ratios
// new/base, and the median ratio with its spread (min–max).
func reportPairs(w io.Writer, c int, pairs []pairResult) {
	fmt.Fprintf(w, "c=%d\n| pair | base CPU µs/adm | new CPU µs/adm | CPU new/base | base p50 | new p50 | p50 new/base |\n|--:|--:|--:|--:|--:|--:|--:|\n", c)
	var cpu, p50 []float64
	for i, p := range pairs {
		rc := ratio(p.head.cpuPerOp(), p.base.cpuPerOp())
		rp := ratio(seconds(p.head.quantile(0.5)), seconds(p.base.quantile(0.5)))
		cpu, p50 = append(cpu, rc), append(p50, rp)
		fmt.Fprintf(w, "| %d | %.0f | %.0f | %.3f | %s | %s | %.3f |\n", i+1, p.base.cpuPerOp(), p.head.cpuPerOp(), rc,
			short(p.base.quantile(0.5)), short(p.head.quantile(0.5)), rp)
	}
	fmt.Fprintf(w, "CPU per admission new/base: median %s\np50 new/base:               median %s\n\n", spread(cpu), spread(p50))
}

// spread is "median (min–max over n)".
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "none"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf("%.3f× (%.3f–%.3f over %d pairs)", m, s[0], s[len(s)-1], len(s))
}
