package callers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
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
	missing  bool // the file was gone at the last check (logged once)
}

// Open reads and validates the callers file at path. obs (may be nil) is
// told the set in force at start and every reload. Call Watch to follow
// changes.
func Open(path string, opts Options, logger *slog.Logger, obs Observer) (*File, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &File{path: path, opts: opts, logger: logger, obs: obs}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("callers file: %w", err)
	}
	set, err := f.read(info)
	if err != nil {
		return nil, err
	}
	f.modTime, f.size = info.ModTime(), info.Size()
	f.put(set)
	return f, nil
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
// the last check, and puts its set in force when it validates. A file that
// is gone is logged once (WARN) and counted as a failed reload; the last
// good set stays in force, and the file is read again when it is back.
func (f *File) Check() {
	f.reloadMu.Lock()
	defer f.reloadMu.Unlock()
	info, err := os.Stat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
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
	case info.ModTime().Equal(f.modTime) && info.Size() == f.size:
		return
	}
	f.missing = false
	f.modTime, f.size = info.ModTime(), info.Size()
	set, err := f.read(info)
	if err != nil {
		var problems *Problems
		if errors.As(err, &problems) {
			f.logger.Error("callers file reload rejected; the last good callers stay in force",
				"path", f.path, "problems", problems.List)
		} else {
			f.logger.Error("callers file reload failed; the last good callers stay in force", "path", f.path, "error", err.Error())
		}
		f.observed(false)
		return
	}
	f.put(set)
	f.observed(true)
	f.logger.Info("callers file reloaded", "path", f.path, "callers", len(set.callers))
}

// read reads and validates the file, refusing one above MaxFileBytes before
// reading it.
func (f *File) read(info os.FileInfo) (*Set, error) {
	if info.Size() > MaxFileBytes {
		return nil, &Problems{Source: f.path, List: []string{sizeProblem(info.Size())}}
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("callers file: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1)) // it may have grown since the stat
	if err != nil {
		return nil, fmt.Errorf("callers file: %w", err)
	}
	return Parse(data, f.path, f.opts)
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
