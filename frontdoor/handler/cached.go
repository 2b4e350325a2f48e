package handler

// Answers from the decision cache (issue 43): the decision the decider gave
// to the same question under the announced revisions, given again as a new
// decision — its own id, marked with where it came from — so that the audit
// log and the admission line stay true.

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/decisioncache"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/patch"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
	"github.com/dynamic-config-admission/dynamic-config/internal/annotation"
)

// cached is how the admission's decision came from the cache; the zero
// value: it came from the decider.
type cached struct {
	// source is decisioncache.SourceCache or SourceStaleCache ("" = the decider).
	source string
	// id is this answer's own decision id; origin is the decider's decision it repeats.
	id, origin string
	// age and code are a stale answer's: how long ago the decider last
	// confirmed its revisions, and why the decider was not asked (the
	// failed call's gRPC code).
	age  time.Duration
	code string
	// memo is the entry's slot for the patch built from its plan (nil: the
	// decision came from the decider).
	memo *decisioncache.Memo
}

// staleIfError reports whether a failed call lets a stale entry answer:
// the decider could not be reached in time (UNAVAILABLE, which a connection
// error is, or DEADLINE_EXCEEDED). A decider that refused this front door
// (PERMISSION_DENIED, UNAUTHENTICATED) always denies (issue 23), and any
// other code is a broken request or a bug, never an outage.
func staleIfError(code codes.Code) bool {
	return code == codes.Unavailable || code == codes.DeadlineExceeded
}

// fromCache makes the admission's decision the cache's answer a: a new
// decision id, the source and the origin in the record.
func (a *admission) fromCache(ans decisioncache.Answer, code codes.Code) {
	a.cached = cached{source: ans.Source, id: uuid.NewString(), origin: ans.Decision.GetDecisionId(), age: ans.Age, memo: ans.Memo}
	if ans.Source == decisioncache.SourceStaleCache {
		a.cached.code = code.String()
	}
}

// markCached rewrites a verdict built from a remembered decision d as this
// admission's own: the decision id is the answer's, decision-source and
// origin-decision-id say where it came from, and a stale answer leads its
// warnings with why it was given. The rest — the patch, the outcome, the
// other audit annotations and warnings — is the remembered decision's.
func (a *admission) markCached(v *verdict, d *deciderv1.Decision) {
	c := &a.cached
	annotations := make(map[string]string, len(d.GetAuditAnnotations())+2)
	for k, val := range d.GetAuditAnnotations() {
		annotations[k] = val
	}
	annotations[annotation.AuditDecisionID] = c.id
	annotations[annotation.AuditDecisionSource] = c.source
	annotations[annotation.AuditOriginDecisionID] = c.origin
	v.resp.AuditAnnotations = annotations
	a.rec.decisionID = c.id
	a.rec.extra = append(a.rec.extra,
		slog.String("decision_source", c.source),
		slog.String("origin_decision_id", c.origin))
	if c.source != decisioncache.SourceStaleCache {
		return
	}
	v.resp.Warnings = append([]string{a.staleWarning()}, v.resp.Warnings...)
	a.rec.level = slog.LevelWarn
	a.rec.extra = append(a.rec.extra,
		slog.String("grpc_code", c.code),
		slog.Float64("stale_age_s", c.age.Round(time.Millisecond).Seconds()))
}

// staleWarning says that a stale answer was given, and why.
func (a *admission) staleWarning() string {
	return fmt.Sprintf("dynamic-config.rs: the decider could not be reached (%s); answered with its decision %s for this same %s, "+
		"last confirmed current %s ago (this front door's --decision-cache-stale-if-error=%s)",
		a.cached.code, a.cached.origin, a.rec.kind, a.cached.age.Round(time.Second), a.h.staleIfError)
}

// patchMemo is the patch built from a remembered decision's plan for one
// pod shape, kept beside the decision in the cache: Build is a function of
// the plan and the shape alone, so the next pod of the template with the
// same shape gets the same patch without building and encoding it again.
type patchMemo struct {
	target *patch.Pod
	patch  *builtPatch
}

// patchFor is plan's patch for target: the cache entry's memo when the
// decision came from the cache and the shape is the memo's, else built (and
// kept as the entry's memo).
func (a *admission) patchFor(plan *deciderv1.MutationPlan, target *patch.Pod) (*builtPatch, error) {
	if m, ok := a.cached.memo.Load().(*patchMemo); ok && m.target.Equal(target) {
		return m.patch, nil
	}
	p, err := patch.Build(plan, target)
	if err != nil {
		return nil, err
	}
	built := newBuiltPatch(p)
	a.cached.memo.Store(&patchMemo{target: target, patch: built})
	return built, nil
}
