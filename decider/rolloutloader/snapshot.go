package rolloutloader

import (
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Snapshot is the wire form of r in a leader's InstallationSnapshot (spec
// 10 §6); nil for no rollout.
func Snapshot(r *rollout.Rollout) *deciderv1.RolloutSnapshot {
	if r == nil {
		return nil
	}
	t := r.Transport()
	p := &deciderv1.RolloutSnapshot{
		RolloutId:          t.ID,
		CandidateRevision:  t.Candidate.Revision,
		CandidateCanonical: string(t.Candidate.Canonical),
		PercentBuckets:     uint32(t.Buckets), //nolint:gosec // 0–10 000 by construction
		Namespaces:         append([]string(nil), t.Namespaces...),
		Clusters:           append([]string(nil), t.Clusters...),
		EveryCluster:       t.Clusters == nil,
		Stage:              deciderv1.RolloutStage_ROLLOUT_STAGE_SHADOW,
		Guard:              deciderv1.RolloutGuard_ROLLOUT_GUARD_FALLBACK,
	}
	if t.Stage == rollout.StageCanary {
		p.Stage = deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY
	}
	if t.Guard == rollout.GuardServe {
		p.Guard = deciderv1.RolloutGuard_ROLLOUT_GUARD_SERVE
	}
	return p
}

// FromSnapshot rebuilds the rollout of a leader's snapshot with
// rollout.FromTransport (the candidate validated by the installation's code,
// its revision and the rollout's id checked); nil for no rollout. An
// unknown stage or guard is a problem of the rollout, reported with the
// others.
func FromSnapshot(p *deciderv1.RolloutSnapshot) (*rollout.Rollout, error) {
	if p == nil {
		return nil, nil
	}
	t := rollout.Transport{
		Candidate:  installation.Transport{Revision: p.GetCandidateRevision(), Canonical: []byte(p.GetCandidateCanonical())},
		Buckets:    int(p.GetPercentBuckets()),
		Namespaces: p.GetNamespaces(),
		ID:         p.GetRolloutId(),
		Stage:      -1,
		Guard:      -1,
	}
	if !p.GetEveryCluster() {
		t.Clusters = append([]string{}, p.GetClusters()...)
	} else if len(p.GetClusters()) > 0 {
		// Both: the rollout rebuilt names the list, so its id is not the
		// one sent, and the snapshot is refused.
		t.Clusters = p.GetClusters()
	}
	switch p.GetStage() {
	case deciderv1.RolloutStage_ROLLOUT_STAGE_SHADOW:
		t.Stage = rollout.StageShadow
	case deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY:
		t.Stage = rollout.StageCanary
	}
	switch p.GetGuard() {
	case deciderv1.RolloutGuard_ROLLOUT_GUARD_FALLBACK:
		t.Guard = rollout.GuardFallback
	case deciderv1.RolloutGuard_ROLLOUT_GUARD_SERVE:
		t.Guard = rollout.GuardServe
	}
	return rollout.FromTransport(t)
}
