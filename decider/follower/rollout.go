package follower

import (
	"context"
	"errors"
	"fmt"
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
	r, err := rolloutloader.FromSnapshot(msg.GetRollout())
	if err != nil {
		return nil, fmt.Errorf("rollout: %w", err)
	}
	return r, nil
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

// problemCount is how many problems a refusal names: every line of an
// installation's or a rollout's report.
func problemCount(err error) int {
	n := 0
	var ip *installation.Problems
	if errors.As(err, &ip) {
		n += len(ip.Lines)
	}
	var rp *rollout.Problems
	if errors.As(err, &rp) {
		n += len(rp.Lines)
	}
	return max(n, 1)
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
