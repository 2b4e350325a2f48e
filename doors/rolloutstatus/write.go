package rolloutstatus

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
)

// Outputs are rollout status's -o values.
var Outputs = []string{"text", "json"}

// Write writes the report as output says: "json", one JSON value; "text",
// the rollout, a table of the deciders, the counts, the differing
// workloads and the verdict with its reasons.
func (r *Report) Write(w io.Writer, output string) error {
	if output == "json" {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	r.writeText(w)
	return nil
}

func (r *Report) writeText(w io.Writer) {
	if r.CandidateRevision != "" {
		fmt.Fprintf(w, "candidate: %s\nstage: %s\nslice: %s\nguard: newRefusals %s\n", r.CandidateRevision, r.Stage, r.Slice.text(), r.Guard)
		since := "-"
		if r.Since != nil {
			since = r.Since.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "compared: %d decisions since %s (%s)\n", r.Compared, since, countsText(r.Counts))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DECIDER\tROLE\tCLUSTER\tCANDIDATE\tSTAGE\tCOMPARED\tDIFFERING\tNEWLY-REFUSED\tHALTED")
	for _, d := range r.Deciders {
		if d.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\tunreachable: %s\n", d.Name, d.Role, dash(d.Cluster), d.Error)
			continue
		}
		stage := dash(d.Stage)
		if d.Inert {
			stage = "inert"
		}
		halted := "no"
		if d.Halted != nil {
			halted = "by " + d.Halted.Workload
		}
		newly := d.Counts[rollout.NewlyRefused.String()]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\n", d.Name, d.Role, dash(d.Cluster), dash(short(d.CandidateRevision)), stage,
			d.Compared, d.Compared-d.Counts[rollout.Same.String()], newly, halted)
	}
	tw.Flush()
	if len(r.Differing) > 0 {
		fmt.Fprintf(w, "\ndiffering workloads (%d):\n", len(r.Differing))
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKLOAD\tRESULT\tDECISIONS\tLAST SEEN\tPATHS")
		for _, x := range r.Differing {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", x.Key, x.Result, x.Count, x.LastSeen.UTC().Format(time.RFC3339), strings.Join(x.Paths, " "))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nverdict: %s\n", r.Verdict)
	for _, reason := range r.Reasons {
		fmt.Fprintln(w, "  - "+reason)
	}
}

// text is the slice in a line: "5 % of workloads; namespaces team-a; every cluster".
func (s *Slice) text() string {
	parts := []string{strconv.FormatFloat(s.Percent, 'f', -1, 64) + " % of workloads"}
	if len(s.Namespaces) > 0 {
		parts = append(parts, "namespaces "+strings.Join(s.Namespaces, ", "))
	}
	if len(s.Clusters) > 0 {
		parts = append(parts, "clusters "+strings.Join(s.Clusters, ", "))
	} else {
		parts = append(parts, "every cluster")
	}
	return strings.Join(parts, "; ")
}

// countsText is the counts by result, in the order of spec 10 §3.
func countsText(c map[string]uint64) string {
	parts := make([]string, 0, len(rollout.Results))
	for _, res := range rollout.Results {
		parts = append(parts, fmt.Sprintf("%s %d", res, c[res.String()]))
	}
	return strings.Join(parts, ", ")
}

// short is a revision's sha256: and first 12 hex digits.
func short(rev string) string {
	if len(rev) > len("sha256:")+12 {
		return rev[:len("sha256:")+12]
	}
	return rev
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
