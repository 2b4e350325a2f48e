package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTheRolloutIsReportedAgainstTheTwoProcessAndTheFloorOfTheSameRun(t *testing.T) {
	cells := []*cell{
		measured(targetFloor, 8, 40, 100*time.Microsecond),
		measured(targetTwoProcess, 8, 200, 500*time.Microsecond),
		measured(targetTwoProcessRollout, 8, 220, 600*time.Microsecond),
		measured(targetTwoProcessRollout, 1, 999, time.Millisecond), // no two-process at c=1: no row
	}
	var out bytes.Buffer
	reportRollout(&out, cells)
	if !strings.Contains(out.String(), "| 8 | 200.0 | 220.0 | 1.10 | 40.0 | 0.50 | 500µs | 600µs |") {
		t.Errorf("the rollout table lacks c=8's row (1.10× without, +0.50× the floor):\n%s", out.String())
	}
	if strings.Contains(out.String(), "| 1 |") {
		t.Errorf("the rollout table has a row for c=1, which measured no two-process:\n%s", out.String())
	}
}

func TestTheRolloutTargetIsMissedAbove1point15TimesTheTwoProcess(t *testing.T) {
	cases := []struct {
		name     string
		withCPU  float64
		wantMiss bool
		wantLine string
	}{
		{"1.15× is met", 230, false, "met     1.15×"},
		{"1.20× is missed", 240, true, "MISSED  1.20×"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cells := []*cell{measured(targetTwoProcess, 8, 200, time.Millisecond), measured(targetTwoProcessRollout, 8, c.withCPU, time.Millisecond)}
			var out bytes.Buffer
			if missed := checkRolloutTarget(&out, cells); missed != c.wantMiss || !strings.Contains(out.String(), c.wantLine) {
				t.Errorf("checkRolloutTarget = %v; want %v and a line %q:\n%s", missed, c.wantMiss, c.wantLine, out.String())
			}
		})
	}
	if checkRolloutTarget(&bytes.Buffer{}, []*cell{measured(targetTwoProcess, 8, 200, time.Millisecond)}) {
		t.Error("a run without the rollout target missed its target")
	}
}
