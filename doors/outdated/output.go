package outdated

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Write prints r as output ("table" or "json"): the table has one row per
// listed workload — its key, pod count, revisions and differing paths —
// under a line naming the active revision; the JSON is r itself.
func Write(w io.Writer, output string, r *Report) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	fmt.Fprintf(w, "active revision %s: %d of %d workloads with pods on another revision would get another agent part\n", r.Active, len(r.Workloads), r.Checked)
	if len(r.Workloads) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tPODS\tREVISIONS\tDIFFERS")
	for _, wl := range r.Workloads {
		differs := strings.Join(wl.Paths, " ")
		if wl.Refused != "" {
			differs = "refused now: " + wl.Refused
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", wl.Key(), wl.Pods, strings.Join(wl.Revisions, ","), differs)
	}
	return tw.Flush()
}

// CheckOutput is the problem with an -o value ("" = none).
func CheckOutput(output string) string {
	if output == "table" || output == "json" {
		return ""
	}
	return fmt.Sprintf("-o is %q: want table or json", output)
}
