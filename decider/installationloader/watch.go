package installationloader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// DefaultReloadInterval is the document poll interval when none is given.
const DefaultReloadInterval = 10 * time.Second

// settle is how long Watch waits after a file-system event before reading
// the document, so a burst of events (a ConfigMap's ..data swap) is one check.
const settle = 100 * time.Millisecond

// Watch keeps store's installation in step with the document of opts until
// ctx is done (spec 02 §11). It watches the document's DIRECTORY with
// fsnotify (so a ConfigMap's ..data symlink swap is seen) and also polls
// every interval, comparing the file's SHA-256. On a change the whole
// installation (environment + document) is loaded again:
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
// logs the envPolicy warning when that installation carries a policy.
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
	w.last = fileDigest(opts.DocumentPath)
	if w.last != digestAbsent {
		// Present at start: its disappearing is an error from now on.
		w.opts.DocumentExplicit = true
	}
	// Catch an edit made between the caller's Load and now; an unchanged
	// installation is not counted as a reload.
	w.reload(true)

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
	var settleC <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			w.check()
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
			w.check()
		}
	}
}

type watcher struct {
	store  *Store
	opts   Options
	logger *slog.Logger
	obs    ReloadObserver
	last   string // digest of the document last loaded
}

const digestAbsent = "absent"

// fileDigest is the SHA-256 of the file's content, "absent" when it does not
// exist, or the read error.
func fileDigest(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return digestAbsent
		}
		return "error: " + err.Error()
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// check reloads when the document's content changed since the last load.
func (w *watcher) check() {
	d := fileDigest(w.opts.DocumentPath)
	if d == w.last {
		return
	}
	w.last = d
	w.reload(false)
}

// reload loads the installation again and swaps it in when valid and new.
// quiet suppresses the report of an unchanged revision (the start-up check).
func (w *watcher) reload(quiet bool) {
	old := w.store.Current()
	oldRevision := ""
	if old != nil {
		oldRevision = old.Revision
	}
	opts := w.opts
	// 02 §11: a blank document is the empty document at start only; from a
	// document that was not blank, it is a truncation, refused.
	opts.RefuseBlankDocument = old != nil && old.DocumentPresent && !old.DocumentBlank
	inst, err := Load(opts)
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
		if quiet {
			return
		}
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
