package installation

import (
	"fmt"
	"strings"
)

// Problems is an invalid installation: every problem found, in the order of
// spec 02 §7.3. Its Error text is the report printed to stderr.
type Problems struct {
	// DocumentPath is the document that was read ("" when none).
	DocumentPath string
	// Lines are the problems, one message each.
	Lines []string
	// AttemptedRevision is the revision of the settings that did parse, for
	// GetInstallation.last_reload (a decision: the load failed, so this names
	// the attempt, not an installation that could be put in force).
	AttemptedRevision string
}

// Header is the first line of the report.
func (p *Problems) Header() string {
	doc := p.DocumentPath
	if doc == "" {
		doc = "none"
	}
	noun := "problems"
	if len(p.Lines) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("dynamic-config: the installation is invalid (%d %s; document %s):", len(p.Lines), noun, doc)
}

// Error renders the whole report: the header and one indented line per problem.
func (p *Problems) Error() string {
	var b strings.Builder
	b.WriteString(p.Header())
	for _, l := range p.Lines {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	return b.String()
}

// report collects problems into the sections of spec 02 §7.3 so that they can
// be found in any order and printed in the contract's order.
type report struct {
	shape    []string   // document shape, in document order
	settings [][]string // per setting, table order
	hidden   [][]string // per setting, hidden document values (after the variable's own)
	cross    []string   // §6.2
	scan     []string   // environment scan, sorted by variable
	policy   []string   // envPolicy, the variable's then the hidden document's
	policyH  []string
}

func newReport() *report {
	return &report{settings: make([][]string, len(settings)), hidden: make([][]string, len(settings))}
}

// sink receives problem lines.
type sink func(string)

// forSetting returns the sink for setting row i; hiddenBy names the variable
// hiding a document value ("" when the value is in force).
func (r *report) forSetting(i int, hiddenBy string) sink {
	if settings[i].Kind == kindEnvPolicy {
		if hiddenBy != "" {
			return func(s string) { r.policyH = append(r.policyH, "(hidden by "+hiddenBy+") "+s) }
		}
		return func(s string) { r.policy = append(r.policy, s) }
	}
	if hiddenBy != "" {
		return func(s string) { r.hidden[i] = append(r.hidden[i], "(hidden by "+hiddenBy+") "+s) }
	}
	return func(s string) { r.settings[i] = append(r.settings[i], s) }
}

func (r *report) lines() []string {
	var out []string
	out = append(out, r.shape...)
	for i := range settings {
		out = append(out, r.settings[i]...)
		out = append(out, r.hidden[i]...)
	}
	out = append(out, r.cross...)
	out = append(out, r.scan...)
	out = append(out, r.policy...)
	out = append(out, r.policyH...)
	return out
}
