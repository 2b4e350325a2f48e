package main

import (
	"fmt"
	"io"
	"time"

	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
)

// decisionCacheFlags are the front door's --decision-cache* flags (issue
// 43, docs/performance.md), of `frontdoor` and of serve's front door.
type decisionCacheFlags struct {
	on           bool
	maxEntries   int64
	maxBytes     int64
	staleIfError time.Duration
}

// Bounds of the flags: a cache of one entry is a cache; below 64 KiB a
// single decision with its patch may not fit.
const (
	minDecisionCacheBytes   = 64 << 10
	maxDecisionCacheEntries = 1 << 24
)

func (c *decisionCacheFlags) register(fs *flagSet) {
	fs.boolVar(&c.on, "decision-cache", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE", true,
		"answer a question asked before from memory while the decider announces the revisions it was decided under; false = ask the decider every time")
	fs.int64Var(&c.maxEntries, "decision-cache-max-entries", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_ENTRIES", decisioncache.DefaultMaxEntries,
		"decisions the cache holds at most (least recently used out)")
	fs.int64Var(&c.maxBytes, "decision-cache-max-bytes", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_BYTES", decisioncache.DefaultMaxBytes,
		"estimated memory of the decisions the cache holds at most, in bytes")
	fs.durationVar(&c.staleIfError, "decision-cache-stale-if-error", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_STALE_IF_ERROR", decisioncache.DefaultStaleIfError,
		"while the decider cannot be reached, answer from a decision it confirmed less than this long ago, marked stale; 0 = never")
}

// valid checks the flags, printing the first problem as cmd's.
func (c *decisionCacheFlags) valid(stderr io.Writer, cmd string) bool {
	switch {
	case c.maxEntries < 1 || c.maxEntries > maxDecisionCacheEntries:
		fmt.Fprintf(stderr, "%s: --decision-cache-max-entries is %d: between 1 and %d\n", cmd, c.maxEntries, maxDecisionCacheEntries)
	case c.maxBytes < minDecisionCacheBytes:
		fmt.Fprintf(stderr, "%s: --decision-cache-max-bytes is %d: at least %d\n", cmd, c.maxBytes, minDecisionCacheBytes)
	case c.staleIfError < 0:
		fmt.Fprintf(stderr, "%s: --decision-cache-stale-if-error is %s: 0 (never) or more\n", cmd, c.staleIfError)
	default:
		return true
	}
	return false
}

// config is the front door's DecisionCache.
func (c *decisionCacheFlags) config() frontdoord.DecisionCache {
	return frontdoord.DecisionCache{Off: !c.on, MaxEntries: int(c.maxEntries), MaxBytes: c.maxBytes, StaleIfError: c.staleIfError}
}
