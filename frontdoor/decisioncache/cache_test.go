package decisioncache

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

var (
	revA = Revisions{Installation: "sha256:aaa", Classes: "sha256:c1"}
	revB = Revisions{Installation: "sha256:bbb", Classes: "sha256:c1"}
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newCache(t *testing.T, cfg Config) (*Cache, *clock, *prometheus.Registry) {
	t.Helper()
	clk := &clock{now: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	reg := prometheus.NewRegistry()
	cfg.Now, cfg.Metrics = clk.Now, metrics.NewFrontdoor(reg)
	return New(cfg), clk, reg
}

func question(name string) *deciderv1.DecisionRequest {
	return &deciderv1.DecisionRequest{Purpose: deciderv1.Purpose_PURPOSE_MUTATE, Pod: &deciderv1.PodFacts{
		Namespace: "shop", GenerateName: name, RequestUid: "uid-" + name,
		Annotations: map[string]string{"dynamic-config.rs/inject": "true"}}}
}

func decided(id string, r Revisions) *deciderv1.Decision {
	return &deciderv1.Decision{DecisionId: id, Outcome: deciderv1.Outcome_OUTCOME_SKIP, InstallationRevision: r.Installation}
}

// ask looks q up and, on a miss, answers it with d as the decider would.
func ask(c *Cache, q *deciderv1.DecisionRequest, d *deciderv1.Decision) (Answer, string) {
	l, a, ok := c.Lookup(q)
	defer l.Done()
	if !ok {
		l.Remember(d)
	}
	return a, l.Result()
}

func TestAnAnswerRememberedUnderTheAnnouncedRevisionsAnswersTheSameQuestion(t *testing.T) {
	c, _, _ := newCache(t, Config{})
	c.Announce(revA)
	if _, result := ask(c, question("web-"), decided("d1", revA)); result != ResultMiss {
		t.Fatalf("the first question is a %s, want a miss", result)
	}
	other := question("web-")
	other.Pod.RequestUid, other.Pod.UserName, other.Pod.DryRun = "another-uid", "someone", true
	a, result := ask(c, other, decided("d2", revA))
	if result != ResultHit || a.Decision.GetDecisionId() != "d1" || a.Source != SourceCache {
		t.Fatalf("the same question of another admission: %s %v", result, a)
	}
	if _, result := ask(c, question("api-"), decided("d3", revA)); result != ResultMiss {
		t.Fatalf("another question is a %s, want a miss", result)
	}
}

func TestNothingAnswersOrIsRememberedBeforeTheDeciderAnnounces(t *testing.T) {
	c, _, _ := newCache(t, Config{})
	ask(c, question("web-"), decided("d1", revA))
	if _, result := ask(c, question("web-"), decided("d2", revA)); result != ResultBypass {
		t.Fatalf("before any announcement: %s, want bypass", result)
	}
	c.Announce(revA)
	if _, result := ask(c, question("web-"), decided("d3", revA)); result != ResultMiss {
		t.Fatalf("after the announcement the question asked before it is a %s, want a miss (nothing was remembered)", result)
	}
}

func TestAnAnswerIsNotRememberedUnlessItCarriesTheAnnouncedRevisions(t *testing.T) {
	cases := []struct {
		name string
		d    *deciderv1.Decision
	}{
		{"another installation revision (a skewed replica, or a change not announced yet)", decided("d", revB)},
		{"another classes revision", &deciderv1.Decision{InstallationRevision: revA.Installation, ClassesRevision: "sha256:c2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := newCache(t, Config{})
			c.Announce(revA)
			ask(c, question("web-"), tc.d)
			if c.Len() != 0 {
				t.Fatalf("the answer was remembered")
			}
		})
	}
	t.Run("a decision that consulted no class is remembered whatever the class set", func(t *testing.T) {
		c, _, _ := newCache(t, Config{})
		c.Announce(revA)
		ask(c, question("web-"), &deciderv1.Decision{InstallationRevision: revA.Installation})
		if c.Len() != 1 {
			t.Fatal("the answer was not remembered")
		}
	})
}

func TestAnAnswerAskedAcrossAnAnnouncementOrALossIsGivenButNotRemembered(t *testing.T) {
	for name, between := range map[string]func(*Cache){
		"the revisions changed and back":   func(c *Cache) { c.Announce(revB); c.Announce(revA) },
		"the stream was lost and regained": func(c *Cache) { c.Lost(); c.Announce(revA) },
		"the stream was lost":              func(c *Cache) { c.Lost() },
	} {
		t.Run(name, func(t *testing.T) {
			c, _, _ := newCache(t, Config{})
			c.Announce(revA)
			l, _, ok := c.Lookup(question("web-"))
			if ok {
				t.Fatal("hit in an empty cache")
			}
			between(c)
			l.Remember(decided("d1", revA))
			l.Done()
			if c.Len() != 0 {
				t.Fatal("an answer asked before the announcement changed was remembered")
			}
		})
	}
	t.Run("a heartbeat in between changes nothing", func(t *testing.T) {
		c, _, _ := newCache(t, Config{})
		c.Announce(revA)
		l, _, _ := c.Lookup(question("web-"))
		c.Announce(revA)
		l.Remember(decided("d1", revA))
		l.Done()
		if c.Len() != 1 {
			t.Fatal("a heartbeat kept the answer from being remembered")
		}
	})
}

func TestADifferentAnnouncementEmptiesTheCacheAndTheSameOneKeepsIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		next Revisions
		kept bool
	}{
		{"the same revisions (a heartbeat)", revA, true},
		{"another installation revision", revB, false},
		{"another classes revision", Revisions{Installation: revA.Installation, Classes: "sha256:c2"}, false},
		{"a rollout begins", Revisions{Installation: revA.Installation, Classes: revA.Classes, Rollout: "shadow/sha256:ccc"}, false},
		{"a decider of another build", Revisions{Installation: revA.Installation, Classes: revA.Classes, Build: "v0.4.0"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, reg := newCache(t, Config{})
			c.Announce(revA)
			ask(c, question("web-"), decided("d1", revA))
			c.Announce(tc.next)
			if kept := c.Len() == 1; kept != tc.kept {
				t.Fatalf("entry kept: %v, want %v", kept, tc.kept)
			}
			if got := testutil.ToFloat64(gauge(t, reg, "dynamic_config_decision_cache_entries")); got != float64(c.Len()) {
				t.Errorf("the entries gauge says %v, the cache holds %d", got, c.Len())
			}
		})
	}
}

func TestALostStreamStopsFreshAnswersAtOnceAndTheSameAnnouncementResumesThem(t *testing.T) {
	c, _, _ := newCache(t, Config{})
	c.Announce(revA)
	ask(c, question("web-"), decided("d1", revA))
	c.Lost()
	if _, result := ask(c, question("web-"), decided("d2", revA)); result != ResultBypass {
		t.Fatalf("after the loss: %s, want bypass", result)
	}
	c.Announce(revA)
	if a, result := ask(c, question("web-"), decided("d3", revA)); result != ResultHit || a.Decision.GetDecisionId() != "d1" {
		t.Fatalf("the decider came back unchanged: %s %v, want the hit d1", result, a)
	}
}

func TestStaleIfErrorAnswersWithinTheBoundFromTheLastConfirmationOnly(t *testing.T) {
	c, clk, _ := newCache(t, Config{StaleIfError: 5 * time.Minute})
	c.Announce(revA)
	ask(c, question("web-"), decided("d1", revA))
	clk.Advance(time.Hour) // long-lived entry, confirmed by every heartbeat
	c.Announce(revA)
	clk.Advance(time.Minute)
	c.Lost()
	clk.Advance(3 * time.Minute)

	l, _, ok := c.Lookup(question("web-"))
	if ok {
		t.Fatal("a fresh answer while the stream is lost")
	}
	a, ok := l.Stale()
	if !ok || a.Decision.GetDecisionId() != "d1" || a.Source != SourceStaleCache || a.Age != 4*time.Minute || l.Result() != ResultStale {
		t.Fatalf("4 minutes after the last confirmation: %v %v (%s), want d1, stale, 4m", ok, a, l.Result())
	}
	l.Done()
	if _, ok := c.lookupStale(question("api-")); ok {
		t.Fatal("a question never answered has a stale answer")
	}
	clk.Advance(time.Minute)
	if a, ok := c.lookupStale(question("web-")); ok {
		t.Fatalf("5 minutes after the last confirmation the entry still answers: %v", a)
	}
}

func TestStaleIfErrorOffOrAfterAChangeAnswersNothing(t *testing.T) {
	off, _, _ := newCache(t, Config{})
	off.Announce(revA)
	ask(off, question("web-"), decided("d1", revA))
	off.Lost()
	if _, ok := off.lookupStale(question("web-")); ok {
		t.Fatal("stale-if-error 0 answered")
	}
	changed, _, _ := newCache(t, Config{StaleIfError: time.Hour})
	changed.Announce(revA)
	ask(changed, question("web-"), decided("d1", revA))
	changed.Announce(revB)
	changed.Lost()
	if _, ok := changed.lookupStale(question("web-")); ok {
		t.Fatal("an entry of the revision before the announced one answered stale")
	}
}

// lookupStale is a Lookup that asks for the stale answer at once.
func (c *Cache) lookupStale(q *deciderv1.DecisionRequest) (Answer, bool) {
	l, _, _ := c.Lookup(q)
	defer l.Done()
	return l.Stale()
}

func TestTheLeastRecentlyUsedGoFirstAtTheEntryBound(t *testing.T) {
	c, _, _ := newCache(t, Config{MaxEntries: 2})
	c.Announce(revA)
	ask(c, question("a-"), decided("a", revA))
	ask(c, question("b-"), decided("b", revA))
	ask(c, question("a-"), nil) // a is used again: b is the least recent
	ask(c, question("c-"), decided("c", revA))
	if _, r := ask(c, question("b-"), nil); r != ResultMiss {
		t.Errorf("b: %s, want evicted", r)
	}
	if _, r := ask(c, question("c-"), nil); r != ResultHit {
		t.Errorf("c: %s, want kept", r)
	}
}

func TestAnAnswerLargerThanTheByteBoundIsNotRemembered(t *testing.T) {
	c, _, _ := newCache(t, Config{MaxBytes: 4096})
	c.Announce(revA)
	big := decided("big", revA)
	for i := range 200 {
		big.Warnings = append(big.Warnings, &deciderv1.Warning{Code: "w", Message: fmt.Sprintf("warning %d of a big decision", i)})
	}
	ask(c, question("web-"), big)
	if c.Len() != 0 || c.Bytes() != 0 {
		t.Fatalf("%d entries, %d bytes", c.Len(), c.Bytes())
	}
}

func TestOneHundredThousandDistinctPodsNeverExceedTheBounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxEntries int
		maxBytes   int64
	}{
		{"the default bounds", 0, 0},
		{"the byte bound binds first", 100_000, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _, reg := newCache(t, Config{MaxEntries: tc.maxEntries, MaxBytes: tc.maxBytes})
			maxEntries, maxBytes := c.maxEntries, c.maxBytes
			c.Announce(revA)
			d := decided("d", revA)
			peakEntries, peakBytes := 0, int64(0)
			for i := range 100_000 {
				q := question(fmt.Sprintf("pod-%06d-", i))
				q.Pod.Labels = map[string]string{"hostile": fmt.Sprint(i * 7919)}
				ask(c, q, d)
				peakEntries, peakBytes = max(peakEntries, c.Len()), max(peakBytes, c.Bytes())
			}
			t.Logf("peak: %d entries, %d bytes (bounds %d, %d)", peakEntries, peakBytes, maxEntries, maxBytes)
			if peakEntries > maxEntries || peakBytes > maxBytes {
				t.Fatalf("peak %d entries, %d bytes: above the bounds %d, %d", peakEntries, peakBytes, maxEntries, maxBytes)
			}
			if peakEntries < maxEntries && peakBytes < maxBytes-maxBytes/8 {
				t.Fatalf("peak %d entries, %d bytes: the cache never filled, the test proves nothing", peakEntries, peakBytes)
			}
			if got := testutil.ToFloat64(gauge(t, reg, "dynamic_config_decision_cache_bytes")); got != float64(c.Bytes()) {
				t.Errorf("the bytes gauge says %v, the cache holds %d", got, c.Bytes())
			}
		})
	}
}

func TestEveryLookupIsCountedOnceByItsResult(t *testing.T) {
	c, _, reg := newCache(t, Config{StaleIfError: time.Minute})
	ask(c, question("web-"), decided("d", revA)) // bypass
	c.Announce(revA)
	ask(c, question("web-"), decided("d", revA)) // miss
	ask(c, question("web-"), nil)                // hit
	ask(c, question("web-"), nil)                // hit
	c.Lost()
	c.lookupStale(question("web-")) // stale
	want := map[string]float64{ResultBypass: 1, ResultMiss: 1, ResultHit: 2, ResultStale: 1}
	for result, n := range want {
		got := testutil.ToFloat64(counter(t, reg, result))
		if got != n {
			t.Errorf("%s: %v, want %v", result, got, n)
		}
	}
}

func TestConcurrentLookupsAnnouncementsAndLossesKeepTheBounds(t *testing.T) {
	c, _, _ := newCache(t, Config{MaxEntries: 64})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				q := question(fmt.Sprintf("pod-%d-", (i*w)%200))
				l, a, ok := c.Lookup(q)
				if ok && a.Decision.GetInstallationRevision() == "" {
					t.Error("a hit without a decision")
				}
				if !ok {
					l.Remember(decided("d", revA))
				}
				l.Done()
			}
		})
	}
	wg.Go(func() {
		for i := range 500 {
			switch i % 3 {
			case 0:
				c.Announce(revA)
			case 1:
				c.Lost()
			default:
				c.Announce(revB)
			}
		}
	})
	wg.Wait()
	if c.Len() > 64 {
		t.Fatalf("%d entries above the bound", c.Len())
	}
}

func gauge(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	return collectorOf(t, reg, name, "")
}

func counter(t *testing.T, reg *prometheus.Registry, result string) prometheus.Collector {
	t.Helper()
	return collectorOf(t, reg, "dynamic_config_decision_cache_lookups_total", result)
}

// collectorOf is the one series of name (with result, when given) as a collector testutil reads.
func collectorOf(t *testing.T, reg *prometheus.Registry, name, result string) prometheus.Collector {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if result != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != result) {
				continue
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "copy"}, func() float64 { return v })
		}
	}
	t.Fatalf("no series %s %s", name, result)
	return nil
}

func TestWhileARolloutIsAnnouncedTheCacheStepsAsideAndResumesAfterIt(t *testing.T) {
	c, _, _ := newCache(t, Config{})
	c.Announce(revA)
	ask(c, question("web-"), decided("d1", revA))
	rollout := Revisions{Installation: revA.Installation, Classes: revA.Classes, Rollout: "sha256:candidate"}
	c.Announce(rollout)
	for i := range 2 {
		if _, result := ask(c, question("web-"), decided("d2", revA)); result != ResultBypass {
			t.Fatalf("question %d during the rollout: %s, want bypass (the decider must see every admission)", i, result)
		}
	}
	if c.Len() != 0 {
		t.Fatalf("%d entries during the rollout", c.Len())
	}
	c.Announce(revA) // the rollout ends: promoted elsewhere, or aborted
	ask(c, question("web-"), decided("d3", revA))
	if _, result := ask(c, question("web-"), nil); result != ResultHit {
		t.Fatalf("after the rollout: %s, want the cache answering again", result)
	}
}
