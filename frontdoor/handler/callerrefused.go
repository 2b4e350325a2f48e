package handler

import (
	"fmt"
	"log/slog"
	"strconv"

	"google.golang.org/grpc/codes"

	"github.com/dynamic-config-admission/dynamic-config/frontdoor/metrics"
	"github.com/dynamic-config-admission/dynamic-config/frontdoor/review"
	"github.com/dynamic-config-admission/dynamic-config/internal/redact"
	"github.com/dynamic-config-admission/dynamic-config/internal/refusallabel"
)

// slugCallerRefused is the denial of an admission the decider would not
// decide because it refused this front door as a caller (issue 23).
const slugCallerRefused = "DynamicConfigCallerRefused"

// callerRefused reports whether the call failed because the decider refused
// this front door's credentials or the cluster it speaks for.
func (f *failure) callerRefused() bool {
	return f.code == codes.PermissionDenied.String() || f.code == codes.Unauthenticated.String()
}

// refusedAsCaller denies the admission whatever --on-decider-error(-validate)
// says: PERMISSION_DENIED and UNAUTHENTICATED are a lasting misconfiguration
// of this front door or of the decider's callers, never an outage, and
// admitting through them would admit every asking pod unpatched — the ones
// the decider would refuse included. The message names this front door's
// cluster and what to change in the callers file.
func (a *admission) refusedAsCaller(f *failure) *review.Response {
	flag, what := a.failureFlag()
	detail := cut(redact.URL(f.detail), maxDetail)
	cluster := "the decider's own cluster (this front door sends no --cluster-name)"
	if a.h.cluster != "" {
		cluster = "cluster " + strconv.Quote(a.h.cluster)
	}
	fix := "the decider does not know this front door's credential: list its token digest or client certificate in the decider's callers file (--callers) with " +
		cluster + " among its clusters, or give it the decider's --auth-token-file token"
	if f.code == codes.PermissionDenied.String() {
		fix = "the decider's callers file (--callers) does not let this front door's caller speak for " + cluster + ": add it to that caller's clusters"
	}
	msg := fmt.Sprintf("dynamic-config.rs: the decider refused this front door (%s: %s), so %s — an authorization failure denies whatever %s says: %s",
		f.code, detail, what, flag, fix)
	a.rec.reason, a.rec.check, a.rec.patchOps = slugCallerRefused, "", 0
	a.rec.outcome, a.rec.level = metrics.OutcomeDeciderErrorDenied, slog.LevelError
	a.rec.extra = []slog.Attr{slog.String("grpc_code", f.code), slog.String("detail", detail), slog.String("cluster", a.h.cluster)}
	a.h.metrics.Refusal(refusallabel.CallerRefused)
	a.h.metrics.AuthorizationFailure(a.webhook, f.code)
	return denied(a.req.UID, 403, slugCallerRefused, msg)
}
