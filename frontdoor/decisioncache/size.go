package decisioncache

import deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"

// What an entry costs in memory, estimated without walking the decision:
// its key's bytes, the entry and its map slot, and the decoded decision at
// a multiple of its wire size (Go strings, slice and map headers and
// message structs take several times the bytes their content has on the
// wire) with the patch the handler keeps beside an inject decision (its
// Memo, base64: about twice the plan's wire size). The multiple is measured
// over the golden corpus's decisions (TestTheEntrySizeEstimateCoversTheMeasuredHeap,
// doors/engine: heap ÷ estimate at most 0.85, the largest need 6.8×) and
// errs high, so that the byte bound holds in the heap, not only in the
// estimate.
const (
	entryOverhead      = 256 // entry struct, map slot, key string header
	decisionOverhead   = 1024
	decisionWireFactor = 8
)

// entrySize is the estimated memory of one entry.
func entrySize(keyLen int, d *deciderv1.Decision) int64 {
	return int64(entryOverhead + keyLen + decisionOverhead + decisionWireFactor*d.SizeVT())
}

// EntrySize is entrySize for the measurement in doors/engine's tests.
func EntrySize(keyLen int, d *deciderv1.Decision) int64 { return entrySize(keyLen, d) }
