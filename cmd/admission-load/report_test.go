package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// measured is a cell of n admissions in one second with cpuMicros CPU µs
// each and every latency p50.
func measured(target string, c int, cpuMicros float64, p50 time.Duration) *cell {
	const n = 1000
	return &cell{target: target, concurrency: c, n: n, window: time.Second,
		cpu: cpuMicros * n / 1e6, latencies: []time.Duration{p50, p50, p50}}
}

func TestTheShapeLimitSumsFloorGRPCFloorAndDecidePlanOfTheSameConcurrency(t *testing.T) {
	cells := []*cell{
		measured(targetFloor, 8, 40, 100*time.Microsecond),
		measured(targetTwoProcess, 8, 146, 500*time.Microsecond),
		withClient(measured(targetGRPCFloor, 8, 21, 50*time.Microsecond), 20),
		measured(targetDecidePlan, 8, 12, 10*time.Microsecond),
		measured(targetFloor, 1, 999, time.Millisecond), // another concurrency: not in c=8's sum
	}
	s, ok := shapeLimit(cells, 8)
	if !ok || s.cpu < 72.99 || s.cpu > 73.01 || s.p50 != 160*time.Microsecond {
		t.Fatalf("shapeLimit(c=8) = %+v, %v; want 73 CPU µs and p50 160µs", s, ok)
	}
	if _, ok := shapeLimit(cells, 1); ok {
		t.Error("shapeLimit(c=1) is known although c=1 measured only the floor")
	}
	var out bytes.Buffer
	reportShapeLimit(&out, cells)
	if !strings.Contains(out.String(), "| 8 | 40.0 | 21.0 | 12.0 | 73.0 | 160µs | 2.00 | 3.12 | | |") {
		t.Errorf("the shape-limit table lacks c=8's row with two-process at 2.00× CPU and 3.12× p50:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "| 8 | 20.0 | 93.0 | 1.57 |") {
		t.Errorf("the table with the hop's calling half lacks c=8's row (20 µs client, 93 µs, two-process 1.57×):\n%s", out.String())
	}
}

// withClient gives a gRPC floor cell clientMicros of calling-side CPU per call.
func withClient(c *cell, clientMicros float64) *cell {
	c.clientCPU = clientMicros * float64(c.n) / 1e6
	return c
}

func TestTheShapeTargetsAreMissedAbove1point5TimesTheLimit(t *testing.T) {
	cases := []struct {
		name      string
		twoCPU    float64
		twoP50    time.Duration
		wantMiss  bool
		wantLines []string
	}{
		{"both within 1.5× are met", 100, 150 * time.Microsecond, false, []string{"met     1.37×", "met     1.50×"}},
		{"CPU above 1.5× is missed", 120, 150 * time.Microsecond, true, []string{"MISSED  1.64×"}},
		{"p50 above 1.5× is missed", 100, 200 * time.Microsecond, true, []string{"MISSED  2.00×"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cells []*cell
			for _, conc := range []int{1, 8} {
				cells = append(cells,
					measured(targetFloor, conc, 40, 60*time.Microsecond),
					measured(targetTwoProcess, conc, c.twoCPU, c.twoP50),
					measured(targetGRPCFloor, conc, 21, 30*time.Microsecond),
					measured(targetDecidePlan, conc, 12, 10*time.Microsecond))
			}
			var out bytes.Buffer
			if got := checkShapeTargets(&out, cells); got != c.wantMiss {
				t.Errorf("missed = %v, want %v:\n%s", got, c.wantMiss, out.String())
			}
			for _, l := range c.wantLines {
				if !strings.Contains(out.String(), l) {
					t.Errorf("the targets lack %q:\n%s", l, out.String())
				}
			}
		})
	}
}

func TestDecidePlanAnswersEveryAskingCorpusPodAsTheCorpusSays(t *testing.T) {
	do, err := decidePlanCaller("../dynamic-config/default-installation.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if problem, _ := do(context.Background(), 0, i); problem != "" {
			t.Errorf("call %d: %s", i, problem)
		}
	}
}

func TestTheSpreadIsTheMedianAndTheRangeOfThePairs(t *testing.T) {
	cases := []struct {
		name string
		xs   []float64
		want string
	}{
		{"an odd count takes the middle ratio", []float64{1.2, 0.9, 1.0}, "1.000× (0.900–1.200 over 3 pairs)"},
		{"an even count averages the two middle ratios", []float64{1.0, 1.1, 0.8, 0.9}, "0.950× (0.800–1.100 over 4 pairs)"},
		{"no pairs say so", nil, "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := spread(c.xs); got != c.want {
				t.Errorf("spread(%v) = %q, want %q", c.xs, got, c.want)
			}
		})
	}
}
