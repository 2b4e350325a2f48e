package installationloader

import (
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// DefaultReloadInterval is the document poll interval when none is given.
const DefaultReloadInterval = 10 * time.Second

// settle is how long Watch waits after a file-system event before reading
// the document, so a burst of events (a ConfigMap's ..data swap) is one
// check, and how long a new version must stay the same before it is loaded.
const settle = stablefile.DefaultSettle

// Watch keeps store's installation in step with the document of opts until
// ctx is done (spec 02 §11). It watches the document's DIRECTORY with
// fsnotify (so a ConfigMap's ..data symlink swap is seen) and also polls
// every interval, comparing the file's SHA-256. A changed document is
// loaded only once it has settled (issue 38): read stable, with the same
// content at two reads one settle interval apart, or unwritten for that
// long (internal/stablefile) — a document rewritten in place is never put
// in force as the prefix a read caught. The whole installation
// (environment + the document as read) is then loaded again:
//
//   - valid with a new revision: swapped in atomically, logged
//     "installation reloaded", obs.ReloadOK then obs.InForce;
//   - valid with the same revision: nothing swapped, obs.ReloadUnchanged;
//   - invalid, the document deleted, or the document became blank while
//     the installation in force came from one that was not: the last good installation stays,
//     every problem is logged at ERROR, obs.ReloadRejected, and the attempt
//     is recorded in store (GetInstallation.last_reload).
//
// Every attempt is recorded in store last, so a reader that sees it in
// GetInstallation also sees its swap, its metrics and its log line.
//
// A document deleted after start is a reload error unless the default path
// was already absent when Watch started. When it starts, Watch reports the
// installation already in force with obs.InForce and, like after every swap,
// logs the envPolicy warning when that installation carries a policy; a
// document that changed since the caller's Load is loaded as any change.
func Watch(ctx context.Context, store *Store, opts Options, interval time.Duration, logger *slog.Logger, obs ReloadObserver) {
	if logger == nil {
		logger = slog.Default()
	}
	if obs == nil {
		obs = NopObserver{}
	}
	if interval <= 0 {
		interval = DefaultReloadInterval
	}
	if cur := store.Current(); cur != nil {
		obs.InForce(cur)
		warnEnvPolicy(logger, cur)
	}
	if opts.DocumentPath == "" {
		<-ctx.Done()
		return
	}
	w := &watcher{store: store, opts: opts, logger: logger, obs: obs}
	if _, err := os.Stat(opts.DocumentPath); !errors.Is(err, fs.ErrNotExist) {
		// Present at start: its disappearing is an error from now on.
		w.opts.DocumentExplicit = true
	}
	// The document as the caller's Load read it is the last load; an edit
	// made since (another revision) is loaded as any other, once settled.
	w.last = w.inForce()
	var settleC <-chan time.Time
	if w.check() {
		settleC = time.After(settle)
	}

	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw, err := fsnotify.NewWatcher(); err != nil {
		logger.Warn("installation watch: file events unavailable; polling only", "error", err.Error())
	} else {
		defer fw.Close()
		dir := filepath.Dir(opts.DocumentPath)
		if err := fw.Add(dir); err != nil {
			logger.Warn("installation watch: cannot watch the document's directory; polling only", "directory", dir, "error", err.Error())
		} else {
			events, errs = fw.Events, fw.Errors
		}
	}

	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			if w.check() && settleC == nil {
				settleC = time.After(settle)
			}
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if settleC == nil {
				settleC = time.After(settle)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			logger.Warn("installation watch: file event error", "error", err.Error())
		case <-settleC:
			settleC = nil
			if w.check() {
				settleC = time.After(settle)
			}
		}
	}
}

type watcher struct {
	store  *Store
	opts   Options
	logger *slog.Logger
	obs    ReloadObserver
	last   string // what the document was at the last load: its digest, digestAbsent or its read error
	// pending debounces a new version: it is loaded only once settled.
	pending stablefile.Debounce
}

// inForce is the state of the document when it is the one in force: its
// digest when what it holds now builds the revision the store holds, ""
// otherwise (it changed since the caller's Load, or reads differently).
func (w *watcher) inForce() string {
	s, err := stablefile.Read(w.opts.DocumentPath, 0)
	cur := w.store.Current()
	if cur == nil {
		return ""
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && !cur.DocumentPresent:
		return digestAbsent
	case err != nil:
		return ""
	}
	if inst, err := build(w.opts, documentRead{data: s.Data}); err != nil || inst.Revision != cur.Revision {
		return ""
	}
	return hex.EncodeToString(s.Digest[:])
}

const digestAbsent = "absent"

// check loads the document when it changed since the last load and the
// change has settled (issue 38: a document rewritten in place was put in
// force as its valid prefix); a deleted or unreadable document counts at
// once (the last good installation stays either way). again says that a
// new version is waiting to settle, or was read while it changed: check
// once more after the settle interval.
func (w *watcher) check() (again bool) {
	s, err := stablefile.Read(w.opts.DocumentPath, 0)
	var state string
	switch {
	case errors.Is(err, stablefile.ErrUnstable):
		w.pending.Reset()
		return true
	case errors.Is(err, fs.ErrNotExist):
		state = digestAbsent
	case err != nil:
		state = "error: " + err.Error()
	default:
		state = hex.EncodeToString(s.Digest[:])
	}
	if state == w.last {
		w.pending.Reset()
		return false
	}
	if err == nil && !w.pending.Settled(s, time.Now()) {
		return true
	}
	w.last = state
	w.reload(documentRead{data: s.Data, err: err})
	return false
}

// reload builds the installation again with doc and swaps it in when valid
// and new.
func (w *watcher) reload(doc documentRead) {
	old := w.store.Current()
	oldRevision := ""
	if old != nil {
		oldRevision = old.Revision
	}
	opts := w.opts
	// 02 §11: a blank document is the empty document at start only; from a
	// document that was not blank, it is a truncation, refused.
	opts.RefuseBlankDocument = old != nil && old.DocumentPresent && !old.DocumentBlank
	inst, err := build(opts, doc)
	at := time.Now()
	if err != nil {
		var p *installation.Problems
		if !errors.As(err, &p) {
			p = &installation.Problems{DocumentPath: w.opts.DocumentPath, Lines: []string{err.Error()}}
		}
		w.obs.ReloadRejected(len(p.Lines))
		w.logger.Error("installation reload rejected; keeping the last good one",
			"revision", oldRevision, "attempted_revision", p.AttemptedRevision,
			"document", w.opts.DocumentPath, "problem_count", len(p.Lines), "problems", p.Lines)
		// Recorded last: whoever sees the attempt in GetInstallation also
		// sees its metric and its log line.
		w.store.RecordReload(ReloadStatus{OK: false, At: at, Problems: p.Lines, Items: p.Items, AttemptedRevision: p.AttemptedRevision})
		return
	}
	if inst.Revision == oldRevision {
		w.obs.ReloadUnchanged()
		w.logger.Info("installation unchanged", "revision", oldRevision, "document", w.opts.DocumentPath)
		w.store.RecordReload(ReloadStatus{OK: true, At: at, AttemptedRevision: inst.Revision})
		return
	}
	w.store.Swap(inst)
	w.obs.ReloadOK(oldRevision, inst.Revision)
	w.obs.InForce(inst)
	w.logger.Info("installation reloaded", "old_revision", oldRevision, "new_revision", inst.Revision, "document", w.opts.DocumentPath)
	warnEnvPolicy(w.logger, inst)
	w.store.RecordReload(ReloadStatus{OK: true, At: at, AttemptedRevision: inst.Revision})
}

func warnEnvPolicy(logger *slog.Logger, inst *installation.Installation) {
	if inst.EnvPolicy != nil {
		logger.Warn(installation.EnvPolicyWarning, "revision", inst.Revision)
	}
}
