package stablefile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestAReadIsWholeOrRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("a file at rest is read whole, with its digest", func(t *testing.T) {
		s, err := Read(path, 0)
		if err != nil || string(s.Data) != "content" || s.Digest != sha256.Sum256([]byte("content")) {
			t.Fatalf("%q %v", s.Data, err)
		}
	})
	t.Run("a missing file is fs.ErrNotExist", func(t *testing.T) {
		if _, err := Read(filepath.Join(dir, "absent"), 0); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	})
	t.Run("a file above the limit is refused unread, naming its size and the limit", func(t *testing.T) {
		var large *TooLargeError
		if _, err := Read(path, 6); !errors.As(err, &large) || err.Error() != "the file is 7 bytes, above the limit of 6 bytes" {
			t.Fatal(err)
		}
		if _, err := Read(path, 7); err != nil {
			t.Fatal(err)
		}
	})
}

func TestAVersionIsSettledOnlyOnceItStayedTheSameForTheSettleInterval(t *testing.T) {
	now := time.Unix(10000, 0)
	fresh := func(content string) Snapshot {
		return Snapshot{Data: []byte(content), Digest: sha256.Sum256([]byte(content)), ModTime: now}
	}
	cases := []struct {
		name  string
		reads []struct {
			s     Snapshot
			after time.Duration
		}
		want []bool
	}{
		{"a fresh version is not settled at its first read", []struct {
			s     Snapshot
			after time.Duration
		}{{fresh("a"), 0}}, []bool{false}},
		{"the same version a settle interval later is", []struct {
			s     Snapshot
			after time.Duration
		}{{fresh("a"), 0}, {fresh("a"), DefaultSettle}}, []bool{false, true}},
		{"the same version sooner is not", []struct {
			s     Snapshot
			after time.Duration
		}{{fresh("a"), 0}, {fresh("a"), DefaultSettle / 2}}, []bool{false, false}},
		{"another version starts the interval again", []struct {
			s     Snapshot
			after time.Duration
		}{{fresh("a"), 0}, {fresh("ab"), DefaultSettle}, {fresh("ab"), DefaultSettle + DefaultSettle/2}, {fresh("ab"), 2 * DefaultSettle}},
			[]bool{false, false, false, true}},
		{"a file unwritten for the interval and the slack is settled at once", []struct {
			s     Snapshot
			after time.Duration
		}{{fresh("a"), DefaultSettle + mtimeSlack}}, []bool{true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d Debounce
			for i, r := range c.reads {
				if got := d.Settled(r.s, now.Add(r.after)); got != c.want[i] {
					t.Fatalf("read %d: settled %v, want %v", i, got, c.want[i])
				}
			}
		})
	}
}

// Issue 38: every read that ReadSettled returns while a writer rewrites the
// file in place is one whole version, never a prefix.
func TestReadSettledNeverReturnsAHalfWrittenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	old, next := bytes.Repeat([]byte("o"), 2<<20), bytes.Repeat([]byte("n"), 2<<20)
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	reads := map[int]int{} // length → count
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, err := ReadSettled(path, 0, 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				reads[len(s.Data)]++
				mu.Unlock()
			}
		}()
	}
	for range 3 {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(next); off += 64 << 10 {
			if _, err := f.Write(next[off : off+64<<10]); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * DefaultSettle)
	}
	close(stop)
	wg.Wait()
	for n, count := range reads {
		if n != len(old) {
			t.Errorf("%d reads of %d bytes: a half-written file", count, n)
		}
	}
}

func TestWriteAtomicReplacesTheFileWholeAndLeavesNothingBeside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "addr")
	for _, content := range []string{"first", "the second, longer"} {
		if err := WriteAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("the directory holds %d entries (%v), want the file alone", len(entries), err)
	}
	if err := WriteAtomic(filepath.Join(dir, "absent", "addr"), []byte("x")); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
}
