package callers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// Recheck bounds how often the callers file is stat'ed for a change (a
// variable so tests can shorten it), as the token file is.
var Recheck = time.Second

// File is a callers file in force, re-read when it changes (a Secret update
// swaps it under a running pod). A changed file that does not validate is
// logged with every problem and the last good set stays in force.
type File struct {
	path     string
	opts     Options
	logger   *slog.Logger
	onReload func(*Set)

	mu        sync.Mutex
	checkedAt time.Time
	modTime   time.Time
	size      int64
	current   *Set
}

// Open reads and validates the callers file at path. onReload (may be nil)
// is called with the set in force at start and after every good reload.
func Open(path string, opts Options, logger *slog.Logger, onReload func(*Set)) (*File, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	f := &File{path: path, opts: opts, logger: logger, onReload: onReload}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("callers file: %w", err)
	}
	if err := f.load(info); err != nil {
		return nil, err
	}
	f.checkedAt = time.Now()
	return f, nil
}

// load reads and validates the file; the caller holds mu (or owns f).
func (f *File) load(info os.FileInfo) error {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("callers file: %w", err)
	}
	set, err := Parse(data, f.path, f.opts)
	f.modTime, f.size = info.ModTime(), info.Size()
	if err != nil {
		return err
	}
	f.current = set
	if f.onReload != nil {
		f.onReload(set)
	}
	return nil
}

// Current is the set in force, re-reading the file when it changed since
// the last check.
func (f *File) Current() *Set {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now := time.Now(); now.Sub(f.checkedAt) >= Recheck {
		f.checkedAt = now
		if info, err := os.Stat(f.path); err == nil && (!info.ModTime().Equal(f.modTime) || info.Size() != f.size) {
			if err := f.load(info); err != nil {
				var problems *Problems
				if errors.As(err, &problems) {
					f.logger.Error("callers file reload rejected; the last good callers stay in force",
						"path", f.path, "problems", problems.List)
				} else {
					f.logger.Error("callers file reload failed; the last good callers stay in force", "path", f.path, "error", err.Error())
				}
			} else {
				f.logger.Info("callers file reloaded", "path", f.path, "callers", len(f.current.callers))
			}
		}
	}
	return f.current
}

type contextKey struct{}

// WithCaller returns ctx carrying the authenticated caller.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, contextKey{}, c)
}

// FromContext returns the authenticated caller of a call (false without a
// callers file).
func FromContext(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(contextKey{}).(*Caller)
	return c, ok && c != nil
}
