package follower

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
)

// staleWatch is a follower with --max-stale 10s on a clock the test moves,
// and what a staleness flip writes: the log (read only while no other
// goroutine writes it), the stale gauge, the OnChange calls (the server's
// health refresh).
type staleWatch struct {
	f        *Follower
	mu       sync.Mutex
	now      time.Time
	log      *bytes.Buffer
	reg      *prometheus.Registry
	onChange atomic.Int32
	revision string // the served installation's
}

func newStaleWatch(t *testing.T) *staleWatch {
	t.Helper()
	w := &staleWatch{now: time.Unix(1_800_000_000, 0), log: &bytes.Buffer{}, reg: prometheus.NewRegistry()}
	served, err := installationloader.Load(installationloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.revision = served.Revision
	w.f = New(Config{
		ID: "west-0", MaxStale: 10 * time.Second, Store: installationloader.NewStore(served),
		Metrics: metrics.NewFollower(w.reg), Logger: slog.New(slog.NewTextHandler(w.log, nil)),
		OnChange: func() { w.onChange.Add(1) },
		Now:      func() time.Time { w.mu.Lock(); defer w.mu.Unlock(); return w.now },
	})
	w.f.heard(w.revision) // the last word from the leader about the served revision, now
	return w
}

func (w *staleWatch) add(d time.Duration) { w.mu.Lock(); w.now = w.now.Add(d); w.mu.Unlock() }

// gauge is dynamic_config_follower_stale.
func (w *staleWatch) gauge(t *testing.T) float64 {
	t.Helper()
	families, err := w.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "dynamic_config_follower_stale" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("dynamic_config_follower_stale is not registered")
	return 0
}

// written is what a flip wrote so far: the log, the gauge, the OnChange calls.
type written struct {
	log      string
	gauge    float64
	onChange int32
}

func (w *staleWatch) written(t *testing.T) written {
	t.Helper()
	return written{log: w.log.String(), gauge: w.gauge(t), onChange: w.onChange.Load()}
}

func TestStaleOnlyReadsTheDecisionPathWritesNothing(t *testing.T) {
	w := newStaleWatch(t)
	before := w.written(t)
	if w.f.Stale() || before.gauge != 0 {
		t.Fatalf("fresh: Stale() %v, gauge %v", w.f.Stale(), before.gauge)
	}
	w.add(11 * time.Second)
	for range 3 {
		if !w.f.Stale() || w.f.Serving() || !w.f.State().GetStale() {
			t.Fatal("not stale 11 s after the last word with --max-stale 10s")
		}
	}
	if got := w.written(t); got != before {
		t.Fatalf("Stale(), Serving() and State() wrote %+v; before them %+v", got, before)
	}

	w.f.checkStale() // what the follower's ticker runs
	flipped := w.written(t)
	if flipped.gauge != 1 || flipped.onChange != before.onChange+1 || !strings.Contains(flipped.log, "refusing to decide (NOT_SERVING)") {
		t.Fatalf("the flip to stale wrote %+v; want gauge 1, one OnChange, the ERROR line", flipped)
	}
	w.f.checkStale()
	if got := w.written(t); got != flipped {
		t.Fatalf("a second check without a change wrote %+v; want %+v", got, flipped)
	}

	w.f.heard(w.revision) // a heartbeat
	if w.f.Stale() {
		t.Fatal("still stale after a heartbeat")
	}
	back := w.written(t)
	if back.gauge != 0 || back.onChange != flipped.onChange+1 || !strings.Contains(back.log, "the leader is heard again") {
		t.Fatalf("the flip back wrote %+v; want gauge 0, one more OnChange, the INFO line", back)
	}
}

func TestTheFollowersTickerReportsAFlipNobodyAskedAbout(t *testing.T) {
	w := newStaleWatch(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { w.f.watchStale(ctx); close(done) }()
	w.add(11 * time.Second)
	deadline := time.Now().Add(5 * time.Second) // the ticker runs every second
	for w.gauge(t) != 1 || w.onChange.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no Stale() call, and after 5 s the ticker wrote gauge %v and %d OnChange calls; want 1 and 1", w.gauge(t), w.onChange.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done // the log is read once the ticker's goroutine is gone
	if !strings.Contains(w.log.String(), "refusing to decide (NOT_SERVING)") {
		t.Fatalf("the ticker's flip logged %q", w.log.String())
	}
}
