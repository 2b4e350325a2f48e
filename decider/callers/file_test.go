package callers

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/testfile"
)

type recorder struct {
	mu       sync.Mutex
	inForce  [][]string
	ok, fail int
}

func (r *recorder) CallersInForce(names []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inForce = append(r.inForce, names)
}

func (r *recorder) CallersReloaded(ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ok {
		r.ok++
	} else {
		r.fail++
	}
}

func fileOf(name string) string {
	return "callers:\n  - name: " + name + "\n    clusters: [x]\n    credentials: [{tokenSHA256: " + digestOf(name) + "}]\n"
}

// rewrite writes content with a modification time the last check has not seen.
func rewrite(t *testing.T, path, content string, at time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, at, at); err != nil {
		t.Fatal(err)
	}
}

func TestACallersFileReloadIsLoggedCountedAndKeepsTheLastGoodSet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "callers.yaml")
	rewrite(t, path, fileOf("first"), time.Unix(1000, 0))
	var log bytes.Buffer
	rec := &recorder{}
	f, err := Open(path, Options{}, slog.New(slog.NewTextHandler(&log, nil)), rec)
	if err != nil {
		t.Fatal(err)
	}
	names := func() string { return strings.Join(f.Current().Names(), ",") }

	t.Run("an unchanged file is not re-read", func(t *testing.T) {
		f.Check()
		if rec.ok+rec.fail != 0 || len(rec.inForce) != 1 {
			t.Errorf("ok %d, failed %d, in force %d times; want the start only", rec.ok, rec.fail, len(rec.inForce))
		}
	})
	t.Run("a changed file is put in force and counted", func(t *testing.T) {
		rewrite(t, path, fileOf("second"), time.Unix(2000, 0))
		f.Check()
		if names() != "second" || rec.ok != 1 {
			t.Errorf("callers %q, ok %d; want second and 1", names(), rec.ok)
		}
	})
	t.Run("an invalid file keeps the last good set and counts an error", func(t *testing.T) {
		rewrite(t, path, "callers: [", time.Unix(3000, 0))
		f.Check()
		if names() != "second" || rec.fail != 1 || !strings.Contains(log.String(), "callers file reload rejected") {
			t.Errorf("callers %q, failed %d, log:\n%s", names(), rec.fail, log.String())
		}
	})
	t.Run("a deleted file is logged once at WARN, counted, and the last good set stays in force", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		f.Check()
		f.Check()
		if got := strings.Count(log.String(), "level=WARN msg=\"callers file is gone; the last good callers stay in force until it is back\""); got != 1 {
			t.Errorf("%d WARN lines for the deleted file, want 1; log:\n%s", got, log.String())
		}
		if names() != "second" || rec.fail != 2 {
			t.Errorf("callers %q, failed %d; want second and 2", names(), rec.fail)
		}
	})
	t.Run("a file that comes back is read again", func(t *testing.T) {
		rewrite(t, path, fileOf("third"), time.Unix(3000, 0))
		f.Check()
		if names() != "third" || rec.ok != 2 {
			t.Errorf("callers %q, ok %d; want third and 2", names(), rec.ok)
		}
	})
	t.Run("a file grown above the size limit is refused before it is read", func(t *testing.T) {
		rewrite(t, path, fileOf("fourth")+"#"+strings.Repeat("x", MaxFileBytes), time.Unix(4000, 0))
		f.Check()
		if names() != "third" || !strings.Contains(log.String(), "above the limit of 4194304 bytes") {
			t.Errorf("callers %q, log:\n%s", names(), log.String())
		}
	})
}

func TestWatchFollowsTheFileUntilItsContextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "callers.yaml")
	rewrite(t, path, fileOf("first"), time.Unix(1000, 0))
	f, err := Open(path, Options{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { f.Watch(ctx, time.Millisecond); close(done) }()
	rewrite(t, path, fileOf("second"), time.Unix(2000, 0))
	deadline := time.Now().Add(10 * time.Second)
	for f.Current().Names()[0] != "second" && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := f.Current().Names()[0]; got != "second" {
		t.Errorf("callers %q after the change, want second", got)
	}
	cancel()
	<-done
}

// manyCallersFile lists n callers named <prefix>-<i>, one a line: every
// prefix of whole lines is a valid file of fewer callers.
func manyCallersFile(prefix string, n int) []byte {
	var b strings.Builder
	b.WriteString("callers:\n")
	for i := range n {
		name := prefix + "-" + strconv.Itoa(i)
		b.WriteString("  - {name: " + name + ", clusters: [x], credentials: [{tokenSHA256: " + digestOf(name) + "}]}\n")
	}
	return []byte(b.String())
}

// Issue 38: 5 of 6 in-place rewrites of a callers file put a prefix in force
// and locked the callers after the cut out. Every set put in force while
// the file is rewritten in place, six times over, is one of the whole files.
func TestACallersFileRewrittenInPlaceIsNeverPutInForceAsAPrefix(t *testing.T) {
	const n = 8000 // about 1 MB
	east, west := manyCallersFile("east", n), manyCallersFile("west", n)
	path := filepath.Join(t.TempDir(), "callers.yaml")
	if err := os.WriteFile(path, east, 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	f, err := Open(path, Options{}, nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Watch(ctx, 5*time.Millisecond)
	for round := range 6 {
		content, first := west, "west-0"
		if round%2 == 1 {
			content, first = east, "east-0"
		}
		// 16 chunks 5 ms apart: the watch reads the file mid-write.
		testfile.RewriteInPlace(t, path, content, 64<<10, 5*time.Millisecond)
		deadline := time.Now().Add(10 * time.Second)
		for names := f.Current().Names(); names[0] != first || len(names) != n; names = f.Current().Names() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the whole file never came in force (%d callers, first %s)", round, len(names), names[0])
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	prefixes := 0
	for _, names := range rec.inForce {
		if len(names) != n {
			prefixes++
		}
	}
	t.Logf("%d sets put in force over 6 in-place rewrites, %d of them a prefix's", len(rec.inForce), prefixes)
	if prefixes > 0 {
		t.Errorf("%d sets of a half-written file were put in force", prefixes)
	}
}
