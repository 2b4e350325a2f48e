package main

import (
	"fmt"
	"io"

	frontdoord "github.com/dynamic-config-admission/dynamic-config/frontdoor/daemon"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
)

// decisionCacheFlags are the front door's --decision-cache* flags (issue
// 43), of `frontdoor` and of serve's front door; on is --decision-cache.
type decisionCacheFlags struct {
	on  bool
	cfg frontdoord.DecisionCache
}

func (c *decisionCacheFlags) register(fs *flagSet) {
	fs.boolVar(&c.on, "decision-cache", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE", true,
		"answer a question asked before from memory while the decider announces the revisions it was decided under; false = ask the decider every time")
	fs.int64Var(&c.cfg.MaxEntries, "decision-cache-max-entries", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_ENTRIES", decisioncache.DefaultMaxEntries,
		"decisions the cache holds at most (least recently used out)")
	fs.int64Var(&c.cfg.MaxBytes, "decision-cache-max-bytes", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_MAX_BYTES", decisioncache.DefaultMaxBytes,
		"estimated memory of the decisions the cache holds at most, in bytes")
	fs.durationVar(&c.cfg.StaleIfError, "decision-cache-stale-if-error", "DYNAMIC_CONFIG_FRONTDOOR_DECISION_CACHE_STALE_IF_ERROR", decisioncache.DefaultStaleIfError,
		"while the decider cannot be reached, answer from a decision it confirmed less than this long ago, marked stale; 0 = never")
}

// valid completes the front door's DecisionCache and checks it, printing
// the first problem as cmd's.
func (c *decisionCacheFlags) valid(stderr io.Writer, cmd string) bool {
	c.cfg.Off = !c.on
	if err := c.cfg.Check(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return false
	}
	return true
}
