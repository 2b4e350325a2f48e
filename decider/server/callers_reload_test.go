package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// manyCallers is a callers file of callers × clusters entries; caller i
// speaks for clusters c<i>-<j><suffix> with the token token-<i>.
func manyCallers(callers, clusters int, suffix string) string {
	var b strings.Builder
	b.WriteString("callers:\n")
	for i := range callers {
		fmt.Fprintf(&b, "  - name: caller-%d\n    credentials:\n      - tokenSHA256: %s\n    clusters:\n", i, digest(fmt.Sprintf("token-%d", i)))
		for j := range clusters {
			fmt.Fprintf(&b, "      - c%d-%d%s\n", i, j, suffix)
		}
	}
	return b.String()
}

// percentile is the q-quantile of sorted latencies.
func percentile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*q))]
}

// TestACallersReloadUnderLoadNeverStallsADecision swaps a callers file of
// 100 000 entries (100 callers × 1 000 clusters, the per-caller limit) in
// while decisions run: the decisions' p99 during the reload stays within
// three times the p99 of the same load without a reload, measured in this
// test, and no decision waits for the reload (issue 23: the old reload
// parsed under the readers' lock, with an O(n²) duplicate check, and every
// decision in flight waited for the whole of it).
func TestACallersReloadUnderLoadNeverStallsADecision(t *testing.T) {
	if testing.Short() {
		t.Skip("parses two files of 100 000 entries")
	}
	const callerCount, clusterCount, workers = 100, 1000, 2
	d := startCallersDecider(t, manyCallers(callerCount, clusterCount, ""), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.file.Watch(ctx, 10*time.Millisecond)
	conn := dial(t, d.addr, nil)

	// load runs the workers until stop is closed, returning every latency,
	// sorted, and a failed decision's error.
	load := func(stop <-chan struct{}) ([]time.Duration, error) {
		var mu sync.Mutex
		var all []time.Duration
		var failed atomic.Value
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for i := 0; ; i++ {
					select {
					case <-stop:
						mu.Lock()
						all = append(all, mine...)
						mu.Unlock()
						return
					default:
					}
					caller := (w*31 + i) % callerCount
					start := time.Now()
					_, err := decideAs(t, conn, fmt.Sprintf("token-%d", caller), fmt.Sprintf("c%d-%d", caller, i%clusterCount))
					mine = append(mine, time.Since(start))
					if err != nil {
						failed.Store(err)
					}
				}
			}()
		}
		wg.Wait()
		slices.Sort(all)
		err, _ := failed.Load().(error)
		return all, err
	}

	// unloaded is the load without a reload for a while.
	unloaded := func(d time.Duration) []time.Duration {
		stop := make(chan struct{})
		time.AfterFunc(d, func() { close(stop) })
		l, err := load(stop)
		if err != nil {
			t.Fatalf("a decision without a reload failed: %v", err)
		}
		return l
	}
	// round measures the load without a reload, during the swap of a file
	// with extra more callers, and without a reload again; it fails the
	// test when a decision waited for the reload, and reports whether the
	// tail during the reload stayed within 3 × the unloaded p99.
	round := func(extra int) bool {
		baseline := unloaded(time.Second)
		before := d.file.Current()
		stop := make(chan struct{})
		type result struct {
			latencies []time.Duration
			err       error
		}
		loaded := make(chan result, 1)
		go func() {
			l, err := load(stop)
			loaded <- result{l, err}
		}()
		time.Sleep(50 * time.Millisecond) // the workers are running
		var more strings.Builder
		for i := range extra {
			fmt.Fprintf(&more, "  - name: more-%d\n    credentials:\n      - tokenSHA256: %s\n    clusters: [extra]\n", i, digest(fmt.Sprintf("more-%d", i)))
		}
		start := time.Now()
		writeLater(t, d.path, manyCallers(callerCount, clusterCount, "")+more.String())
		for d.file.Current() == before && time.Since(start) < time.Minute {
			time.Sleep(time.Millisecond)
		}
		reload := time.Since(start)
		time.Sleep(100 * time.Millisecond) // and the decisions right after the swap
		close(stop)
		r := <-loaded
		if r.err != nil {
			t.Fatalf("a decision during the reload failed: %v", r.err)
		}
		during := r.latencies
		// The machine is shared: the unloaded p99 is that of the runs
		// before and after the reload together.
		baseline = append(baseline, unloaded(time.Second)...)
		slices.Sort(baseline)
		p99 := percentile(baseline, 0.99)
		worst := during[len(during)-1]
		duringP90, duringP99 := percentile(during, 0.9), percentile(during, 0.99)
		t.Logf("unloaded: %d decisions, p50 %v, p99 %v, worst %v; during the %v reload: %d decisions, p90 %v, p99 %v (%.1f× the unloaded p99), worst %v",
			len(baseline), percentile(baseline, 0.5), p99, baseline[len(baseline)-1], reload, len(during), duringP90, duringP99,
			float64(duringP99)/float64(p99), worst)
		// A decision that waits for the reload waits for most of it, and so
		// does every decision in flight (the old reload held the readers'
		// lock): their p90 would be most of the reload. One decision's worst
		// is the shared machine's (the unloaded runs' worst reaches hundreds
		// of milliseconds under load), so it is logged, not held.
		if duringP90 > reload/4 {
			t.Errorf("the decisions during a reload of %v had a p90 of %v: decisions wait for the reload", reload, duringP90)
		}
		if names := d.file.Current().Names(); len(names) != callerCount+extra {
			t.Errorf("%d callers in force after the reload, want %d", len(names), callerCount+extra)
		}
		return duringP99 <= 3*p99
	}
	// The reload shares the CPUs with the decisions (and, in a full test
	// run, with every other package's tests), so a decision can lose a
	// scheduler slice to it, and the unloaded run's own worst is often
	// above 3 × its p99: the tail (p99) during the reload is held to 3 × the
	// unloaded p99 in at least one of three rounds, and in every round no
	// decision may wait for the reload itself. The old reload (under the
	// readers' lock) fails every round: its decisions waited the whole reload.
	const rounds = 3
	within := false
	for extra := 1; extra <= rounds && !within && !t.Failed(); extra++ {
		within = round(extra)
	}
	if !within && !t.Failed() {
		t.Errorf("in %d rounds the decisions during the reload had a p99 above 3 × the unloaded p99 (see the log)", rounds)
	}
}
