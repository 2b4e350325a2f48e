// Package rolloutstatus is `dynamic-config rollout status`'s work (spec 10
// §5): the rollout every decider replica and every follower reports
// (doors/fleetstatus finds them), summed — the candidate, the stage and
// slice, the decisions compared by result, the workloads that differ — and
// the verdict: ready (at least MinDecisions compared for at least Soak,
// nothing newly refused, nothing halted), not-ready with every reason, or
// halted. Build decides; WriteText and WriteJSON print.
package rolloutstatus

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/decider/rolloutstate"
	"github.com/dynamic-config-admission/dynamic-config/doors/fleetstatus"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// Verdicts.
const (
	Ready    = "ready"
	NotReady = "not-ready"
	Halted   = "halted"
)

// Criteria are what ready takes (--min-decisions, --soak).
type Criteria struct {
	// MinDecisions is how many decisions, over every decider, must have
	// been compared.
	MinDecisions uint64
	// Soak is how long the candidate must have been compared: since the
	// first decider of the fleet took it.
	Soak time.Duration
}

// DefaultCriteria are spec 10 §5's: 100 decisions, one hour.
var DefaultCriteria = Criteria{MinDecisions: 100, Soak: time.Hour}

// Report is the rollout across the fleet and its verdict.
type Report struct {
	Verdict string `json:"verdict"`
	// Reasons say why the verdict is not ready (every one), or who halted.
	Reasons []string `json:"reasons,omitempty"`
	// CandidateRevision, RolloutID, Stage, Slice and Guard are the rollout
	// the deciders hold (the most held, when they differ).
	CandidateRevision string `json:"candidateRevision,omitempty"`
	RolloutID         string `json:"rolloutId,omitempty"`
	Stage             string `json:"stage,omitempty"`
	Slice             *Slice `json:"slice,omitempty"`
	Guard             string `json:"guard,omitempty"`
	// Since is when the first decider took the candidate; Compared is how
	// many decisions every decider compared, Counts by result (the names of
	// spec 10 §3).
	Since    *time.Time        `json:"since,omitempty"`
	Compared uint64            `json:"compared"`
	Counts   map[string]uint64 `json:"counts"`
	Deciders []Decider         `json:"deciders"`
	// Differing are the workloads that differ, over every replica (a
	// follower reports counts, not workloads), the latest seen first.
	Differing []Workload `json:"differing"`
}

// Slice is the canary slice.
type Slice struct {
	Percent    float64  `json:"percent"`
	Namespaces []string `json:"namespaces,omitempty"`
	// Clusters are the clusters that canary; none: every cluster.
	Clusters []string `json:"clusters,omitempty"`
}

// Decider is one replica's or follower's rollout.
type Decider struct {
	Name string `json:"decider"`
	// Role is replica (of the target) or follower (as a replica reports it).
	Role    string `json:"role"`
	Cluster string `json:"cluster,omitempty"`
	// Error is why a replica did not answer.
	Error             string            `json:"error,omitempty"`
	CandidateRevision string            `json:"candidateRevision,omitempty"`
	RolloutID         string            `json:"rolloutId,omitempty"`
	Stage             string            `json:"stage,omitempty"`
	Inert             bool              `json:"inert,omitempty"`
	LoadedAt          *time.Time        `json:"loadedAt,omitempty"`
	Compared          uint64            `json:"compared"`
	Counts            map[string]uint64 `json:"counts,omitempty"`
	Halted            *Halt             `json:"halted,omitempty"`
	// Rejected is the count of problems of a rollout document this decider
	// refused last (0: none).
	Rejected int `json:"rejectedProblems,omitempty"`
	// Connected is false for a follower without a stream to its leader.
	Connected bool `json:"connected"`
}

// Halt is a decider's halt.
type Halt struct {
	Workload string    `json:"workload"`
	At       time.Time `json:"at"`
	Refusals []string  `json:"refusals,omitempty"`
}

// Workload is one workload that differs under the candidate.
type Workload struct {
	Key       string    `json:"workload"`
	Result    string    `json:"result"`
	Paths     []string  `json:"paths"`
	Count     uint64    `json:"count"`
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
}

// Build reads the replicas' answers (and the followers they report) into
// the report and decides the verdict at now.
func Build(replicas []fleetstatus.Replica, c Criteria, now time.Time) *Report {
	rep := &Report{Counts: counts(nil), Deciders: []Decider{}, Differing: []Workload{}}
	held := map[string]int{} // rollout id → deciders holding it
	states := map[string]*deciderv1.RolloutState{}
	differing := map[string]Workload{}
	add := func(d Decider, s *deciderv1.RolloutState) {
		d.Connected = d.Connected || d.Role == "replica"
		if s != nil {
			d.CandidateRevision, d.RolloutID, d.Stage, d.Inert = s.GetCandidateRevision(), s.GetRolloutId(), rolloutstate.StageName(s.GetStage()), s.GetInert()
			if d.CandidateRevision == "" {
				d.Stage = ""
			}
			if s.GetLoadedAt() != nil {
				at := s.GetLoadedAt().AsTime()
				d.LoadedAt = &at
			}
			d.Counts = counts(s.GetCounts())
			for _, n := range d.Counts {
				d.Compared += n
			}
			if h := s.GetHalted(); h != nil {
				d.Halted = &Halt{Workload: h.GetWorkload(), At: h.GetAt().AsTime(), Refusals: h.GetRefusals()}
			}
			if lr := s.GetLastReload(); lr != nil && !lr.GetOk() {
				d.Rejected = max(len(lr.GetProblems()), 1)
			}
			if d.RolloutID != "" {
				held[d.RolloutID]++
				states[d.RolloutID] = s
			}
			for _, w := range s.GetDiffering() {
				merge(differing, w)
			}
		}
		rep.Deciders = append(rep.Deciders, d)
	}
	for _, r := range replicas {
		d := Decider{Name: r.Addr(), Role: "replica"}
		if r.Err() != nil {
			d.Error = oneLine(r.Err().Error())
			add(d, nil)
			continue
		}
		d.Cluster = r.Response().GetFollower().GetCluster() // set when the target is a follower
		add(d, r.Response().GetRollout())
	}
	for _, f := range fleetstatus.Followers(replicas) {
		add(Decider{Name: f.GetFollowerId(), Role: "follower", Cluster: f.GetCluster(), Connected: f.GetConnected()}, f.GetRollout())
	}
	rep.summarize(held, states, differing)
	rep.decide(c, now)
	return rep
}

// counts are a RolloutCounts by result name.
func counts(c *deciderv1.RolloutCounts) map[string]uint64 {
	return map[string]uint64{
		rollout.Same.String(): c.GetSame(), rollout.Changed.String(): c.GetChanged(),
		rollout.NewlyRefused.String(): c.GetNewlyRefused(), rollout.NoLongerRefused.String(): c.GetNoLongerRefused(),
		rollout.NewlyInjected.String(): c.GetNewlyInjected(), rollout.NoLongerInjected.String(): c.GetNoLongerInjected(),
	}
}

// merge adds a replica's differing workload to the fleet's: the latest
// seen result and paths, the counts summed, the first and last seen widened.
func merge(into map[string]Workload, w *deciderv1.RolloutWorkload) {
	next := Workload{Key: w.GetWorkload(), Result: rolloutstate.ResultName(w.GetResult()), Paths: w.GetPaths(), Count: w.GetCount(),
		FirstSeen: w.GetFirstSeen().AsTime(), LastSeen: w.GetLastSeen().AsTime()}
	if cur, ok := into[next.Key]; ok {
		if cur.LastSeen.After(next.LastSeen) {
			next.Result, next.Paths, next.LastSeen = cur.Result, cur.Paths, cur.LastSeen
		}
		next.Count += cur.Count
		if cur.FirstSeen.Before(next.FirstSeen) {
			next.FirstSeen = cur.FirstSeen
		}
	}
	into[next.Key] = next
}

// summarize fills the fleet's rollout: the one most deciders hold, its
// counts over the deciders holding it, the first time one took it, and the
// differing workloads, latest first.
func (r *Report) summarize(held map[string]int, states map[string]*deciderv1.RolloutState, differing map[string]Workload) {
	var id string
	for k, n := range held {
		if n > held[id] || (n == held[id] && k < id) {
			id = k
		}
	}
	if s := states[id]; s != nil {
		r.CandidateRevision, r.RolloutID = s.GetCandidateRevision(), id
		r.Stage, r.Guard = rolloutstate.StageName(s.GetStage()), rolloutstate.GuardName(s.GetGuard())
		sl := s.GetSlice()
		r.Slice = &Slice{Percent: sl.GetPercent(), Namespaces: sl.GetNamespaces(), Clusters: sl.GetClusters()}
	}
	for _, d := range r.Deciders {
		if d.CandidateRevision == "" || d.CandidateRevision != r.CandidateRevision {
			continue
		}
		for k, n := range d.Counts {
			r.Counts[k] += n
		}
		r.Compared += d.Compared
		if d.LoadedAt != nil && (r.Since == nil || d.LoadedAt.Before(*r.Since)) {
			r.Since = d.LoadedAt
		}
	}
	for _, w := range differing {
		r.Differing = append(r.Differing, w)
	}
	sort.Slice(r.Differing, func(i, j int) bool {
		a, b := r.Differing[i], r.Differing[j]
		if !a.LastSeen.Equal(b.LastSeen) {
			return a.LastSeen.After(b.LastSeen)
		}
		return a.Key < b.Key
	})
}

// decide sets the verdict and its reasons.
func (r *Report) decide(c Criteria, now time.Time) {
	var halts, reasons []string
	candidates := map[string]bool{}
	for _, d := range r.Deciders {
		switch {
		case d.Error != "":
			reasons = append(reasons, fmt.Sprintf("%s did not answer: %s", d.Name, d.Error))
			continue
		case d.Halted != nil:
			halts = append(halts, fmt.Sprintf("%s halted the rollout at %s: the candidate newly refused %s (%s)", d.Name,
				d.Halted.At.UTC().Format(time.RFC3339), d.Halted.Workload, strings.Join(d.Halted.Refusals, ", ")))
		}
		if d.Rejected > 0 {
			reasons = append(reasons, fmt.Sprintf("%s rejected its rollout document (%d problems): it acts on its last good rollout, or none", d.Name, d.Rejected))
		}
		if d.Role == "follower" && !d.Connected {
			reasons = append(reasons, d.Name+" (follower) is not connected to its leader: its counts may be old")
		}
		candidates[d.CandidateRevision] = true
		if d.CandidateRevision != r.CandidateRevision || d.RolloutID != r.RolloutID {
			what := "holds no rollout"
			if d.CandidateRevision != "" {
				what = "holds another rollout (candidate " + d.CandidateRevision + ")"
			}
			reasons = append(reasons, d.Name+" "+what)
		}
	}
	switch {
	case r.CandidateRevision == "":
		reasons = append(reasons, "no decider holds a rollout")
	case slices.ContainsFunc(r.Deciders, func(d Decider) bool { return d.Inert && d.CandidateRevision == r.CandidateRevision }):
		reasons = append(reasons, "the candidate is the installation in force (inert): there is nothing to promote")
	default:
		if n := r.Counts[rollout.NewlyRefused.String()]; n > 0 {
			reasons = append(reasons, fmt.Sprintf("%d decisions were newly refused by the candidate%s", n, r.newlyRefused()))
		}
		if r.Compared < c.MinDecisions {
			reasons = append(reasons, fmt.Sprintf("%d decisions compared; --min-decisions is %d", r.Compared, c.MinDecisions))
		}
		if soaked := r.soaked(now); soaked < c.Soak {
			reasons = append(reasons, fmt.Sprintf("compared for %s; --soak is %s", soaked.Round(time.Second), c.Soak))
		}
	}
	switch {
	case len(halts) > 0:
		r.Verdict, r.Reasons = Halted, append(halts, reasons...)
	case len(reasons) > 0:
		r.Verdict, r.Reasons = NotReady, reasons
	default:
		r.Verdict = Ready
	}
}

// soaked is how long the fleet has compared the candidate.
func (r *Report) soaked(now time.Time) time.Duration {
	if r.Since == nil {
		return 0
	}
	return max(now.Sub(*r.Since), 0)
}

// newlyRefused names the workloads the candidate newly refuses (": a, b").
func (r *Report) newlyRefused() string {
	var keys []string
	for _, w := range r.Differing {
		if w.Result == rollout.NewlyRefused.String() {
			keys = append(keys, w.Key)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	return ": " + strings.Join(keys, ", ")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
