package main

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitVar carries the container's memory limit in bytes (the
// chart and kustomize set it from limits.memory through the downward API).
const memoryLimitVar = "DYNAMIC_CONFIG_MEMORY_LIMIT"

// memoryLimitShare is the part of the container's limit the Go heap is held
// to (issue 23): the rest is left for stacks, buffers outside the heap and
// the runtime, so that the garbage collector works harder before the
// kernel kills the process.
const memoryLimitShare = 0.9

// softMemoryLimit is the soft limit for debug.SetMemoryLimit from the
// environment: none when GOMEMLIMIT is set (the runtime already read it) or
// the container limit is absent or not a positive byte count.
func softMemoryLimit(getenv func(string) string) (int64, bool) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false
	}
	limit, err := strconv.ParseInt(strings.TrimSpace(getenv(memoryLimitVar)), 10, 64)
	if err != nil || limit <= 0 {
		return 0, false
	}
	return int64(float64(limit) * memoryLimitShare), true
}

// applyMemoryLimit sets the runtime's soft memory limit from the
// environment; it returns the limit set (0 = none).
func applyMemoryLimit(getenv func(string) string) int64 {
	limit, ok := softMemoryLimit(getenv)
	if !ok {
		return 0
	}
	debug.SetMemoryLimit(limit)
	return limit
}
