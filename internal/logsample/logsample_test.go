package logsample

import (
	"testing"
	"time"
)

func TestASampledLineIsWrittenFirstThenOncePerIntervalWithTheSuppressedCount(t *testing.T) {
	type occurrence struct {
		at             time.Duration // since the start
		wantWrite      bool
		wantSuppressed int
	}
	cases := []struct {
		name        string
		occurrences []occurrence
	}{
		{"the first occurrence is written", []occurrence{{0, true, 0}}},
		{"occurrences within the interval are suppressed", []occurrence{{0, true, 0}, {time.Second, false, 0}, {9 * time.Second, false, 0}}},
		{"the first occurrence after the interval is written with the count", []occurrence{
			{0, true, 0}, {time.Second, false, 0}, {2 * time.Second, false, 0}, {10 * time.Second, true, 2},
		}},
		{"the count starts again after each written line", []occurrence{
			{0, true, 0}, {time.Second, false, 0}, {10 * time.Second, true, 1}, {11 * time.Second, false, 0}, {25 * time.Second, true, 1},
		}},
		{"a quiet spell writes the next occurrence with nothing suppressed", []occurrence{{0, true, 0}, {time.Hour, true, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Unix(1000, 0)
			var now time.Time
			s := New(10*time.Second, func() time.Time { return now })
			for i, o := range c.occurrences {
				now = start.Add(o.at)
				write, suppressed := s.Allow()
				if write != o.wantWrite || suppressed != o.wantSuppressed {
					t.Errorf("occurrence %d at %v: write %v suppressed %d, want %v %d", i, o.at, write, suppressed, o.wantWrite, o.wantSuppressed)
				}
			}
		})
	}
}
