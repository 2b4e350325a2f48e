package service

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/decision"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/installation"
	"github.com/dynamic-config-admission/dynamic-config/decider/core/rollout"
	"github.com/dynamic-config-admission/dynamic-config/internal/logline"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
)

// Log field values: the enums spelled as the metrics spell them.
var (
	purposeNames = map[decision.Purpose]string{decision.PurposeMutate: "mutate", decision.PurposeValidate: "validate"}
	outcomeNames = map[decision.Outcome]string{
		decision.OutcomeSkip: "skip", decision.OutcomeInject: "inject",
		decision.OutcomeRefuse: "refuse", decision.OutcomeAllow: "allow",
	}
	skipReasonNames = map[decision.SkipReason]string{
		decision.SkipNoAnnotations: "no_annotations", decision.SkipNotCreate: "not_create",
		decision.SkipAlreadyInjected: "already_injected", decision.SkipNotRequested: "not_requested",
		decision.SkipNoPolicy: "no_policy", decision.SkipNotTargeted: "not_targeted",
	}
)

// rolloutLine is what the decision line says of a rollout: on when the
// decision was made under one.
type rolloutLine struct {
	on    bool
	route rollout.Route
	cmp   rollout.Comparison
}

// decisionLineMaxAttrs is the most attributes a decision line has: 18
// always, classes_revision, decider_role and follower_id, rollout and
// rollout_result.
const decisionLineMaxAttrs = 23

// logDecision writes the one "decision" line of spec 07 §4, with the call's
// trace and span ids when tracing is on ("" when off). It never logs a
// value or a message: keys, check ids, slugs, store names and counts only.
func logDecision(ctx context.Context, logger *slog.Logger, f *decision.Facts, d *decision.Decision, elapsed time.Duration, follower Follower, traceID, spanID string, under rolloutLine) {
	if !logger.Enabled(ctx, slog.LevelInfo) {
		return
	}
	var reason, check, key, render string
	if len(d.Refusals) > 0 {
		r := &d.Refusals[0]
		reason, check, key, render = r.Slug, r.Check, redact.URL(r.Key), r.Render
	}
	stores := make([]string, 0, len(d.Renders))
	for i := range d.Renders {
		// only the nine store names: on a refusal the source may be the
		// pod's unvalidated value, and values are never logged
		if s := d.Renders[i].Source; slices.Contains(installation.Stores, s) {
			stores = append(stores, s)
		}
	}
	name := f.Name
	if name == "" {
		name = f.GenerateName
	}
	// room for every optional field, a constant so that the slice stays on
	// the stack: an append past the capacity would copy the line's
	// attributes to the heap once more per decision
	attrs := make([]slog.Attr, 0, decisionLineMaxAttrs)
	attrs = append(attrs,
		slog.String("decision_id", d.DecisionID),
		slog.String("purpose", purposeNames[f.Purpose]),
		slog.String("namespace", f.Namespace),
		slog.String("name", name),
		slog.String("kind", f.ResourceKind.String()),
		slog.String("outcome", outcomeNames[d.Outcome]),
		slog.String("skip_reason", skipReasonNames[d.SkipReason]),
		slog.String("reason", reason),
		slog.String("check", check),
		slog.String("key", key),
		slog.String("render", render),
		slog.Any("stores", stores),
		slog.String("revision", d.InstallationRevision),
		slog.String("cluster", d.Cluster),
		slog.String("caller", d.Caller),
		slog.Int64("duration_us", elapsed.Microseconds()),
		// the call's trace (tracing on; "" off): the admission line's trace_id
		slog.String("trace_id", traceID),
		slog.String("span_id", spanID),
	)
	if d.ClassesRevision != "" { // the decision consulted classes (spec 08 §2)
		attrs = append(attrs, slog.String("classes_revision", d.ClassesRevision))
	}
	if follower != nil { // spec 09 §3
		attrs = append(attrs, slog.String("decider_role", RoleFollower), slog.String("follower_id", follower.ID()))
	}
	if under.on { // spec 10 §3: decided under a rollout — who answered, and how the candidate compared
		attrs = append(attrs, slog.String("rollout", under.route.String()), slog.String("rollout_result", under.cmp.Result.String()))
	}
	logline.Write(ctx, logger, slog.LevelInfo, "decision", attrs...)
}
