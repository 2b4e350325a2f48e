package decisioncache

import (
	"sync"
	"sync/atomic"
	"time"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// The decision sources an answer from the cache is marked with: the
// decision-source audit annotation and the admission line's decision_source.
const (
	SourceCache      = "cache"
	SourceStaleCache = "stale-cache"
)

// Answer is a remembered decision given in place of the decider's.
type Answer struct {
	// Decision is the remembered decision, shared with every admission it
	// answers: never modify it.
	Decision *deciderv1.Decision
	// Source is SourceCache or SourceStaleCache.
	Source string
	// Age is, for a stale answer, how long ago the decider last confirmed
	// the revisions it was decided under (0 for a fresh one).
	Age time.Duration
	// Memo is the entry's slot for what the front door derives from the
	// decision alone.
	Memo *Memo
}

// Memo is a slot beside an entry's decision for what the front door
// derives from that decision alone (the handler keeps there the patch it
// built from the plan for a pod shape); it goes with the entry. A nil *Memo
// holds nothing and keeps nothing.
type Memo struct{ v atomic.Value }

// Load is what the slot holds (nil: nothing).
func (m *Memo) Load() any {
	if m == nil {
		return nil
	}
	return m.v.Load()
}

// Store puts x in the slot; every x stored in one slot has one type.
func (m *Memo) Store(x any) {
	if m != nil {
		m.v.Store(x)
	}
}

// Lookup is one admission's question to the cache, from Lookup to Done.
// The zero Lookup (no cache) does nothing.
type Lookup struct {
	c   *Cache
	key *[]byte // from keys
	// epoch and usable are the cache's when the question was looked up.
	epoch  uint64
	usable bool
	result string
}

// keys recycles key buffers: a key is the size of the request it is made of.
var keys = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledKey is the largest key buffer kept for reuse; a bigger one (a
// pod with thousands of variables) is left to the collector.
const maxPooledKey = 64 << 10

// Lookup computes req's key and looks it up. It borrows req while it
// computes the key (appendKey). ok reports a fresh answer, which the caller
// gives instead of asking the decider; otherwise it asks, and tells the
// Lookup what came of it (Remember or Stale). The caller ends every Lookup
// with Done.
func (c *Cache) Lookup(req *deciderv1.DecisionRequest) (l Lookup, a Answer, ok bool) {
	if c == nil {
		return Lookup{}, Answer{}, false
	}
	buf := keys.Get().(*[]byte)
	*buf = appendKey((*buf)[:0], req)
	l = Lookup{c: c, key: buf}
	c.mu.Lock()
	defer c.mu.Unlock()
	l.epoch, l.usable = c.epoch, c.usableLocked()
	if !l.usable {
		l.result = ResultBypass
		return l, Answer{}, false
	}
	e, found := c.entries[string(*buf)]
	if !found {
		l.result = ResultMiss
		return l, Answer{}, false
	}
	c.unlinkLocked(e)
	c.pushLocked(e)
	l.result = ResultHit
	return l, Answer{Decision: e.decision, Source: SourceCache, Memo: &e.memo}, true
}

// Remember stores the decider's usable answer d to the question — only if
// the cache was usable when it was asked, nothing was announced or lost
// since, and d was decided under the announced revisions (a skewed replica's
// answer, or one decided after a change not yet announced, is given but not
// remembered).
func (l *Lookup) Remember(d *deciderv1.Decision) {
	c := l.c
	if c == nil || !l.usable || d == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.usableLocked() || c.epoch != l.epoch {
		return
	}
	if d.GetInstallationRevision() != c.announced.Installation {
		return
	}
	// A decision that consulted no class carries no classes revision: the
	// class set did not decide it.
	if cr := d.GetClassesRevision(); cr != "" && cr != c.announced.Classes {
		return
	}
	c.storeLocked(*l.key, d)
}

// Stale is the remembered answer to the question when the decider could not
// be reached (the caller decides which failures count): an entry the decider
// confirmed less than StaleIfError ago. ok is false when stale answers are
// off, or the entry is absent or too old.
func (l *Lookup) Stale() (a Answer, ok bool) {
	c := l.c
	if c == nil || c.staleIfError <= 0 {
		return Answer{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, found := c.entries[string(*l.key)]
	if !found {
		return Answer{}, false
	}
	var age time.Duration
	if !c.up {
		// Every entry is of the last announced revisions (a change empties
		// the cache): each was current when the stream last confirmed them,
		// or when it was stored, whichever came later.
		age = c.now().Sub(later(c.confirmed, e.stored))
	}
	if age >= c.staleIfError {
		return Answer{}, false
	}
	l.result = ResultStale
	return Answer{Decision: e.decision, Source: SourceStaleCache, Age: age, Memo: &e.memo}, true
}

// Result is how the question was answered so far: ResultHit, ResultMiss,
// ResultBypass or ResultStale ("" without a cache).
func (l *Lookup) Result() string { return l.result }

// Done counts the lookup by its result and releases its key.
func (l *Lookup) Done() {
	if l.c == nil {
		return
	}
	l.c.metrics.DecisionCacheLookup(l.result)
	if cap(*l.key) <= maxPooledKey {
		keys.Put(l.key)
	}
	l.c, l.key = nil, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
