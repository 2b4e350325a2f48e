package fleetstatus

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// WriteRollouts prints the rollout of every replica and every follower
// (spec 10 §6): the candidate revision, the stage, the slice, the decisions
// compared, how many differed and were newly refused, and the halt. Nothing
// is printed when none has a rollout or a rollout document that failed to
// load. It is a report: the verdict on a rollout is `rollout status`'s.
func WriteRollouts(w io.Writer, replicas []Replica, now time.Time) {
	type row struct {
		decider string
		state   *deciderv1.RolloutState
	}
	var rows []row
	for _, r := range replicas {
		if r.err == nil && r.resp.GetRollout() != nil {
			rows = append(rows, row{r.addr, r.resp.GetRollout()})
		}
	}
	byID, keys := followersByID(replicas)
	for _, k := range keys {
		if s := byID[k].state; s.GetRollout() != nil {
			rows = append(rows, row{s.GetFollowerId() + " (follower, " + s.GetCluster() + ")", s.GetRollout()})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLLOUT ON\tCANDIDATE\tSTAGE\tSLICE\tCOMPARED\tDIFFERING\tNEWLY-REFUSED\tHALTED")
	for _, r := range rows {
		s := r.state
		if s.GetCandidateRevision() == "" {
			fmt.Fprintf(tw, "%s\t-\t%s\t-\t-\t-\t-\t-\n", r.decider, documentText(s.GetLastReload()))
			continue
		}
		c := s.GetCounts()
		differing := c.GetChanged() + c.GetNewlyRefused() + c.GetNoLongerRefused() + c.GetNewlyInjected() + c.GetNoLongerInjected()
		halted := "no"
		if h := s.GetHalted(); h != nil {
			halted = fmt.Sprintf("yes, %s ago by %s", ageText(now.Sub(h.GetAt().AsTime())), h.GetWorkload())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", r.decider, shortRevision(s.GetCandidateRevision()), stageText(s),
			sliceText(s.GetSlice()), c.GetSame()+differing, differing, c.GetNewlyRefused(), halted)
	}
	tw.Flush()
}

// stageText is the stage a decider acts in: inert, shadow, canary, or
// canary halted (which acts as shadow).
func stageText(s *deciderv1.RolloutState) string {
	switch {
	case s.GetInert():
		return "inert"
	case s.GetStage() != deciderv1.RolloutStage_ROLLOUT_STAGE_CANARY:
		return "shadow"
	case s.GetHalted() != nil:
		return "canary (halted: shadow)"
	}
	return "canary"
}

// sliceText is a canary slice in one cell: "5%, ns team-a,team-b, on east".
func sliceText(sl *deciderv1.RolloutSlice) string {
	parts := []string{strconv.FormatFloat(sl.GetPercent(), 'f', -1, 64) + "%"}
	if ns := sl.GetNamespaces(); len(ns) > 0 {
		parts = append(parts, "ns "+strings.Join(ns, ","))
	}
	if !sl.GetEveryCluster() {
		parts = append(parts, "on "+strings.Join(sl.GetClusters(), ","))
	}
	return strings.Join(parts, ", ")
}

// shortRevision is sha256: and the first 12 hex digits.
func shortRevision(rev string) string {
	if len(rev) > len("sha256:")+12 {
		return rev[:len("sha256:")+12]
	}
	return rev
}

// documentText is the stage of a decider with no rollout in force: none,
// and why when its rollout document was rejected.
func documentText(rs *deciderv1.ReloadStatus) string {
	if rs == nil || rs.GetOk() {
		return "none"
	}
	return fmt.Sprintf("none (the rollout document was rejected: %d problems)", len(rs.GetProblems()))
}
