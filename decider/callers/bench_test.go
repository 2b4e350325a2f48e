package callers

import (
	"fmt"
	"strings"
	"testing"
)

// bigFile is a callers file of callers × clusters entries.
func bigFile(callers, clusters int) []byte {
	var b strings.Builder
	b.WriteString("callers:\n")
	for i := range callers {
		fmt.Fprintf(&b, "  - name: caller-%d\n    credentials:\n      - tokenSHA256: %s\n    clusters:\n", i, digestOf(fmt.Sprintf("token-%d", i)))
		for j := range clusters {
			fmt.Fprintf(&b, "      - c%d-%d\n", i, j)
		}
	}
	return []byte(b.String())
}

// BenchmarkReloadOfABigCallersFile parses files at the limits: the time and
// memory a reload costs its watch goroutine (never a decision).
func BenchmarkReloadOfABigCallersFile(b *testing.B) {
	for _, size := range []struct{ callers, clusters int }{
		{100, MaxClustersPerCaller}, // 100 000 entries, one caller at the cluster limit
		{MaxCallers, 10},            // 100 000 entries, the caller limit
		{1, MaxClustersPerCaller},   // the worst single caller, at the limit
	} {
		data := bigFile(size.callers, size.clusters)
		b.Run(fmt.Sprintf("%d callers × %d clusters (%d KiB)", size.callers, size.clusters, len(data)>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := Parse(data, "callers.yaml", Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
