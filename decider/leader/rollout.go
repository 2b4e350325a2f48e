package leader

import (
	"log/slog"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/textcut"
)

// RolloutInForce implements rolloutloader.Observer: a new rollout (or
// none) wakes every stream, which sends a snapshot carrying it (spec 10 §6).
func (l *Leader) RolloutInForce(*rollout.Rollout) { l.Notify() }

// rolloutID is the id of r, "" for no rollout.
func rolloutID(r *rollout.Rollout) string {
	if r == nil {
		return ""
	}
	return r.ID
}

// maxReportText bounds each text of a follower's rollout report the leader
// keeps (revisions and ids are 71 characters; workload keys at most ~1 KiB).
const maxReportText = 1024

// rolloutReport keeps a follower's rollout report (spec 10 §6): its counts
// and halt, for GetInstallation.followers and fleet-status. A report without
// a candidate revision says the follower has no rollout. The leader keeps
// no differing workloads of a follower: those are in the follower's own
// GetInstallation.
func (l *Leader) rolloutReport(log *slog.Logger, f *follower, rep *deciderv1.RolloutState) {
	kept := &deciderv1.RolloutState{
		CandidateRevision: textcut.Bytes(rep.GetCandidateRevision(), maxReportText),
		RolloutId:         textcut.Bytes(rep.GetRolloutId(), maxReportText),
		Stage:             rep.GetStage(),
		Slice:             rep.GetSlice(),
		Guard:             rep.GetGuard(),
		LoadedAt:          rep.GetLoadedAt(),
		Counts:            rep.GetCounts(),
		Inert:             rep.GetInert(),
	}
	if h := rep.GetHalted(); h != nil {
		kept.Halted = &deciderv1.RolloutHalt{Workload: textcut.Bytes(h.GetWorkload(), maxReportText), At: h.GetAt()}
		for i, r := range h.GetRefusals() {
			if i == 8 {
				break
			}
			kept.Halted.Refusals = append(kept.Halted.Refusals, textcut.Bytes(r, maxReportText))
		}
	}
	if kept.GetCandidateRevision() == "" {
		kept = nil
	}
	l.mu.Lock()
	newlyHalted := kept.GetHalted() != nil && (f.rollout.GetHalted() == nil || f.rollout.GetCandidateRevision() != kept.GetCandidateRevision())
	f.rollout = kept
	l.mu.Unlock()
	if newlyHalted {
		log.Warn("follower halted the rollout", "candidate_revision", kept.GetCandidateRevision(), "workload", kept.GetHalted().GetWorkload())
	}
}
