package explain

import (
	"fmt"
	"io"

	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// Injected is what explain says of a running pod, one already injected
// (spec 10 §8): the revision stamp it carries and the stamp of the
// installation that would decide it now.
type Injected struct {
	// Revision is the pod's dynamic-config.rs/revision, "" when it carries
	// none (injected before the stamp existed).
	Revision string `json:"revision"`
	// Active is the stamp of the revision deciding now (the active
	// installation's, or under a canary the candidate's).
	Active string `json:"active"`
	// Differs reports whether the two differ.
	Differs bool `json:"differs"`
}

// injectedOf is the Injected of a pod the decider skipped as already
// injected; nil for any other decision.
func injectedOf(f *deciderv1.PodFacts, d *deciderv1.Decision) *Injected {
	if d.GetOutcome() != deciderv1.Outcome_OUTCOME_SKIP || d.GetSkipReason() != deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED {
		return nil
	}
	in := &Injected{Revision: f.GetAnnotations()[annotation.RevisionStampKey], Active: annotation.Stamp(d.GetInstallationRevision())}
	in.Differs = in.Revision != in.Active
	return in
}

// writeInjected prints the injected pod's line.
func writeInjected(w io.Writer, in *Injected) {
	var verdict string
	switch {
	case !in.Differs:
		verdict = "the same: its agent is what the active installation injects"
	case in.Revision == "":
		verdict = "the pod carries no " + annotation.RevisionStampKey + " (injected before revision stamps)"
	default:
		verdict = "another revision: the pod keeps its agent until it is recreated " +
			"(dynamic-config audit-pods --outdated lists the workloads whose agent would change)"
	}
	revision := in.Revision
	if revision == "" {
		revision = "none"
	}
	fmt.Fprintf(w, "injected under revision %s; the active installation's is %s — %s\n", revision, in.Active, verdict)
}
