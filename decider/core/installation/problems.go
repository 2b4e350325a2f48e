package installation

import (
	"fmt"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// Problem is one problem of an invalid installation, typed after the
// field.ErrorList pattern: where it is (the setting and the document path of
// the value), what was written, what was expected, and the line the report
// prints (spec 02 §7.3), which is today's text to the byte.
type Problem struct {
	// Setting is the setting's environment variable (DYNAMIC_CONFIG_…); ""
	// for a problem of the document's shape, a cross check or the
	// environment scan.
	Setting string
	// Path is the document path of the value (a top-level key, or deeper:
	// storeDefaults.vault.endpoint); "" when the value came from the
	// environment or the problem names no one place.
	Path string
	// HiddenBy is the variable that hides this document value ("" when the
	// value is in force).
	HiddenBy string
	// Value is the value as written and Expected what it should be, when
	// the problem is about one value ("" otherwise).
	Value, Expected string
	// Text is the problem as the report prints it, after any "(hidden by
	// VAR) ".
	Text string
}

// String is the report line.
func (p Problem) String() string {
	if p.HiddenBy != "" {
		return "(hidden by " + p.HiddenBy + ") " + p.Text
	}
	return p.Text
}

// valueProblem is "<where>: <subject> is <value>: <expected>" (a value, quoted
// and redacted, against what it should be), typed.
func valueProblem(where, subject, value, expected string) Problem {
	head := subject
	if where != "" {
		head = where + ": " + subject
	}
	return Problem{Value: value, Expected: expected, Text: head + " is " + redact.Quote(value) + ": " + expected}
}

// textProblems types problems that carry their text only.
func textProblems(lines []string) []Problem {
	out := make([]Problem, len(lines))
	for i, l := range lines {
		out[i] = Problem{Text: l}
	}
	return out
}

// Problems is an invalid installation: every problem found, in the order of
// spec 02 §7.3. Its Error text is the report printed to stderr.
type Problems struct {
	// DocumentPath is the document that was read ("" when none).
	DocumentPath string
	// Items are the problems, typed, in report order.
	Items []Problem
	// Lines are the problems as the report prints them (Items rendered),
	// one message each: GetInstallation.last_reload.problems.
	Lines []string
	// AttemptedRevision is the revision of the settings that did parse, for
	// GetInstallation.last_reload (a decision: the load failed, so this names
	// the attempt, not an installation that could be put in force).
	AttemptedRevision string
}

func newProblems(documentPath string, items []Problem, attempted string) *Problems {
	lines := make([]string, len(items))
	for i, p := range items {
		lines[i] = p.String()
	}
	return &Problems{DocumentPath: documentPath, Items: items, Lines: lines, AttemptedRevision: attempted}
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
	shape    []Problem   // document shape, in document order
	settings [][]Problem // per setting, table order
	hidden   [][]Problem // per setting, hidden document values (after the variable's own)
	cross    []Problem   // §6.2
	scan     []Problem   // environment scan, sorted by variable
	policy   []Problem   // envPolicy, the variable's then the hidden document's
	policyH  []Problem
}

func newReport() *report {
	return &report{settings: make([][]Problem, len(settings)), hidden: make([][]Problem, len(settings))}
}

// sink receives the problems of one setting read from one door.
type sink func(Problem)

// text reports a problem that carries its text only.
func (s sink) text(msg string) { s(Problem{Text: msg}) }

// at reports p at the document path of c (a value of the document) when p
// names no path itself.
func (s sink) at(c ctx, p Problem) {
	if p.Path == "" {
		p.Path = c.doc
	}
	s(p)
}

// atText reports a problem that carries its text only at c's document path.
func (s sink) atText(c ctx, msg string) { s.at(c, Problem{Text: msg}) }

// forSetting returns the sink for setting row i read from the document at
// path ("" from the environment); hiddenBy names the variable hiding a
// document value ("" when the value is in force). It names the setting,
// and the path where the problem names none deeper.
func (r *report) forSetting(i int, hiddenBy, path string) sink {
	s := settings[i]
	typed := func(p Problem) Problem {
		p.Setting, p.HiddenBy = s.Variable, hiddenBy
		if p.Path == "" {
			p.Path = path
		}
		return p
	}
	if s.Kind == kindEnvPolicy {
		if hiddenBy != "" {
			return func(p Problem) { r.policyH = append(r.policyH, typed(p)) }
		}
		return func(p Problem) { r.policy = append(r.policy, typed(p)) }
	}
	if hiddenBy != "" {
		return func(p Problem) { r.hidden[i] = append(r.hidden[i], typed(p)) }
	}
	return func(p Problem) { r.settings[i] = append(r.settings[i], typed(p)) }
}

// problems are every problem, in the contract's order.
func (r *report) problems() []Problem {
	var out []Problem
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
