package rolloutstatus

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/dynamic-config-admission/dynamic-config/doors/fleetstatus"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const candidate = "sha256:c0ffee0000000000000000000000000000000000000000000000000000000000"

// state is a rollout state of the candidate, loaded ago, with same and
// changed decisions compared.
func state(ago time.Duration, same, changed uint64) *deciderv1.RolloutState {
	return &deciderv1.RolloutState{
		CandidateRevision: candidate, RolloutId: "sha256:r1", Stage: deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY,
		Guard:    deciderv1.RolloutGuard_ROLLOUT_GUARD_FALLBACK,
		Slice:    &deciderv1.RolloutSlice{Percent: 5, Namespaces: []string{"team-a"}, EveryCluster: true},
		LoadedAt: timestamppb.New(now.Add(-ago)),
		Counts:   &deciderv1.RolloutCounts{Same: same, Changed: changed},
	}
}

func replica(addr string, st *deciderv1.RolloutState, followers ...*deciderv1.FollowerState) fleetstatus.Replica {
	return fleetstatus.NewReplica(addr, &deciderv1.GetInstallationResponse{Revision: "sha256:a", Rollout: st, Followers: followers}, nil)
}

func follower(id string, connected bool, st *deciderv1.RolloutState) *deciderv1.FollowerState {
	return &deciderv1.FollowerState{FollowerId: id, Cluster: "west", Connected: connected, LastSeenAt: timestamppb.New(now), Rollout: st}
}

func with(st *deciderv1.RolloutState, edit func(*deciderv1.RolloutState)) *deciderv1.RolloutState {
	edit(st)
	return st
}

func TestTheVerdictIsReadyOnlyWhenEveryDeciderAgreesLongAndOftenEnoughWithoutANewRefusal(t *testing.T) {
	tests := []struct {
		name     string
		replicas []fleetstatus.Replica
		verdict  string
		reasons  []string
	}{
		{"two replicas and a follower on one candidate, 150 decisions over two hours",
			[]fleetstatus.Replica{replica("10.0.0.1:9090", state(2*time.Hour, 60, 10)), replica("10.0.0.2:9090", state(time.Hour, 50, 0),
				follower("west-0", true, state(90*time.Minute, 30, 0)))}, Ready, nil},
		{"no rollout anywhere", []fleetstatus.Replica{replica("10.0.0.1:9090", nil)}, NotReady, []string{"no decider holds a rollout"}},
		{"too few decisions", []fleetstatus.Replica{replica("10.0.0.1:9090", state(2*time.Hour, 60, 10))}, NotReady,
			[]string{"70 decisions compared; --min-decisions is 100"}},
		{"too short a soak", []fleetstatus.Replica{replica("10.0.0.1:9090", state(20*time.Minute, 200, 0))}, NotReady,
			[]string{"compared for 20m0s; --soak is 1h0m0s"}},
		{"a decision newly refused names its workload", []fleetstatus.Replica{replica("10.0.0.1:9090", with(state(2*time.Hour, 200, 0), func(s *deciderv1.RolloutState) {
			s.Counts.NewlyRefused = 1
			s.Differing = []*deciderv1.RolloutWorkload{{Workload: "east/shop/Deployment/web", Result: deciderv1.RolloutResult_ROLLOUT_RESULT_NEWLY_REFUSED,
				Paths: []string{"refusals[source.deny]"}, FirstSeen: timestamppb.New(now), LastSeen: timestamppb.New(now), Count: 1}}
		}))}, NotReady, []string{"1 decisions were newly refused by the candidate: east/shop/Deployment/web"}},
		{"an unreachable replica", []fleetstatus.Replica{replica("10.0.0.1:9090", state(2*time.Hour, 200, 0)),
			fleetstatus.NewReplica("10.0.0.2:9090", nil, errors.New("connection refused"))}, NotReady,
			[]string{"10.0.0.2:9090 did not answer: connection refused"}},
		{"replicas on two rollouts", []fleetstatus.Replica{replica("10.0.0.1:9090", state(2*time.Hour, 200, 0)),
			replica("10.0.0.2:9090", with(state(2*time.Hour, 200, 0), func(s *deciderv1.RolloutState) { s.CandidateRevision, s.RolloutId = "sha256:other", "sha256:r2" })),
			replica("10.0.0.3:9090", state(2*time.Hour, 200, 0))}, NotReady,
			[]string{"10.0.0.2:9090 holds another rollout (candidate sha256:other)"}},
		{"a replica without the rollout", []fleetstatus.Replica{replica("10.0.0.1:9090", state(2*time.Hour, 200, 0)), replica("10.0.0.2:9090", nil)}, NotReady,
			[]string{"10.0.0.2:9090 holds no rollout"}},
		{"a rejected rollout document", []fleetstatus.Replica{replica("10.0.0.1:9090", with(state(2*time.Hour, 200, 0), func(s *deciderv1.RolloutState) {
			s.LastReload = &deciderv1.ReloadStatus{Ok: false, Problems: []string{"a", "b"}}
		}))}, NotReady, []string{"10.0.0.1:9090 rejected its rollout document (2 problems)"}},
		{"a disconnected follower", []fleetstatus.Replica{replica("10.0.0.1:9090", state(2*time.Hour, 200, 0), follower("west-0", false, state(2*time.Hour, 5, 0)))}, NotReady,
			[]string{"west-0 (follower) is not connected to its leader"}},
		{"an inert candidate", []fleetstatus.Replica{replica("10.0.0.1:9090", with(state(2*time.Hour, 0, 0), func(s *deciderv1.RolloutState) { s.Inert = true }))}, NotReady,
			[]string{"the candidate is the installation in force (inert)"}},
		{"a follower that halted halts the verdict, with the other reasons after", []fleetstatus.Replica{replica("10.0.0.1:9090", state(2*time.Hour, 50, 0),
			follower("west-0", true, with(state(2*time.Hour, 1, 0), func(s *deciderv1.RolloutState) {
				s.Counts.NewlyRefused = 1
				s.Halted = &deciderv1.RolloutHalt{Workload: "west/shop/Pod/first", At: timestamppb.New(now), Refusals: []string{"refusals[source.deny]"}}
			})))}, Halted,
			[]string{"west-0 halted the rollout at 2026-05-01T12:00:00Z: the candidate newly refused west/shop/Pod/first (refusals[source.deny])", "--min-decisions is 100"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Build(tt.replicas, DefaultCriteria, now)
			if r.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s; reasons %q", r.Verdict, tt.verdict, r.Reasons)
			}
			all := strings.Join(r.Reasons, "\n")
			for _, want := range tt.reasons {
				if !strings.Contains(all, want) {
					t.Errorf("reasons %q lack %q", r.Reasons, want)
				}
			}
			if tt.verdict == Ready && len(r.Reasons) > 0 {
				t.Errorf("ready with reasons %q", r.Reasons)
			}
		})
	}
}

func TestTheFleetsCountsAndDifferingWorkloadsAreSummedOverItsDeciders(t *testing.T) {
	earlier, later := now.Add(-time.Hour), now.Add(-time.Minute)
	a := with(state(3*time.Hour, 100, 3), func(s *deciderv1.RolloutState) {
		s.Differing = []*deciderv1.RolloutWorkload{{Workload: "east/shop/Deployment/web", Result: deciderv1.RolloutResult_ROLLOUT_RESULT_CHANGED,
			Paths: []string{"containers[dynamic-config-agent].image"}, FirstSeen: timestamppb.New(earlier), LastSeen: timestamppb.New(earlier), Count: 2}}
	})
	b := with(state(2*time.Hour, 50, 1), func(s *deciderv1.RolloutState) {
		s.Differing = []*deciderv1.RolloutWorkload{{Workload: "east/shop/Deployment/web", Result: deciderv1.RolloutResult_ROLLOUT_RESULT_CHANGED,
			Paths: []string{"containers[dynamic-config-agent].args[--watch]"}, FirstSeen: timestamppb.New(later), LastSeen: timestamppb.New(later), Count: 1}}
	})
	r := Build([]fleetstatus.Replica{replica("10.0.0.1:9090", a), replica("10.0.0.2:9090", b)}, DefaultCriteria, now)
	if r.Compared != 154 || r.Counts["changed"] != 4 || r.Counts["same"] != 150 || !r.Since.Equal(now.Add(-3*time.Hour)) {
		t.Errorf("compared %d, counts %v, since %v", r.Compared, r.Counts, r.Since)
	}
	if len(r.Differing) != 1 || r.Differing[0].Count != 3 || r.Differing[0].Paths[0] != "containers[dynamic-config-agent].args[--watch]" ||
		!r.Differing[0].FirstSeen.Equal(earlier) {
		t.Errorf("differing %+v; want one workload, 3 decisions, the latest paths, first seen the earliest", r.Differing)
	}

	t.Run("the text names the rollout, every decider, the workloads and the verdict", func(t *testing.T) {
		var out bytes.Buffer
		if err := r.Write(&out, "text"); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"candidate: " + candidate, "stage: canary", "slice: 5 % of workloads; namespaces team-a; every cluster",
			"compared: 154 decisions since", "same 150, changed 4, newly-refused 0", "10.0.0.2:9090  replica", "east/shop/Deployment/web  changed  3",
			"verdict: ready"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("text lacks %q:\n%s", want, out.String())
			}
		}
	})
	t.Run("-o json is one JSON value", func(t *testing.T) {
		var out bytes.Buffer
		if err := r.Write(&out, "json"); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(&out)
		var v map[string]any
		if err := dec.Decode(&v); err != nil || dec.More() {
			t.Fatalf("%v, more %v", err, dec.More())
		}
		if v["verdict"] != Ready || v["compared"] != float64(154) || len(v["deciders"].([]any)) != 2 {
			t.Errorf("%v", v)
		}
	})
}
