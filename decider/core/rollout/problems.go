package rollout

import (
	"fmt"
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
)

// Problems is an invalid rollout document: every problem found (spec 02 §8
// rules: all at once), the candidate installation's under "candidate: ".
// Its Error text is the report, as the installation's.
type Problems struct {
	// DocumentPath is the rollout document ("" when none).
	DocumentPath string
	// Items are the problems, typed, in report order: Path is the
	// rollout document's path of the value (candidate.storeDefaults.consul,
	// canary.percent).
	Items []installation.Problem
	// Lines are the problems as the report prints them, one message each.
	Lines []string
	// AttemptedRevision is the revision of the candidate's settings that
	// did parse ("" when the candidate was not read).
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
	return fmt.Sprintf("dynamic-config: the rollout is invalid (%d %s; document %s):", len(p.Lines), noun, doc)
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
