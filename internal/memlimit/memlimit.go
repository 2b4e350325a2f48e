// Package memlimit holds the process's Go heap below its container's
// memory limit (issue 23): the chart and kustomize hand every container its
// limit in DYNAMIC_CONFIG_MEMORY_LIMIT (the downward API), and the binary
// sets the runtime's soft limit to 90 % of it before any subcommand runs.
package memlimit

import (
	"runtime/debug"
	"strconv"
	"strings"
)

// Variable carries the container's memory limit in bytes (the
// chart and kustomize set it from limits.memory through the downward API).
const Variable = "DYNAMIC_CONFIG_MEMORY_LIMIT"

// share is the part of the container's limit the Go heap is held
// to (issue 23): the rest is left for stacks, buffers outside the heap and
// the runtime, so that the garbage collector works harder before the
// kernel kills the process.
const share = 0.9

// Soft is the soft limit for debug.SetMemoryLimit from the
// environment: none when GOMEMLIMIT is set (the runtime already read it) or
// the container limit is absent or not a positive byte count.
func Soft(getenv func(string) string) (int64, bool) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false
	}
	limit, err := strconv.ParseInt(strings.TrimSpace(getenv(Variable)), 10, 64)
	if err != nil || limit <= 0 {
		return 0, false
	}
	return int64(float64(limit) * share), true
}

// Apply sets the runtime's soft memory limit from the
// environment; it returns the limit set (0 = none).
func Apply(getenv func(string) string) int64 {
	limit, ok := Soft(getenv)
	if !ok {
		return 0
	}
	debug.SetMemoryLimit(limit)
	return limit
}
