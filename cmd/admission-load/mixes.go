package main

// The request mixes (issue 43). The front door's decision cache answers a
// question it asked before without the decider, so what a run measures
// depends on how often questions repeat:
//
//   - seed: the corpus round robin, every request a new question (a label
//     of its own): the decider's path, the cache's miss — what the tables
//     of issues 11 and 25 measure;
//   - repeat: one ReplicaSet's pod, every request the same question with
//     its own uid: the hit path;
//   - fleet: 1 000 workloads' templates, drawn Zipf-distributed (s = 1.1:
//     a few workloads make most pods), the hit rate printed.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

// Mix names.
const (
	mixSeed   = "seed"
	mixRepeat = "repeat"
	mixFleet  = "fleet"
)

// Sizes of the repeat and fleet mixes.
const (
	repeatUIDs     = 64
	fleetTemplates = 1000
	fleetZipfS     = 1.1
)

// mix is what a cell sends: the requests and which one each call sends.
type mix struct {
	name string
	reqs []request
	// zipf draws the request index Zipf-distributed instead of round robin.
	zipf bool
}

// picker returns the request index of worker's i-th call; each worker has
// its own generator, seeded by its number, so that a run is repeatable.
func (m *mix) picker(workers int) func(worker, i int) int {
	if !m.zipf {
		return func(_, i int) int { return i % len(m.reqs) }
	}
	draws := make([]*rand.Zipf, workers)
	for w := range draws {
		draws[w] = rand.NewZipf(rand.New(rand.NewPCG(43, uint64(w))), fleetZipfS, 1, uint64(len(m.reqs)-1))
	}
	return func(worker, _ int) int { return int(draws[worker].Uint64()) }
}

// replicaSetPod is a pod of a Deployment's ReplicaSet as its controller
// creates it: a generateName and no name, the pod-template-hash label, the
// controller owner reference; the seed-000 consul pod's annotations.
func replicaSetPod(app string) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"` + app + `-7d4f8b9c-","namespace":"shop",` +
		`"labels":{"app":"` + app + `","tier":"web","pod-template-hash":"7d4f8b9c"},` +
		`"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"` + app + `-7d4f8b9c","uid":"6f1c3a0e-4b1d-4c8e-9a57-0b7d2c1e5f93","controller":true,"blockOwnerDeletion":true}],` +
		`"annotations":{"dynamic-config.rs/inject":"true","dynamic-config.rs/source":"consul",` +
		`"dynamic-config.rs/key":"` + app + `/config.json","dynamic-config.rs/path":"/config/` + app + `.toml","dynamic-config.rs/watch-seconds":"30",` +
		`"prometheus.io/scrape":"true"}},"spec":{"containers":[{"name":"` + app + `","image":"registry.example/` + app + `:2",` +
		`"ports":[{"containerPort":8080,"name":"http"}],"env":[{"name":"LOG_LEVEL","value":"info"},{"name":"PORT","value":"8080"}],` +
		`"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}},{"name":"proxy","image":"registry.example/proxy:1"}]}}`
}

// mixes builds the seed, repeat and fleet mixes (floor: the floor's checks).
func mixes(floor bool) (map[string]*mix, error) {
	seed, err := requests(floor)
	if err != nil {
		return nil, err
	}
	out := map[string]*mix{mixSeed: {name: mixSeed, reqs: seed}}
	repeat := &mix{name: mixRepeat}
	for i := range repeatUIDs {
		r, err := reviewOf("repeat", fmt.Sprintf("repeat-%02d", i), []byte(replicaSetPod("shop")), patched, floor)
		if err != nil {
			return nil, err
		}
		repeat.reqs = append(repeat.reqs, r)
	}
	fleet := &mix{name: mixFleet, zipf: true}
	for i := range fleetTemplates {
		r, err := reviewOf("fleet", fmt.Sprintf("fleet-%04d", i), []byte(replicaSetPod(fmt.Sprintf("svc-%04d", i))), patched, floor)
		if err != nil {
			return nil, err
		}
		fleet.reqs = append(fleet.reqs, r)
	}
	out[mixRepeat], out[mixFleet] = repeat, fleet
	return out, nil
}

// runMixes measures the floor and the two-process shape under the repeat
// and fleet mixes at every concurrency.
func runMixes(ctx context.Context, o *options, targets []*target, clientTLS *tls.Config, stderr io.Writer) ([]*cell, error) {
	floorMixes, err := mixes(true)
	if err != nil {
		return nil, err
	}
	ourMixes, err := mixes(false)
	if err != nil {
		return nil, err
	}
	var cells []*cell
	for _, c := range o.concurrency {
		for _, name := range []string{mixRepeat, mixFleet} {
			for _, t := range targets {
				var m *mix
				switch t.name {
				case targetFloor:
					m = floorMixes[name]
				case targetTwoProcess:
					m = ourMixes[name]
				default:
					continue
				}
				if ctx.Err() != nil {
					return cells, ctx.Err()
				}
				do, done := httpsCaller(t.url, clientTLS, m, c)
				profiles := startProfiles(o, t, c, t.name+"-"+name)
				cl := closedLoop(ctx, t.name, c, o.warmup, o.window, do, t.cpu, nil)
				done()
				if err := profiles(); err != nil {
					fmt.Fprintln(stderr, "admission-load: profile:", err)
				}
				cl.mix = name
				if err := t.alive(); err != nil {
					fmt.Fprintln(stderr, "admission-load:", err)
					cl.errors++
				}
				cells = append(cells, cl)
				fmt.Fprintf(stderr, "  %-12s %-6s c=%-3d %8.0f req/s  p50 %-8s p99 %-8s hits %5.1f%%  errors %d\n",
					t.name, name, c, cl.rate(), short(cl.quantile(0.5)), short(cl.quantile(0.99)), 100*cl.hitRate(), cl.errors)
			}
		}
	}
	return cells, nil
}

// findMixCell is the cell of target under mix at concurrency c, or nil.
func findMixCell(cells []*cell, target, mix string, c int) *cell {
	for _, x := range cells {
		if x.target == target && x.mix == mix && x.concurrency == c {
			return x
		}
	}
	return nil
}

// reportMixes prints the two-process shape under each mix against the
// floor under the same mix, with the hit rate, and returns the errors.
func reportMixes(w io.Writer, seed, cells []*cell) int {
	fmt.Fprintln(w, "\nthe decision cache (issue 43): two-process against the floor, each under the same mix, in this run:")
	fmt.Fprintln(w, "| mix | c | floor CPU µs/adm | two-process CPU µs/adm | CPU ×floor | floor p50 | two-process p50 | p50 ×floor | p99 ×floor | req/s ×floor | hit rate |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	errors := 0
	all := append(append([]*cell(nil), seed...), cells...)
	seen := map[string]bool{}
	for _, x := range all {
		mixName := x.mix
		if mixName == "" {
			mixName = mixSeed
		}
		key := fmt.Sprintf("%s/%d", mixName, x.concurrency)
		if x.target != targetTwoProcess || seen[key] {
			continue
		}
		seen[key] = true
		f := findMixCell(all, targetFloor, x.mix, x.concurrency)
		if f == nil {
			continue
		}
		fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %.2f | %s | %s | %.2f | %.2f | %.2f | %.1f %% |\n", mixName, x.concurrency,
			f.cpuPerOp(), x.cpuPerOp(), ratio(x.cpuPerOp(), f.cpuPerOp()),
			short(f.quantile(0.5)), short(x.quantile(0.5)), ratio(seconds(x.quantile(0.5)), seconds(f.quantile(0.5))),
			ratio(seconds(x.quantile(0.99)), seconds(f.quantile(0.99))), ratio(x.rate(), f.rate()), 100*x.hitRate())
	}
	for _, c := range cells {
		errors += c.errors
		if c.errors > 0 {
			fmt.Fprintf(w, "\nerrors: %s %s c=%d: %d, the first: %s\n", c.target, c.mix, c.concurrency, c.errors, c.firstError)
		}
	}
	return errors
}

// checkCacheTargets prints issue 43's targets for the hit path (the repeat
// mix) against the floor under the same mix and says whether any is missed.
func checkCacheTargets(w io.Writer, cells []*cell) (missed bool) {
	fmt.Fprintln(w, "\ntargets (issue 43: the hit path, two-process under the repeat mix, against the floor of this run):")
	check := func(name string, r float64) {
		verdict := "met"
		if r > 1.3 {
			verdict, missed = "MISSED", true
		}
		fmt.Fprintf(w, "  %-44s %-7s %.2f×\n", name, verdict, r)
	}
	if two, f := findMixCell(cells, targetTwoProcess, mixRepeat, 8), findMixCell(cells, targetFloor, mixRepeat, 8); two != nil && f != nil {
		check("c=8 CPU/admission ≤ 1.3× floor", ratio(two.cpuPerOp(), f.cpuPerOp()))
	}
	if two, f := findMixCell(cells, targetTwoProcess, mixRepeat, 1), findMixCell(cells, targetFloor, mixRepeat, 1); two != nil && f != nil {
		check("c=1 p50 ≤ 1.3× floor p50", ratio(seconds(two.quantile(0.5)), seconds(f.quantile(0.5))))
	}
	var rates []string
	for _, x := range cells {
		if x.target == targetTwoProcess && x.mix != mixSeed {
			rates = append(rates, fmt.Sprintf("%s c=%d %.1f %%", x.mix, x.concurrency, 100*x.hitRate()))
		}
	}
	fmt.Fprintf(w, "  hit rates: %s\n", strings.Join(rates, ", "))
	return missed
}
