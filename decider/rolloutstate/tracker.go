package rolloutstate

import (
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/metrics"
	"github.com/dynamic-config-admission/dynamic-config/internal/workload"
)

// Bounds of what a tracker keeps.
const (
	// MaxDiffering is how many differing workloads a tracker lists: the
	// most recently seen (spec 10 §3).
	MaxDiffering = 256
	// MaxLogged is how many differing workloads a tracker remembers having
	// logged; past it, no more per-workload lines are written for the
	// candidate (one line says so), and the counts and the list go on.
	MaxLogged = 1 << 16
)

// Tracker is what one replica found comparing one candidate revision's
// decisions with the active's. Its methods are safe for concurrent use;
// recording a same decision takes no lock.
type Tracker struct {
	candidate string
	series    *metrics.RolloutSeries
	state     *State
	loadedAt  time.Time

	counts [6]atomic.Uint64
	halted atomic.Bool

	mu        sync.Mutex
	halt      *Halt
	differing map[string]*Workload
	logged    map[uint64]struct{}
	logFull   bool
}

// Workload is one workload whose decisions differed (spec 10 §3).
type Workload struct {
	// Key is the workload key, cluster/namespace/kind/name.
	Key string
	// Result and Paths are the latest differing comparison's.
	Result    rollout.Result
	Paths     []string
	FirstSeen time.Time
	LastSeen  time.Time
	// Count is how many of its decisions differed.
	Count uint64
}

// Halt is the halt of a rollout: the workload whose canary decision the
// candidate newly refused, and the refusal's check ids (never a message).
type Halt struct {
	Workload string
	At       time.Time
	Paths    []string
}

func newTracker(candidate string, series *metrics.RolloutSeries, s *State) *Tracker {
	return &Tracker{candidate: candidate, series: series, state: s, loadedAt: s.cfg.Now(),
		differing: map[string]*Workload{}, logged: map[uint64]struct{}{}}
}

// Halted reports whether the rollout of this candidate is halted on this
// replica: it then behaves as shadow.
func (t *Tracker) Halted() bool { return t.halted.Load() }

// Record counts one compared decision of the workload of key; a differing
// one updates the workload's entry and, the first time, writes the
// workload's one log line for this candidate.
func (t *Tracker) Record(key workload.Key, purpose string, c rollout.Comparison, route rollout.Route) {
	t.counts[c.Result].Add(1)
	t.series.Decided(c.Result)
	if !c.Result.Differs() {
		return
	}
	k := key.String()
	now := t.state.cfg.Now()
	t.mu.Lock()
	w, ok := t.differing[k]
	if !ok {
		w = &Workload{Key: k, FirstSeen: now}
		if len(t.differing) >= MaxDiffering {
			t.evictOldestLocked()
		}
		t.differing[k] = w
	}
	w.Result, w.Paths, w.LastSeen = c.Result, c.Paths, now
	w.Count++
	log, full := t.firstLogLocked(k)
	t.mu.Unlock()
	if full {
		t.state.cfg.Logger.Warn("rollout: more differing workloads than are logged one by one; the rest are counted and listed in GetInstallation.rollout only",
			"candidate_revision", t.candidate, "logged", MaxLogged)
	}
	if log {
		t.state.cfg.Logger.Info("rollout: a workload's decision differs under the candidate",
			"candidate_revision", t.candidate, "workload", k, "purpose", purpose,
			"result", c.Result.String(), "paths", c.Paths, "answered", route.String())
	}
}

// evictOldestLocked drops the differing workload seen least recently.
func (t *Tracker) evictOldestLocked() {
	var oldest *Workload
	for _, w := range t.differing {
		if oldest == nil || w.LastSeen.Before(oldest.LastSeen) || (w.LastSeen.Equal(oldest.LastSeen) && w.Key < oldest.Key) {
			oldest = w
		}
	}
	if oldest != nil {
		delete(t.differing, oldest.Key)
	}
}

// firstLogLocked reports whether workload k was not logged yet for this
// candidate (and remembers it), and whether the memory of logged workloads
// just filled up.
func (t *Tracker) firstLogLocked(k string) (log, full bool) {
	h := fnv.New64a()
	h.Write([]byte(k)) //nolint:errcheck // hash.Hash never fails
	sum := h.Sum64()
	if _, seen := t.logged[sum]; seen {
		return false, false
	}
	if len(t.logged) >= MaxLogged {
		full = !t.logFull
		t.logFull = true
		return false, full
	}
	t.logged[sum] = struct{}{}
	return true, false
}

// Halt halts the rollout of this candidate on this replica for the
// workload of key (spec 10 §4): the first call writes the ERROR line, sets
// the gauge and changes the state's Token; it reports whether it was the
// first.
func (t *Tracker) Halt(key workload.Key, c rollout.Comparison) bool {
	if !t.halted.CompareAndSwap(false, true) {
		return false
	}
	h := &Halt{Workload: key.String(), At: t.state.cfg.Now(), Paths: c.Paths}
	t.mu.Lock()
	t.halt = h
	t.mu.Unlock()
	t.series.Halted(true)
	t.state.cfg.Logger.Error("rollout halted: the candidate newly refuses a workload of the canary slice; "+
		"that admission got the active installation's answer, and this replica shadows the candidate until its revision changes",
		"candidate_revision", t.candidate, "workload", h.Workload, "refusals", c.Paths)
	t.state.refresh()
	return true
}

// Report is a copy of a tracker's findings.
type Report struct {
	Candidate string
	// LoadedAt is when this replica first held the candidate.
	LoadedAt time.Time
	// Counts are indexed by rollout.Result.
	Counts [6]uint64
	// Differing are the differing workloads, the latest seen first.
	Differing []Workload
	// Halt is the halt, nil when not halted.
	Halt *Halt
}

// Report copies the tracker's findings.
func (t *Tracker) Report() Report {
	r := Report{Candidate: t.candidate, LoadedAt: t.loadedAt}
	for i := range t.counts {
		r.Counts[i] = t.counts[i].Load()
	}
	t.mu.Lock()
	for _, w := range t.differing {
		c := *w
		c.Paths = slices.Clone(w.Paths)
		r.Differing = append(r.Differing, c)
	}
	if t.halt != nil {
		h := *t.halt
		r.Halt = &h
	}
	t.mu.Unlock()
	slices.SortFunc(r.Differing, func(a, b Workload) int {
		if c := b.LastSeen.Compare(a.LastSeen); c != 0 {
			return c
		}
		if a.Key < b.Key {
			return -1
		}
		if a.Key > b.Key {
			return 1
		}
		return 0
	})
	return r
}
