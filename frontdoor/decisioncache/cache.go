// Package decisioncache is the front door's decision cache (issue 43): the
// decider's answer to a question the front door has asked before, given
// again without crossing the hop — coherently, boundedly, and through a
// decider outage.
//
//   - The key is the question itself: the DecisionRequest as it would be
//     sent, less what belongs to one admission (key.go). The pods of one
//     ReplicaSet ask the same question.
//   - Coherent by revision: the decider announces what it decides with
//     (WatchRevision: the installation and classes revisions and a rollout
//     token; watch.go). An entry answers only while that stream is up and
//     the announcement is the one it was decided under; a different
//     announcement empties the cache, a lost stream stops its use at once.
//     An answer is remembered only when it carries the announced revisions
//     and no announcement came or went while it was asked.
//   - Bounded: least recently used out, by entries and by bytes.
//   - Stale if error: when the decider cannot be reached, an entry the
//     decider confirmed less than StaleIfError ago answers, marked stale.
//
// Entries hold the decoded Decision, shared by every admission it answers:
// a holder never modifies it.
package decisioncache

import (
	"sync"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Defaults of the bounds (--decision-cache-max-entries, -max-bytes) and of
// --decision-cache-stale-if-error, chosen from the measurement in
// docs/performance.md.
const (
	DefaultMaxEntries   = 4096
	DefaultMaxBytes     = 16 << 20
	DefaultStaleIfError = 5 * time.Minute
)

// The values of the result label of dynamic_config_decision_cache_lookups_total.
const (
	// ResultHit: answered from the cache, the decider not asked.
	ResultHit = metrics.CacheHit
	// ResultMiss: the cache was usable and held no answer; the decider was asked.
	ResultMiss = metrics.CacheMiss
	// ResultBypass: the cache was not usable (no announcing stream, or a
	// rollout announced); the decider was asked and its answer not remembered.
	ResultBypass = metrics.CacheBypass
	// ResultStale: the decider could not be reached and a stale entry answered.
	ResultStale = metrics.CacheStale
)

// Revisions is what a decider announces it decides with: the installation
// and classes revisions, the rollout token and the decider's build (another
// build may answer differently under the same revisions).
type Revisions struct {
	Installation string
	Classes      string
	Rollout      string
	Build        string
}

// Config configures a Cache; zero fields take the defaults, except
// StaleIfError, whose zero is off.
type Config struct {
	// MaxEntries and MaxBytes bound the cache (0 = the defaults).
	MaxEntries int
	MaxBytes   int64
	// StaleIfError is how long after the decider last confirmed an entry's
	// revisions the entry may still answer when the decider cannot be
	// reached (0 = never).
	StaleIfError time.Duration
	// Metrics records the lookups and the size (nil = none).
	Metrics *metrics.Frontdoor
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Cache is the decision cache. It is safe for concurrent use.
type Cache struct {
	maxEntries   int
	maxBytes     int64
	staleIfError time.Duration
	metrics      *metrics.Frontdoor
	now          func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	// newest and oldest are the ends of the recency list.
	newest, oldest *entry
	bytes          int64
	// announced is the latest announcement; known once there was one.
	announced Revisions
	known     bool
	// up is whether the stream that announced it is up.
	up bool
	// epoch changes whenever usability changes: an announcement that
	// differs, a stream lost or regained. An answer asked in one epoch is
	// remembered only in the same one.
	epoch uint64
	// confirmed is when an up stream last announced (or heartbeat).
	confirmed time.Time
}

// entry is one remembered answer.
type entry struct {
	key      string
	decision *deciderv1.Decision
	stored   time.Time
	size     int64
	// memo is what the front door derived from the decision (its patch for
	// a pod shape; Answer.Memo), counted in size.
	memo Memo
	// newer and older link the recency list.
	newer, older *entry
}

// New returns an empty cache, unusable until a decider announces (Announce).
func New(cfg Config) *Cache {
	c := &Cache{
		maxEntries:   cfg.MaxEntries,
		maxBytes:     cfg.MaxBytes,
		staleIfError: max(cfg.StaleIfError, 0),
		metrics:      cfg.Metrics,
		now:          cfg.Now,
		entries:      make(map[string]*entry),
	}
	if c.maxEntries <= 0 {
		c.maxEntries = DefaultMaxEntries
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxBytes
	}
	if c.now == nil {
		c.now = time.Now
	}
	c.metrics.DecisionCacheSize(0, 0)
	return c
}

// Announce is one announcement of the stream that is up: the revisions the
// decider decides with. Different revisions than before empty the cache
// (its entries were decided under another state and must never answer, not
// even stale); the same ones (a heartbeat, or a stream regained on an
// unchanged decider) confirm the entries.
func (c *Cache) Announce(r Revisions) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.announceLocked(r)
}

func (c *Cache) announceLocked(r Revisions) {
	if c.known && r != c.announced {
		c.clearLocked()
	}
	if !c.up || !c.known || r != c.announced {
		c.epoch++
	}
	c.announced, c.known, c.up = r, true, true
	c.confirmed = c.now()
}

// Lost says the announcing stream is gone: no entry answers as fresh until
// a stream announces again. The entries stay, for stale-if-error, and answer
// again if the next announcement is the same.
func (c *Cache) Lost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.up {
		c.up = false
		c.epoch++
	}
}

// Usable reports whether entries answer now: a stream is up and has
// announced, and no rollout is announced.
func (c *Cache) Usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usableLocked()
}

// usableLocked is Usable. While a rollout is announced (spec 10) the cache
// steps aside: the decider compares every admission with the candidate —
// the shadow counts a rollout's readiness waits for, the list of differing
// workloads, the canary's guard — and an answer given from the cache would
// be an admission it never saw. The announcement still empties the cache
// when the rollout begins and ends.
func (c *Cache) usableLocked() bool { return c.up && c.announced.Rollout == "" }

// Announced is the latest announcement (zero before any).
func (c *Cache) Announced() Revisions {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.announced
}

// Len is the number of entries.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Bytes is the estimated memory of the entries (entrySize).
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// clearLocked forgets every entry.
func (c *Cache) clearLocked() {
	clear(c.entries)
	c.newest, c.oldest, c.bytes = nil, nil, 0
	c.metrics.DecisionCacheSize(0, 0)
}

// unlinkLocked takes e out of the recency list.
func (c *Cache) unlinkLocked(e *entry) {
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		c.newest = e.older
	}
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		c.oldest = e.newer
	}
	e.newer, e.older = nil, nil
}

// pushLocked makes e the most recently used.
func (c *Cache) pushLocked(e *entry) {
	e.older = c.newest
	if c.newest != nil {
		c.newest.newer = e
	}
	c.newest = e
	if c.oldest == nil {
		c.oldest = e
	}
}

// removeLocked forgets e.
func (c *Cache) removeLocked(e *entry) {
	c.unlinkLocked(e)
	delete(c.entries, e.key)
	c.bytes -= e.size
}

// storeLocked remembers d under key, evicting the least recently used
// entries beyond the bounds. An answer larger than the byte bound alone is
// not remembered.
func (c *Cache) storeLocked(key []byte, d *deciderv1.Decision) {
	size := entrySize(len(key), d)
	if size > c.maxBytes {
		return
	}
	if old, ok := c.entries[string(key)]; ok {
		c.removeLocked(old)
	}
	e := &entry{key: string(key), decision: d, stored: c.now(), size: size}
	c.entries[e.key] = e
	c.pushLocked(e)
	c.bytes += size
	for len(c.entries) > c.maxEntries || c.bytes > c.maxBytes {
		c.removeLocked(c.oldest)
	}
	c.metrics.DecisionCacheSize(len(c.entries), c.bytes)
}
