package rolloutstate

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Proto is GetInstallation.rollout (and a follower's FollowerState.rollout)
// without last_reload, which the caller fills from Status (decider/service,
// with the installation's reload conversion): nil when there is nothing to
// report. withDiffering false leaves the differing workloads out (a
// follower's report to its leader).
func (s *State) Proto(withDiffering bool) *deciderv1.RolloutState {
	st, ok := s.Status()
	if !ok {
		return nil
	}
	r := st.Rollout
	if r == nil {
		return &deciderv1.RolloutState{}
	}
	out := RolloutToProto(r, st.Inert)
	rep := st.Report
	if !rep.LoadedAt.IsZero() {
		out.LoadedAt = timestamppb.New(rep.LoadedAt)
	}
	c := rep.Counts
	out.Counts = &deciderv1.RolloutCounts{
		Same: c[rollout.Same], Changed: c[rollout.Changed],
		NewlyRefused: c[rollout.NewlyRefused], NoLongerRefused: c[rollout.NoLongerRefused],
		NewlyInjected: c[rollout.NewlyInjected], NoLongerInjected: c[rollout.NoLongerInjected],
	}
	if withDiffering {
		for _, w := range rep.Differing {
			out.Differing = append(out.Differing, &deciderv1.RolloutWorkload{
				Workload: w.Key, Result: ResultToProto(w.Result), Paths: w.Paths,
				FirstSeen: timestamppb.New(w.FirstSeen), LastSeen: timestamppb.New(w.LastSeen), Count: w.Count,
			})
		}
	}
	if h := rep.Halt; h != nil {
		out.Halted = &deciderv1.RolloutHalt{Workload: h.Workload, At: timestamppb.New(h.At), Refusals: h.Paths}
	}
	return out
}

// StageToProto maps a stage to the wire.
func StageToProto(s rollout.Stage) deciderv1.RolloutStage {
	if s == rollout.StageCanary {
		return deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY
	}
	return deciderv1.RolloutStage_ROLLOUT_STAGE_SHADOW
}

// GuardToProto maps a guard to the wire.
func GuardToProto(g rollout.Guard) deciderv1.RolloutGuard {
	if g == rollout.GuardServe {
		return deciderv1.RolloutGuard_ROLLOUT_GUARD_SERVE
	}
	return deciderv1.RolloutGuard_ROLLOUT_GUARD_FALLBACK
}

// ResultToProto maps a comparison result to the wire.
func ResultToProto(r rollout.Result) deciderv1.RolloutResult {
	return deciderv1.RolloutResult(int32(r) + 1)
}

// The names of the wire's enums as the rollout document and spec 10 §3
// write them ("" for an unspecified value): shadow, canary; fallback,
// serve; same, changed, newly-refused, ….

// StageName names a stage of the wire.
func StageName(s deciderv1.RolloutStage) string {
	if s == deciderv1.RolloutStage_ROLLOUT_STAGE_UNSPECIFIED {
		return ""
	}
	return rollout.Stage(s - 1).String()
}

// GuardName names a guard of the wire.
func GuardName(g deciderv1.RolloutGuard) string {
	if g == deciderv1.RolloutGuard_ROLLOUT_GUARD_UNSPECIFIED {
		return ""
	}
	return rollout.Guard(g - 1).String()
}

// ResultName names a comparison result of the wire.
func ResultName(r deciderv1.RolloutResult) string { return rollout.Result(r - 1).String() }

// RolloutToProto is the rollout r as RolloutState has it, before any
// comparison (no counts, no halt): its candidate revision and id, stage,
// guard, slice and document; inert when its candidate is the active
// installation. check-installation --rollout reports a rollout so.
func RolloutToProto(r *rollout.Rollout, inert bool) *deciderv1.RolloutState {
	return &deciderv1.RolloutState{
		CandidateRevision: r.Candidate.Revision,
		RolloutId:         r.ID,
		Stage:             StageToProto(r.Stage),
		Guard:             GuardToProto(r.Guard),
		Slice: &deciderv1.RolloutSlice{
			Percent:      float64(r.Slice.Buckets) / 100,
			Namespaces:   append([]string(nil), r.Slice.Namespaces...),
			Clusters:     append([]string(nil), r.Slice.Clusters...),
			EveryCluster: r.Slice.Clusters == nil,
		},
		DocumentPath: r.DocumentPath,
		Inert:        inert,
	}
}
