package classloader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

// clusterClasses is a stream of n cluster classes.
func clusterClasses(n int) []byte {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\napiVersion: dynamic-config.rs/v1alpha1\nkind: ClusterDynamicConfigClass\nmetadata:\n  name: shared-%d\nspec:\n  source: consul\n  endpoint: http://consul-%d.infra.svc:8500\n", i, i)
	}
	return []byte(b.String())
}

// Issue 38: a --classes-file read while it is written in place is read
// whole — never as the prefix of classes the read caught.
func TestAClassesFileBeingWrittenInPlaceIsReadWhole(t *testing.T) {
	const n = 4000
	path := filepath.Join(t.TempDir(), "classes.yaml")
	if err := os.WriteFile(path, clusterClasses(1), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		testfile.RewriteInPlace(t, path, clusterClasses(n), 32<<10, 3*time.Millisecond)
	}()
	time.Sleep(10 * time.Millisecond) // the writer is at work
	set, err := ReadFile(path)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if got := len(set.All()); got != n {
		t.Errorf("%d classes read of the %d written", got, n)
	}
}
