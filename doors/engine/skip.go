package engine

import (
	"strings"

	"github.com/dynamic-config-admission/dynamic-config/decider/core/envpolicy"
	deciderv1 "github.com/dynamic-config-admission/dynamic-config/gen/dynamicconfig/decider/v1"
)

// skipReasonTexts are the texts of the skip reasons (spec 07 §1.4) but
// NOT_TARGETED's, which names its target (see SkipReasonText).
var skipReasonTexts = map[deciderv1.SkipReason]string{
	deciderv1.SkipReason_SKIP_REASON_NO_ANNOTATIONS:   "no dynamic-config.rs/ annotation",
	deciderv1.SkipReason_SKIP_REASON_NOT_CREATE:       "the operation is not CREATE",
	deciderv1.SkipReason_SKIP_REASON_ALREADY_INJECTED: "already injected",
	deciderv1.SkipReason_SKIP_REASON_NOT_REQUESTED:    `inject is not "true"`,
	deciderv1.SkipReason_SKIP_REASON_NO_POLICY:        "no environment-variable policy",
}

// SkipReasonText is a skip reason as inject and explain print it (spec 07
// §1.4); target (pods or workloads) is what NOT_TARGETED names. ok is false
// for a reason without a text.
func SkipReasonText(reason deciderv1.SkipReason, target string) (text string, ok bool) {
	if reason == deciderv1.SkipReason_SKIP_REASON_NOT_TARGETED {
		return "the environment-variable policy does not target " + target, true
	}
	text, ok = skipReasonTexts[reason]
	return text, ok
}

// SkipText names why nothing was injected into a pod: the decider's skip
// reason, or the front door's allow without an RPC (step A3; d is nil).
func SkipText(d *deciderv1.Decision) string {
	if d == nil {
		return skipReasonTexts[deciderv1.SkipReason_SKIP_REASON_NO_ANNOTATIONS]
	}
	if text, ok := SkipReasonText(d.GetSkipReason(), envpolicy.TargetPods); ok {
		return text
	}
	return strings.ToLower(d.GetOutcome().String())
}
