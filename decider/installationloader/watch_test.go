package installationloader

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// recorder is a ReloadObserver that counts.
type recorder struct {
	mu                 sync.Mutex
	ok, rejected, same int
	lastProblems       int
	inForce            []string
	lastOld, lastNew   string
}

func (r *recorder) ReloadOK(o, n string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ok++
	r.lastOld, r.lastNew = o, n
}
func (r *recorder) ReloadRejected(p int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected++
	r.lastProblems = p
}
func (r *recorder) ReloadUnchanged() { r.mu.Lock(); defer r.mu.Unlock(); r.same++ }
func (r *recorder) InForce(inst *installation.Installation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inForce = append(r.inForce, inst.Revision)
}
func (r *recorder) counts() (int, int, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok, r.rejected, r.same
}

// syncBuffer is a log sink safe for the watcher goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// eventually waits for cond, failing after a generous bound (a sync point, not a timing assertion).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// watching starts Watch on the document at path and returns its store,
// observer and log, stopping it when the test ends.
func watching(t *testing.T, path string, interval time.Duration) (*Store, *recorder, *syncBuffer) {
	t.Helper()
	opts := Options{DocumentPath: path}
	inst, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	store := NewStore(inst)
	rec := &recorder{}
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Watch(ctx, store, opts, interval, slog.New(slog.NewTextHandler(logs, nil)), rec)
	}()
	t.Cleanup(func() { cancel(); <-done })
	eventually(t, "the watcher to start", func() bool { rec.mu.Lock(); defer rec.mu.Unlock(); return len(rec.inForce) == 1 })
	return store, rec, logs
}

func write(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestReloadSwapsAValidEdit(t *testing.T) {
	path := writeDoc(t, "installation.yaml", "watchSeconds: \"30\"\n")
	store, rec, logs := watching(t, path, 20*time.Millisecond)
	old := store.Current().Revision
	write(t, path, "watchSeconds: \"10\"\n")
	// The attempt is recorded last, after the swap, the metric and the log.
	eventually(t, "the recorded reload", func() bool { lr := store.LastReload(); return lr != nil && lr.OK })
	if got := store.Current().Fleet["watch-seconds"].Text; got != "10" {
		t.Errorf("watch-seconds %q", got)
	}
	ok, _, _ := rec.counts()
	if ok != 1 || rec.lastOld != old || rec.lastNew != store.Current().Revision {
		t.Errorf("observer %+v", rec)
	}
	eventually(t, "the reload log line", func() bool { return strings.Contains(logs.String(), "installation reloaded") })
	if lr := store.LastReload(); lr == nil || !lr.OK || lr.AttemptedRevision != store.Current().Revision {
		t.Errorf("last reload %+v", lr)
	}
}

func TestReloadKeepsTheLastGoodOneOnABrokenEdit(t *testing.T) {
	path := writeDoc(t, "installation.yaml", "watchSeconds: \"30\"\n")
	store, rec, logs := watching(t, path, 20*time.Millisecond)
	good := store.Current()
	write(t, path, "watchSeconds: soon\nfileMode: abc\n")
	eventually(t, "the rejection", func() bool { lr := store.LastReload(); return lr != nil && !lr.OK })
	if _, rej, _ := rec.counts(); rej != 1 {
		t.Errorf("rejected %d", rej)
	}
	if store.Current() != good {
		t.Error("the broken edit was swapped in")
	}
	lr := store.LastReload()
	if lr == nil || lr.OK || len(lr.Problems) != 2 || !strings.HasPrefix(lr.AttemptedRevision, "sha256:") {
		t.Errorf("last reload %+v", lr)
	}
	if rec.lastProblems != 2 {
		t.Errorf("problems %d", rec.lastProblems)
	}
	out := logs.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "installation reload rejected; keeping the last good one") || !strings.Contains(out, "whole seconds") {
		t.Errorf("log %s", out)
	}
	t.Run("fixing the edit back to the good content is unchanged", func(t *testing.T) {
		write(t, path, "watchSeconds: \"30\"   # back\n")
		eventually(t, "the unchanged result", func() bool { return store.LastReload().OK })
		if _, _, same := rec.counts(); same != 1 || store.Current() != good {
			t.Errorf("store %+v", store.LastReload())
		}
	})
}

func TestReloadTreatsADeletedDocumentAsAnError(t *testing.T) {
	path := writeDoc(t, "installation.yaml", "sourceDeny: \"sandbox: git\"\n")
	store, rec, _ := watching(t, path, 20*time.Millisecond)
	good := store.Current()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the rejection", func() bool { lr := store.LastReload(); return lr != nil && !lr.OK })
	if _, rej, _ := rec.counts(); rej != 1 || store.Current() != good {
		t.Error("a deleted document opened the gates")
	}
	if lr := store.LastReload(); lr == nil || len(lr.Problems) != 1 || lr.Problems[0] != path+": the installation document does not exist" {
		t.Errorf("last reload %+v", lr)
	}
}

func TestReloadSeesAConfigMapSymlinkSwap(t *testing.T) {
	dir := t.TempDir()
	mk := func(version, content string) {
		d := filepath.Join(dir, version)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "installation.yaml"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("..2026_12_02_v1", "watchSeconds: \"30\"\n")
	if err := os.Symlink("..2026_12_02_v1", filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "installation.yaml")
	if err := os.Symlink("..data/installation.yaml", path); err != nil {
		t.Fatal(err)
	}
	// An hour's poll: only the directory's file events can see the swap.
	store, _, _ := watching(t, path, time.Hour)
	old := store.Current().Revision
	mk("..2026_12_02_v2", "watchSeconds: \"45\"\n")
	if err := os.Symlink("..2026_12_02_v2", filepath.Join(dir, "..data_tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the swapped document", func() bool { return store.Current().Revision != old })
	if got := store.Current().Fleet["watch-seconds"].Text; got != "45" {
		t.Errorf("watch-seconds %q", got)
	}
}

func TestReloadUnderConcurrentReadersNeverShowsAMix(t *testing.T) {
	path := writeDoc(t, "installation.yaml", docVersion(0))
	store, rec, _ := watching(t, path, 5*time.Millisecond)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var seen atomic.Int64
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				inst := store.Current()
				// Every part of one snapshot tells the same version.
				ws := inst.Fleet["watch-seconds"].Text
				deny := inst.SourceDeny.Groups[0].Namespace
				if "ns-"+ws != deny || installation.Revision(inst.Canonical) != inst.Revision {
					t.Errorf("mixed snapshot: watch-seconds %s, deny %s", ws, deny)
					return
				}
				seen.Add(1)
			}
		}()
	}
	for v := 1; v <= 5; v++ {
		write(t, path, docVersion(v))
		eventually(t, fmt.Sprintf("version %d", v), func() bool { return store.Current().Fleet["watch-seconds"].Text == fmt.Sprint(v) })
	}
	stop.Store(true)
	wg.Wait()
	eventually(t, "the last reload recorded", func() bool {
		lr := store.LastReload()
		return lr != nil && lr.AttemptedRevision == store.Current().Revision
	})
	if ok, _, _ := rec.counts(); ok != 5 || seen.Load() == 0 {
		t.Errorf("reloads %d, reads %d", ok, seen.Load())
	}
}

func docVersion(v int) string {
	return fmt.Sprintf("watchSeconds: \"%d\"\nsourceDeny: \"ns-%d: git\"\n", v, v)
}

func TestReloadPicksUpADefaultDocumentThatAppearsLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "installation.yaml")
	store, rec, _ := watching(t, path, 20*time.Millisecond)
	if store.Current().Revision != installation.EmptyRevision {
		t.Fatalf("start %s", store.Current().Revision)
	}
	write(t, path, "sourceDeny: \"sandbox: git\"\n")
	eventually(t, "the new document", func() bool { return store.Current().SourceDeny.Set() })
	t.Run("it may disappear again, since the default path was absent at start", func(t *testing.T) {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the empty installation", func() bool { return store.Current().Revision == installation.EmptyRevision })
		if _, rej, _ := rec.counts(); rej != 0 {
			t.Errorf("rejected %d", rej)
		}
	})
}
