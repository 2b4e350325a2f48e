// Package stablefile reads a file another process may be writing, and puts
// a version of it in force only when it is whole (issue 38): an installation
// document rewritten in place (6 MB, in 64 KiB chunks) was put in force as
// its valid prefix 5 times out of 5, its pins after the cut gone, and a
// callers file rewritten in place locked its callers out 5 times out of 6.
//
// A read is stable (Read) when the file did not change while it was read:
// the open file has the same size and modification time before and after
// the read, the path still names it afterwards, and the size is the number
// of bytes read. A stable read is settled (Debounce, ReadSettled) when the
// same content was read at two checks at least one settle interval apart,
// or when the file had not been written for a settle interval (and the
// coarsest modification-time granularity, mtimeSlack) when it was read: a
// real debounce, so that a writer still at work between two chunks is not
// taken for done. A writer that pauses for longer than the settle interval
// in the middle of an in-place rewrite can still be read between its chunks:
// the documented way to change a watched file is to write a temporary file
// beside it and rename it over the file (what a Kubernetes ConfigMap or
// Secret volume does), which no reader can see half done.
package stablefile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultSettle is how long a new version of a watched file must stay the
// same before it is put in force.
const DefaultSettle = 100 * time.Millisecond

// mtimeSlack covers the coarsest modification-time granularity of a file
// system (FAT's 2 s): a file whose time is older than the settle interval
// plus this was not written during the settle interval before the read.
const mtimeSlack = 2 * time.Second

// ErrUnstable is a read during which the file changed (or was replaced).
var ErrUnstable = errors.New("the file changed while it was read")

// ErrUnsettled is a file that never stayed the same for a settle interval
// within ReadSettled's attempts.
var ErrUnsettled = errors.New("the file kept changing")

// TooLargeError is a file above the read's limit; it is not read.
type TooLargeError struct {
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the file is %d bytes, above the limit of %d bytes", e.Size, e.Limit)
}

// Snapshot is one stable read of a file.
type Snapshot struct {
	Data    []byte
	Digest  [sha256.Size]byte
	ModTime time.Time
}

// Read reads the file at path whole, through limit bytes (0: no limit),
// following symbolic links (a ConfigMap volume's ..data), and fails with
// ErrUnstable when the read was not stable, with a *TooLargeError when the
// file is above limit, and with the file error (fs.ErrNotExist…) otherwise.
func Read(path string, limit int64) (Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return Snapshot{}, err
	}
	defer f.Close() //nolint:errcheck // read-only
	opened, err := f.Stat()
	if err != nil {
		return Snapshot{}, err
	}
	if limit > 0 && opened.Size() > limit {
		return Snapshot{}, &TooLargeError{Size: opened.Size(), Limit: limit}
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	buf := bytes.NewBuffer(make([]byte, 0, opened.Size()+bytes.MinRead)) // one allocation while the size holds
	if _, err := buf.ReadFrom(r); err != nil {
		return Snapshot{}, err
	}
	data := buf.Bytes()
	if limit > 0 && int64(len(data)) > limit {
		return Snapshot{}, &TooLargeError{Size: int64(len(data)), Limit: limit}
	}
	after, err := f.Stat()
	if err != nil {
		return Snapshot{}, err
	}
	again, err := os.Stat(path)
	if err != nil {
		return Snapshot{}, err
	}
	if !same(opened, after) || !same(after, again) || int64(len(data)) != after.Size() {
		return Snapshot{}, ErrUnstable
	}
	return Snapshot{Data: data, Digest: sha256.Sum256(data), ModTime: after.ModTime()}, nil
}

// same reports whether a and b describe the same file, unchanged.
func same(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Debounce decides, across the stable reads of one file, when a version may
// be put in force. The zero value settles after DefaultSettle.
type Debounce struct {
	// Settle is the settle interval (0: DefaultSettle).
	Settle time.Duration

	pending   [sha256.Size]byte
	pendingAt time.Time
	has       bool
}

// Settled reports whether s, read at now, may be put in force: the same
// content was read at least one settle interval before, or the file's time
// says it was not written for that long. Otherwise s becomes the version
// the next read is compared with.
func (d *Debounce) Settled(s Snapshot, now time.Time) bool {
	settle := d.Settle
	if settle <= 0 {
		settle = DefaultSettle
	}
	if d.has && d.pending == s.Digest && now.Sub(d.pendingAt) >= settle {
		d.has = false
		return true
	}
	if now.Sub(s.ModTime) >= settle+mtimeSlack {
		d.has = false
		return true
	}
	if !d.has || d.pending != s.Digest {
		d.pending, d.pendingAt, d.has = s.Digest, now, true
	}
	return false
}

// Reset forgets the pending version (the file is gone, or unreadable).
func (d *Debounce) Reset() { d.has = false }

// ReadStable is Read again after a settle interval while the read is not
// stable: a read that must not wait for the file to settle (an offline
// door's, a test's), but never returns a file that changed while it was read.
func ReadStable(path string, limit int64) (Snapshot, error) {
	for range settledAttempts {
		s, err := Read(path, limit)
		if !errors.Is(err, ErrUnstable) {
			return s, err
		}
		time.Sleep(DefaultSettle)
	}
	return Snapshot{}, ErrUnsettled
}

// settledAttempts bounds ReadSettled: a file rewritten without pause for
// this many settle intervals is reported unsettled.
const settledAttempts = 50

// ReadSettled reads path until a stable read is settled (see Debounce),
// sleeping a settle interval between reads: at start, where nothing is in
// force yet. A file error ends it at once.
func ReadSettled(path string, limit int64, settle time.Duration) (Snapshot, error) {
	d := Debounce{Settle: settle}
	if settle <= 0 {
		settle = DefaultSettle
	}
	for range settledAttempts {
		s, err := Read(path, limit)
		switch {
		case errors.Is(err, ErrUnstable):
			d.Reset()
		case err != nil:
			return Snapshot{}, err
		case d.Settled(s, time.Now()):
			return s, nil
		}
		time.Sleep(settle)
	}
	return Snapshot{}, ErrUnsettled
}

// Watched is a file read again at every use (a CA bundle at each TLS
// handshake) whose content is taken only once settled: the caller never
// waits for a change to settle, it keeps the last settled content until
// then. The zero value is not usable; use Watch.
type Watched struct {
	path  string
	limit int64

	mu      sync.Mutex
	current Snapshot
	has     bool
	pending Debounce
}

// Watch returns the watched file at path, read through limit (0: none).
func Watch(path string, limit int64) *Watched { return &Watched{path: path, limit: limit} }

// Path is the file's path.
func (w *Watched) Path() string { return w.path }

// Current is the file's settled content. The first successful call waits for
// the file to settle (ReadSettled); later ones read it stable and take a
// changed content only once it has settled, keeping the last settled one
// meanwhile, and when the file cannot be read.
func (w *Watched) Current() (Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.has {
		s, err := ReadSettled(w.path, w.limit, 0)
		if err != nil {
			return Snapshot{}, err
		}
		w.current, w.has = s, true
		return s, nil
	}
	s, err := Read(w.path, w.limit)
	switch {
	case err != nil:
		w.pending.Reset()
	case s.Digest == w.current.Digest:
		w.pending.Reset()
	case w.pending.Settled(s, time.Now()):
		w.current = s
	}
	return w.current, nil
}

// WriteAtomic writes data to path the way this package asks writers to:
// into a temporary file beside it, then renamed over it, so a reader sees
// the old file or the new one, never a part of either.
func WriteAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
