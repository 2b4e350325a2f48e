package rolloutloader

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

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
)

// settle is how long Watch waits after a file-system event before reading
// the document, so a burst of events (a ConfigMap's ..data swap) is one check.
const settle = 100 * time.Millisecond

// Watch keeps store's rollout in step with the document of opts until ctx
// is done, as installationloader.Watch keeps the installation (spec 10 §2:
// hot-reloaded like the installation). It watches the document's directory
// with fsnotify and polls every interval, comparing the file's SHA-256. On
// a change the rollout is loaded again:
//
//   - valid with another ID (candidate revision, stage, slice or guard):
//     swapped in, logged "rollout loaded", obs.RolloutInForce;
//   - no rollout any more (the file removed, blank, or without keys) while
//     one was in force: swapped out, logged "rollout removed",
//     obs.RolloutInForce(nil);
//   - valid with the same ID: nothing swapped, logged "rollout unchanged";
//   - invalid: the last good rollout stays, every problem is logged at
//     ERROR ("rollout reload rejected; keeping the last good one").
//
// Every attempt is recorded in store last (GetInstallation.rollout.last_reload).
func Watch(ctx context.Context, store *Store, opts Options, interval time.Duration, logger *slog.Logger, obs Observer) {
	if logger == nil {
		logger = slog.Default()
	}
	if obs == nil {
		obs = Observers(nil)
	}
	if interval <= 0 {
		interval = installationloader.DefaultReloadInterval
	}
	if opts.Path == "" {
		<-ctx.Done()
		return
	}
	w := &watcher{store: store, opts: opts, logger: logger, obs: obs}
	w.last = fileDigest(opts.Path)
	w.reload(true) // an edit between the caller's Load and now

	var events <-chan fsnotify.Event
	var errs <-chan error
	if fw, err := fsnotify.NewWatcher(); err != nil {
		logger.Warn("rollout watch: file events unavailable; polling only", "error", err.Error())
	} else {
		defer fw.Close()
		dir := filepath.Dir(opts.Path)
		if err := fw.Add(dir); err != nil {
			logger.Warn("rollout watch: cannot watch the document's directory; polling only", "directory", dir, "error", err.Error())
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
			logger.Warn("rollout watch: file event error", "error", err.Error())
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
	obs    Observer
	last   string // digest of the document last loaded
}

// fileDigest is the SHA-256 of the file's content, "absent" when it does
// not exist, or the read error.
func fileDigest(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "absent"
		}
		return "error: " + err.Error()
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// check reloads when the document's content changed since the last load.
func (w *watcher) check() {
	d := fileDigest(w.opts.Path)
	if d == w.last {
		return
	}
	w.last = d
	w.reload(false)
}

// reload loads the rollout again and swaps it in when valid and new.
// quiet suppresses the report of an unchanged rollout (the start-up check).
func (w *watcher) reload(quiet bool) {
	old := w.store.Current()
	r, err := Load(w.opts)
	at := time.Now()
	if err != nil {
		var p *rollout.Problems
		if !errors.As(err, &p) {
			p = &rollout.Problems{DocumentPath: w.opts.Path, Lines: []string{err.Error()}}
		}
		w.logger.Error("rollout reload rejected; keeping the last good one",
			"candidate_revision", candidateRevision(old), "attempted_revision", p.AttemptedRevision,
			"document", w.opts.Path, "problem_count", len(p.Lines), "problems", p.Lines)
		w.store.RecordReload(installationloader.ReloadStatus{OK: false, At: at, Problems: p.Lines, Items: p.Items, AttemptedRevision: p.AttemptedRevision})
		return
	}
	switch {
	case r == nil && old == nil, r != nil && old != nil && r.ID == old.ID:
		if !quiet {
			w.logger.Info("rollout unchanged", "candidate_revision", candidateRevision(old), "document", w.opts.Path)
			w.store.RecordReload(installationloader.ReloadStatus{OK: true, At: at, AttemptedRevision: candidateRevision(old)})
		}
		return
	case r == nil:
		w.store.Swap(nil)
		w.obs.RolloutInForce(nil)
		w.logger.Info("rollout removed", "candidate_revision", old.Candidate.Revision, "document", w.opts.Path)
	default:
		w.store.Swap(r)
		w.obs.RolloutInForce(r)
		LogLoaded(w.logger, r, candidateRevision(old))
	}
	w.store.RecordReload(installationloader.ReloadStatus{OK: true, At: at, AttemptedRevision: candidateRevision(r)})
}

// LogLoaded writes the "rollout loaded" line of a rollout put in force.
func LogLoaded(logger *slog.Logger, r *rollout.Rollout, oldCandidate string) {
	clusters := "*"
	if r.Slice.Clusters != nil {
		clusters = ""
		for i, c := range r.Slice.Clusters {
			if i > 0 {
				clusters += ","
			}
			clusters += c
		}
	}
	logger.Info("rollout loaded", "candidate_revision", r.Candidate.Revision, "old_candidate_revision", oldCandidate,
		"stage", r.Stage.String(), "percent", r.Slice.Percent(), "namespaces", r.Slice.Namespaces, "clusters", clusters,
		"guard", r.Guard.String(), "document", r.DocumentPath)
}

func candidateRevision(r *rollout.Rollout) string {
	if r == nil {
		return ""
	}
	return r.Candidate.Revision
}
