package rolloutloader

import (
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/internal/stablefile"
)

// settle is how long Watch waits after a file-system event before reading
// the document, so a burst of events (a ConfigMap's ..data swap) is one
// check, and how long a new version must stay the same before it is taken
// as whole (internal/stablefile).
const settle = stablefile.DefaultSettle

// Watch keeps store's rollout in step with the document of opts until ctx
// is done, as installationloader.Watch keeps the installation (spec 10 §2:
// hot-reloaded like the installation). It watches the document's directory
// with fsnotify and polls every interval, comparing the file's SHA-256; a
// new version is loaded once it has settled (internal/stablefile, issue 38:
// a document rewritten in place is never put in force as its prefix):
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
// When Watch starts it takes an edit made since the caller's Load.
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
	w.last = w.inForce()
	var settleC <-chan time.Time
	if w.check() { // an edit between the caller's Load and now
		settleC = time.After(settle)
	}

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
			logger.Warn("rollout watch: file event error", "error", err.Error())
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
	obs    Observer
	// last is what the document was at the last load: its digest,
	// "absent" or its read error ("" before the first).
	last string
	// pending debounces a new version: it is loaded only once settled.
	pending stablefile.Debounce
}

// inForce is the state of the document when it is the one in force: its
// digest when what it holds now builds the rollout the store holds (or none
// when it is absent and none is held), "" otherwise.
func (w *watcher) inForce() string {
	s, err := stablefile.Read(w.opts.Path, 0)
	cur := w.store.Current()
	switch {
	case errors.Is(err, fs.ErrNotExist) && cur == nil:
		return "absent"
	case err != nil:
		return ""
	}
	r, err := build(w.opts, s.Data, nil)
	if err != nil || rolloutID(r) != rolloutID(cur) {
		return ""
	}
	return hex.EncodeToString(s.Digest[:])
}

// check loads the document when it changed since the last load and the
// change has settled; a deleted or unreadable document counts at once.
// again says that a new version is waiting to settle, or was read while it
// changed: check once more after the settle interval.
func (w *watcher) check() (again bool) {
	s, err := stablefile.Read(w.opts.Path, 0)
	var state string
	switch {
	case errors.Is(err, stablefile.ErrUnstable):
		w.pending.Reset()
		return true
	case errors.Is(err, fs.ErrNotExist):
		state = "absent"
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
	r, berr := build(w.opts, s.Data, err)
	w.reload(r, berr)
	return false
}

// reload swaps in the rollout the document built (r, or its problems) when
// valid and new.
func (w *watcher) reload(r *rollout.Rollout, err error) {
	old := w.store.Current()
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
		w.logger.Info("rollout unchanged", "candidate_revision", candidateRevision(old), "document", w.opts.Path)
		w.store.RecordReload(installationloader.ReloadStatus{OK: true, At: at, AttemptedRevision: candidateRevision(old)})
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
		clusters = strings.Join(r.Slice.Clusters, ",")
	}
	logger.Info("rollout loaded", "candidate_revision", r.Candidate.Revision, "old_candidate_revision", oldCandidate,
		"stage", r.Stage.String(), "percent", r.Slice.Percent(), "namespaces", r.Slice.Namespaces, "clusters", clusters,
		"guard", r.Guard.String(), "document", r.DocumentPath)
}

func rolloutID(r *rollout.Rollout) string {
	if r == nil {
		return ""
	}
	return r.ID
}

func candidateRevision(r *rollout.Rollout) string {
	if r == nil {
		return ""
	}
	return r.Candidate.Revision
}
