package callers

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// DefaultRecheck is how often the decider stats the callers file for a
// change, as it does the token file.
const DefaultRecheck = time.Second

// Observer is told what a File does (the decider metrics implement it).
type Observer interface {
	// CallersInForce is called with the names of the set put in force: at
	// Open and after every good reload.
	CallersInForce(names []string)
	// CallersReloaded counts one reload of a changed or vanished file; ok
	// says whether its set was put in force.
	CallersReloaded(ok bool)
}

// File is a callers file in force, re-read when it changes (a Secret update
// swaps it under a running pod). Watch re-reads and parses it off the
// request path and swaps the parsed set in atomically: Current never waits
// on a parse. A changed file that does not validate, that cannot be read or
// that is gone is logged and the last good set stays in force.
type File struct {
	path   string
	opts   Options
	logger *slog.Logger
	obs    Observer

	current atomic.Pointer[Set]

	reloadMu sync.Mutex // held by a reload only; readers never take it
	modTime  time.Time
	size     int64
	digest   [sha256.Size]byte // of the content last put in force (or refused)
	missing  bool              // the file was gone at the last check (logged once)
	// pending debounces a changed file (issue 38): it is read again one
	// settle interval later and put in force only when it did not change.
	pending stablefile.Debounce
	waiting bool // a change is read but has not settled: check again
}

// Open reads and validates the callers file at path. obs (may be nil) is
// told the set in force at start and every reload. Call Watch to follow
// changes.
func Open(path string, opts Options, logger *slog.Logger, obs Observer) (*File, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &File{path: path, opts: opts, logger: logger, obs: obs, pending: stablefile.Debounce{Settle: opts.Settle}}
	s, err := stablefile.ReadSettled(path, MaxFileBytes, opts.Settle)
	if err != nil {
		return nil, f.readError(err)
	}
	set, err := Parse(s.Data, f.path, f.opts)
	if err != nil {
		return nil, err
	}
	f.modTime, f.size, f.digest = s.ModTime, int64(len(s.Data)), s.Digest
	f.put(set)
	return f, nil
}

// readError is a failed read as Open and Check report it: a file above
// MaxFileBytes is a problem of the file, quoting the size and the limit.
func (f *File) readError(err error) error {
	var large *stablefile.TooLargeError
	if errors.As(err, &large) {
		return &Problems{Source: f.path, List: []string{sizeProblem(large.Size)}}
	}
	return fmt.Errorf("callers file: %w", err)
}

// Current is the set in force: one atomic load, whatever a reload is doing.
func (f *File) Current() *Set {
	if f == nil {
		return nil
	}
	return f.current.Load()
}

// Watch checks the file every interval until ctx ends (see Check).
func (f *File) Watch(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f.Check()
		}
	}
}

// Check re-reads the file when its modification time or size changed since
// the last check (or a change read earlier has not settled yet), and puts
// its set in force when it validates — once the change has settled: read
// stable, and the same content one settle interval later (a Check waits
// that long), or unwritten for that long (issue 38: 5 of 6 in-place
// rewrites put a prefix in force and locked callers out). A change still
// being written is checked again at the next Check. A file that is gone is
// logged once (WARN) and counted as a failed reload; the last good set
// stays in force, and the file is read again when it is back.
func (f *File) Check() {
	f.reloadMu.Lock()
	defer f.reloadMu.Unlock()
	info, err := os.Stat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.pending.Reset()
		f.waiting = false
		if !f.missing {
			f.missing = true
			f.modTime, f.size = time.Time{}, -1 // whatever comes back is read
			f.logger.Warn("callers file is gone; the last good callers stay in force until it is back", "path", f.path)
			f.observed(false)
		}
		return
	case err != nil:
		f.logger.Error("callers file cannot be checked; the last good callers stay in force", "path", f.path, "error", err.Error())
		return
	case !f.waiting && info.ModTime().Equal(f.modTime) && info.Size() == f.size:
		return
	}
	f.missing = false
	s, settled, err := f.readSettling()
	if err == nil && !settled {
		f.waiting = true // still being written: the next Check reads it again
		return
	}
	f.waiting = false
	if err != nil {
		f.modTime, f.size = info.ModTime(), info.Size()
		f.refused(f.readError(err))
		return
	}
	if s.Digest == f.digest {
		f.modTime, f.size = s.ModTime, int64(len(s.Data)) // touched, not changed
		return
	}
	f.modTime, f.size, f.digest = s.ModTime, int64(len(s.Data)), s.Digest
	set, err := Parse(s.Data, f.path, f.opts)
	if err != nil {
		f.refused(err)
		return
	}
	f.put(set)
	f.observed(true)
	f.logger.Info("callers file reloaded", "path", f.path, "callers", len(set.callers))
}

// refused logs and counts a reload that keeps the last good set.
func (f *File) refused(err error) {
	var problems *Problems
	if errors.As(err, &problems) {
		f.logger.Error("callers file reload rejected; the last good callers stay in force",
			"path", f.path, "problems", problems.List)
	} else {
		f.logger.Error("callers file reload failed; the last good callers stay in force", "path", f.path, "error", err.Error())
	}
	f.observed(false)
}

// readSettling reads the file stable and, when the read has not settled
// yet, once more a settle interval later. settled is false when the file
// was still changing.
func (f *File) readSettling() (s stablefile.Snapshot, settled bool, err error) {
	for attempt := range 2 {
		if attempt > 0 {
			time.Sleep(f.settle())
		}
		s, err = stablefile.Read(f.path, MaxFileBytes)
		switch {
		case errors.Is(err, stablefile.ErrUnstable):
			f.pending.Reset()
			continue
		case err != nil:
			f.pending.Reset()
			return s, false, err
		case s.Digest == f.digest || f.pending.Settled(s, time.Now()):
			return s, true, nil
		}
	}
	return s, false, nil
}

// settle is the settle interval of a change.
func (f *File) settle() time.Duration {
	if f.opts.Settle > 0 {
		return f.opts.Settle
	}
	return stablefile.DefaultSettle
}

// put swaps set in and tells the observer.
func (f *File) put(set *Set) {
	f.current.Store(set)
	if f.obs != nil {
		f.obs.CallersInForce(set.Names())
	}
}

func (f *File) observed(ok bool) {
	if f.obs != nil {
		f.obs.CallersReloaded(ok)
	}
}

type contextKey struct{}

// WithCaller returns ctx carrying the authenticated caller.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, contextKey{}, c)
}

// NotForThisCluster is the PermissionDenied text of a known caller that
// names a cluster it may not speak for: Decide and SyncInstallation answer
// it alike (spec 06, 09 §2). It names neither the other callers nor their
// clusters, nor the cluster asked for.
const NotForThisCluster = "this caller may not speak for the cluster named in the request"

// FromContext returns the authenticated caller of a call (false without a
// callers file).
func FromContext(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(contextKey{}).(*Caller)
	return c, ok && c != nil
}
