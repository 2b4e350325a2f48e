package whatif

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/doors/engine"
)

// Output formats of diff (-o).
const (
	OutputText = "text"
	OutputJSON = "json"
)

// Outputs are diff's -o values.
var Outputs = []string{OutputText, OutputJSON}

// Report is what diff found.
type Report struct {
	ActiveRevision    string `json:"activeRevision"`
	CandidateRevision string `json:"candidateRevision"`
	// Workloads is how many workloads were compared (each key once).
	Workloads int `json:"workloads"`
	// Counts are the workloads by result (spec 10 §3's names).
	Counts map[string]int `json:"counts"`
	// Differing are the workloads whose result is not same, in input order.
	Differing []*Workload `json:"differing"`
}

// Workload is one differing workload.
type Workload struct {
	Key    string   `json:"workload"`
	Result string   `json:"result"`
	Paths  []string `json:"paths"`
	// Where names the first manifest (file, document, owner) it came from.
	Where string `json:"where"`
	// Values are each path's old and new value (--show-values).
	Values []Value `json:"values,omitempty"`
}

// Value is one differing path's value under each installation ("" = absent).
type Value struct {
	Path      string `json:"path"`
	Active    string `json:"active"`
	Candidate string `json:"candidate"`
}

// Differs reports whether any workload's result is not same (exit 1).
func (r *Report) Differs() bool { return len(r.Differing) > 0 }

// add records one pod's comparison under its workload key: each workload is
// counted and listed once; a second pod of a listed workload (the same
// Deployment in two files, a Pod it owns) adds the paths it differs on.
func (r *Report) add(seen map[string]*Workload, key, where string, cmp rollout.Comparison, admitted [2]*engine.Admitted, showValues bool) {
	w, ok := seen[key]
	if !ok {
		r.Workloads++
		w = &Workload{Key: key, Result: cmp.Result.String(), Where: where}
		seen[key] = w
		r.Counts[w.Result]++
		if cmp.Result.Differs() {
			r.Differing = append(r.Differing, w)
		}
	}
	if w.Result == rollout.Same.String() {
		return // a workload is listed by its first pod's result
	}
	for _, p := range cmp.Paths {
		if slices.Contains(w.Paths, p) {
			continue
		}
		w.Paths = append(w.Paths, p)
		if showValues {
			w.Values = append(w.Values, Value{Path: p, Active: valueAt(admitted[0], p), Candidate: valueAt(admitted[1], p)})
		}
	}
}

// Write writes the report: text (a table of the differing workloads and a
// summary line) or json (one JSON value).
func (r *Report) Write(w io.Writer, output string) error {
	if output == OutputJSON {
		if r.Differing == nil {
			r.Differing = []*Workload{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if r.Differing != nil {
		fmt.Fprintln(tw, "WORKLOAD\tRESULT\tPATHS")
	}
	for _, d := range r.Differing {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", d.Key, d.Result, strings.Join(d.Paths, " "))
		for _, v := range d.Values {
			fmt.Fprintf(tw, "\t\t  %s: %s -> %s\n", v.Path, orAbsent(v.Active), orAbsent(v.Candidate))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var counts []string
	for _, res := range rollout.Results {
		if n := r.Counts[res.String()]; n > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", n, res))
		}
	}
	_, err := fmt.Fprintf(w, "%d workload(s) compared (%s), installation %s -> candidate %s\n",
		r.Workloads, strings.Join(counts, ", "), short(r.ActiveRevision), short(r.CandidateRevision))
	return err
}

func orAbsent(v string) string {
	if v == "" {
		return "(absent)"
	}
	return v
}

// short is a revision's first 12 hex digits, as the pods' mark writes it.
func short(revision string) string {
	hex := strings.TrimPrefix(revision, "sha256:")
	if len(hex) > 12 {
		return hex[:12]
	}
	return hex
}
