package follower

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/installationloader"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutloader"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// defaultReportInterval is how often a changed rollout report goes to the
// leader at most: its heartbeat's period.
const defaultReportInterval = 10 * time.Second

// knownRollout is the id of the rollout the follower serves ("" none): the
// first message names it beside known_revision.
func (f *Follower) knownRollout() string {
	if r := f.cfg.Rollouts.Current(); r != nil {
		return r.ID
	}
	return ""
}

// rolloutOf rebuilds a snapshot's rollout (nil: none, or the follower
// ignores rollouts), validated like the leader's (spec 10 §6).
func (f *Follower) rolloutOf(msg *deciderv1.InstallationSnapshot) (*rollout.Rollout, error) {
	if f.cfg.Rollouts == nil || msg.GetRollout() == nil {
		return nil, nil
	}
	return rolloutloader.FromSnapshot(msg.GetRollout())
}

// activateRollout puts r in force (nil: none) beside its installation.
func (f *Follower) activateRollout(r *rollout.Rollout) {
	if f.cfg.Rollouts == nil {
		return
	}
	old := f.cfg.Rollouts.Swap(r)
	f.cfg.Rollouts.RecordReload(installationloader.ReloadStatus{OK: true, At: f.cfg.Now(), AttemptedRevision: candidateRevision(r)})
	if rolloutID(old) == rolloutID(r) {
		return
	}
	f.cfg.RolloutState.RolloutInForce(r)
	if r == nil {
		f.cfg.Logger.Info("rollout removed", "candidate_revision", candidateRevision(old))
		return
	}
	rolloutloader.LogLoaded(f.cfg.Logger, r, candidateRevision(old))
}

// refuseRollout records the problems of a snapshot's rollout that was
// refused for GetInstallation.rollout.last_reload (the whole snapshot was
// refused; the last good rollout stays with the last good installation).
func (f *Follower) refuseRollout(msg *deciderv1.InstallationSnapshot, err error) {
	if f.cfg.Rollouts == nil || err == nil {
		return
	}
	st := installationloader.ReloadStatus{OK: false, At: f.cfg.Now(), Problems: []string{err.Error()}, AttemptedRevision: msg.GetRollout().GetCandidateRevision()}
	var p *rollout.Problems
	if errors.As(err, &p) {
		st.Problems, st.Items = p.Lines, p.Items
	}
	f.cfg.Rollouts.RecordReload(st)
}

// refusal is a refused snapshot: its installation's error, its rollout's,
// or both (spec 10 §6: the two are validated and refused as a whole).
type refusal struct{ installation, rollout error }

func (r *refusal) Error() string {
	var parts []string
	for _, err := range r.Unwrap() {
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, "\n")
}

// Unwrap is the errors refused.
func (r *refusal) Unwrap() []error {
	var out []error
	for _, err := range []error{r.installation, r.rollout} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// nackDetail is the NACK's detail of each part refused, never a value of
// the snapshot: the installation's as nackDetail writes it, the rollout's
// the same way under "rollout: ".
func (r *refusal) nackDetail() string {
	var parts []string
	if r.installation != nil {
		parts = append(parts, nackDetail(r.installation))
	}
	if r.rollout != nil {
		parts = append(parts, "rollout: "+rolloutNackDetail(r.rollout))
	}
	return strings.Join(parts, "; ")
}

// rolloutNackDetail is a refused rollout's problems with their values
// withheld (withheld), or the revision or id that did not match.
func rolloutNackDetail(err error) string {
	p, ok := errors.AsType[*rollout.Problems](err)
	switch {
	case !ok && (errors.Is(err, installation.ErrRevisionMismatch) || errors.Is(err, rollout.ErrIDMismatch)):
		return err.Error()
	case !ok:
		return "the rollout could not be rebuilt (the follower's log has why)"
	}
	parts := make([]string, len(p.Items))
	for i, it := range p.Items {
		parts[i] = withheld(it)
	}
	return strings.Join(parts, "; ")
}

// problemLines are a refusal's problems in full, one a line, for this
// decider's log and GetInstallation.last_reload: the installation's report
// lines, then the rollout's under "rollout: ".
func problemLines(err error) []string {
	r, ok := errors.AsType[*refusal](err)
	if !ok {
		r = &refusal{installation: err}
	}
	var lines []string
	if r.installation != nil {
		if p, ok := errors.AsType[*installation.Problems](r.installation); ok {
			lines = append(lines, p.Lines...)
		} else {
			lines = append(lines, r.installation.Error())
		}
	}
	if r.rollout != nil {
		if p, ok := errors.AsType[*rollout.Problems](r.rollout); ok {
			for _, l := range p.Lines {
				lines = append(lines, "rollout: "+l)
			}
		} else {
			lines = append(lines, r.rollout.Error())
		}
	}
	return lines
}

// savedRollout is the snapshot's rollout as the state file keeps it.
func (f *Follower) savedRollout(msg *deciderv1.InstallationSnapshot) []byte {
	if f.cfg.Rollouts == nil || msg.GetRollout() == nil {
		return nil
	}
	data, err := protojson.Marshal(msg.GetRollout())
	if err != nil {
		return nil
	}
	return data
}

// startRollout serves the state file's rollout beside its installation; a
// rollout that does not load is left out (logged): the installation serves.
func (f *Follower) startRollout(st *state) {
	if f.cfg.Rollouts == nil || len(st.Rollout) == 0 {
		return
	}
	var p deciderv1.RolloutSnapshot
	if err := protojson.Unmarshal(st.Rollout, &p); err != nil {
		f.cfg.Logger.Error("saved rollout unreadable: serving the saved installation without it", "state_dir", f.cfg.StateDir, "error", err.Error())
		return
	}
	r, err := rolloutloader.FromSnapshot(&p)
	if err != nil {
		f.cfg.Logger.Error("saved rollout refused: serving the saved installation without it", "state_dir", f.cfg.StateDir, "error", err.Error())
		return
	}
	f.activateRollout(r)
}

// reportRollouts sends the follower's rollout report (spec 10 §6) on
// stream when it changed: at most every ReportInterval, and at once when
// the rollout state's token changes (a halt). It returns the stream's send,
// which every other message of the session goes through (a stream's Send is
// not safe for concurrent use). The reporting ends with ctx.
func (f *Follower) reportRollouts(ctx context.Context, stream deciderv1.InstallationSyncService_SyncInstallationClient) func(*deciderv1.SyncRequest) error {
	var mu sync.Mutex
	send := func(m *deciderv1.SyncRequest) error {
		mu.Lock()
		defer mu.Unlock()
		return stream.Send(m)
	}
	st := f.cfg.RolloutState
	if st == nil {
		return send
	}
	go func() {
		t := time.NewTicker(f.cfg.ReportInterval)
		defer t.Stop()
		var last *deciderv1.RolloutState
		for {
			changes := st.Changes()
			rep := st.Proto(false)
			if rep == nil {
				rep = &deciderv1.RolloutState{}
			}
			rep.LastReload = nil
			if (last != nil || rep.GetCandidateRevision() != "") && !proto.Equal(rep, last) {
				if send(&deciderv1.SyncRequest{RolloutReport: rep}) != nil {
					return
				}
				last = rep
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-changes:
			}
		}
	}()
	return send
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
