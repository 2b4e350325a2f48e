package callers

import "fmt"

// The callers file's limits (docs/multi-cluster.md). A file above one is
// refused with the number found and the limit, and the last good set stays
// in force: a file that size is a mistake or an attack, and parsing it
// unbounded would cost the decider its memory.
const (
	// MaxFileBytes bounds the file's size (4 MiB).
	MaxFileBytes = 4 << 20
	// MaxCallers bounds the number of callers.
	MaxCallers = 10_000
	// MaxClustersPerCaller bounds the clusters one caller may speak for.
	MaxClustersPerCaller = 1_000
)

// sizeProblem is the refusal of a file of size bytes above MaxFileBytes.
func sizeProblem(size int64) string {
	return fmt.Sprintf("the file is %d bytes, above the limit of %d bytes (4 MiB); a callers file lists callers, not data", size, MaxFileBytes)
}
