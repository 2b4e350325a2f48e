package follower_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/follower"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// stateJSON is a valid state file serving a snapshot of inst(t, n).
func stateJSON(t *testing.T, n int) []byte {
	t.Helper()
	tr := inst(t, n).Transport()
	b, err := json.Marshal(map[string]string{"revision": tr.Revision, "canonical": string(tr.Canonical)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startFrom runs Start on a follower of dir within a bound and reports
// whether it serves.
func startFrom(t *testing.T, dir string, c *clock, maxStale time.Duration) *follower.Follower {
	t.Helper()
	f := follower.New(follower.Config{ID: "west-0", StateDir: dir, Store: installationloader.NewStore(nil), MaxStale: maxStale, Now: c.now})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Start()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Start hung on the state path")
	}
	return f
}

// Issue 38: the state path is a plain file the follower wrote. A FIFO hung
// the start, a link to /dev/zero exhausted the memory, a link to another
// file was served (and had its time touched), and a time in the future
// switched --max-stale off.
func TestTheStatePathIsOnlyThePlainFileTheFollowerWrote(t *testing.T) {
	c := &clock{t: time.Now()}
	t.Run("a FIFO is refused without blocking", func(t *testing.T) {
		dir := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(dir, follower.StateFile), 0o600); err != nil {
			t.Skipf("no FIFO here: %v", err)
		}
		if f := startFrom(t, dir, c, 0); f.Serving() {
			t.Error("a follower serves from a FIFO")
		}
	})
	t.Run("a link to /dev/zero is refused without reading it", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Symlink("/dev/zero", filepath.Join(dir, follower.StateFile)); err != nil {
			t.Fatal(err)
		}
		if f := startFrom(t, dir, c, 0); f.Serving() {
			t.Error("a follower serves from /dev/zero")
		}
	})
	t.Run("a link to another file is neither served nor touched", func(t *testing.T) {
		dir, other := t.TempDir(), filepath.Join(t.TempDir(), "elsewhere.json")
		if err := os.WriteFile(other, stateJSON(t, 50), 0o600); err != nil {
			t.Fatal(err)
		}
		past := time.Unix(1_000_000, 0)
		if err := os.Chtimes(other, past, past); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, filepath.Join(dir, follower.StateFile)); err != nil {
			t.Fatal(err)
		}
		f := startFrom(t, dir, c, 0)
		if f.Serving() {
			t.Error("a follower serves a file it did not write")
		}
		if info, err := os.Stat(other); err != nil || !info.ModTime().Equal(past) {
			t.Errorf("the link's target was touched: %v %v", info.ModTime(), err)
		}
	})
	t.Run("a state file time in the future counts as now: --max-stale still ends it", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, follower.StateFile)
		if err := os.WriteFile(p, stateJSON(t, 50), 0o600); err != nil {
			t.Fatal(err)
		}
		future := c.now().Add(24 * time.Hour)
		if err := os.Chtimes(p, future, future); err != nil {
			t.Fatal(err)
		}
		f := startFrom(t, dir, c, time.Minute)
		if !f.Serving() {
			t.Fatal("a valid state file is not served")
		}
		c.add(2 * time.Minute)
		if !f.Stale() {
			t.Errorf("not stale two minutes after start with --max-stale 1m: a future file time switched it off (last seen %v)", f.State().GetLastSeenAt().AsTime())
		}
	})
}
