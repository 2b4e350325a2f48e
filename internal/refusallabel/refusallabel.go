// Package refusallabel holds the values of the reason label of both
// processes' refusal counters (spec 07 §5), declared once:
// dynamic_config_decision_refusals_total (the decider, decider/metrics)
// counts a refusing decision by its first refusal's class, and
// dynamic_config_admission_refusals_total (the front door, frontdoor/metrics)
// counts a denied admission by the same classes (Decision) and by the denials
// the front door answers without a decision (FrontDoor).
package refusallabel

// The classes of a decision's refusal (spec 04 §1), as both counters name them.
const (
	Malformed = "malformed"
	Pinned    = "pinned"
	Policy    = "policy"
	Conflict  = "conflict"
	EnvPolicy = "env_policy"
)

// The front door's denials without a decision.
const (
	// DeciderUnavailable: the call failed with a gRPC code and
	// --on-decider-error(-validate) denies.
	DeciderUnavailable = "decider_unavailable"
	// Internal: the decider's answer could not be used (or the front door
	// recovered from a panic after decoding the review) and the failure
	// policy denies.
	Internal = "internal"
	// CallerRefused: the decider refused this front door as a caller
	// (PERMISSION_DENIED, UNAUTHENTICATED) — a denial whatever
	// --on-decider-error says (issue 23).
	CallerRefused = "caller_refused"
)

// Decision lists the reason values of a decision's refusal: every series of
// the decider's counter, and the front door's when the decider refused.
func Decision() []string { return []string{Malformed, Pinned, Policy, Conflict, EnvPolicy} }

// FrontDoor lists every reason value of the front door's counter: a
// decision's classes, then its own denials.
func FrontDoor() []string {
	return append(Decision(), DeciderUnavailable, Internal, CallerRefused)
}
