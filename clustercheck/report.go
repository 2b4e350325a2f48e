package clustercheck

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Report is check-cluster's answer: every finding and the verdict.
type Report struct {
	OK       bool      `json:"ok"`
	Findings []Finding `json:"findings"`
}

// NewReport is the report of findings: OK unless one failed.
func NewReport(findings []Finding) Report {
	r := Report{OK: true, Findings: findings}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, f := range findings {
		if f.Status == Fail {
			r.OK = false
		}
	}
	return r
}

// WriteText writes the findings as a table and the verdict as a last line.
func (r Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tCHECK\tOBJECT\tDETAIL")
	fails := 0
	for _, f := range r.Findings {
		if f.Status == Fail {
			fails++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Status, f.Check, f.Object, f.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var err error
	if r.OK {
		_, err = fmt.Fprintf(w, "check-cluster: ok (%d checks)\n", len(r.Findings))
	} else {
		_, err = fmt.Fprintf(w, "check-cluster: %d of %d checks failed\n", fails, len(r.Findings))
	}
	return err
}

// WriteJSON writes the report as one indented JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ProofFinding is the install proof's result as a finding.
func ProofFinding(p *Probe, res ProofResult, err error) Finding {
	f := Finding{Check: "install proof", Object: fmt.Sprintf("pod %s/%s-* (server-side dry run)", p.Namespace, p.NamePrefix)}
	if err != nil {
		f.Status, f.Detail = Fail, err.Error()
		return f
	}
	f.Status, f.Detail = OK, fmt.Sprintf("the answer carries the agent (attempt %d, %s)", res.Attempts, res.Elapsed)
	return f
}

// Write writes the report as text or, with output json, as JSON.
func (r Report) Write(w io.Writer, output string) error {
	if output == "json" {
		return r.WriteJSON(w)
	}
	return r.WriteText(w)
}
