// Package annotation names what both processes know of annotations: the
// prefix of the contract's keys (spec 01 §1) and the audit-annotation keys
// an admission answer carries (spec 03 §5, 04 §6, 05, 08 §2).
package annotation

import "strings"

// Prefix is the annotation prefix; keys outside it are never read.
const Prefix = "dynamic-config.rs/"

// Prefixed reports whether key is under Prefix.
func Prefixed(key string) bool { return strings.HasPrefix(key, Prefix) }

// The audit-annotation keys. Each has one writer: the revision the pure
// core (decision.New, for every decision), the decision id, the cluster and
// the rollout the decider's service, the classes revision and the env-policy rules the
// core's evaluation, decider-unavailable the front door (no decision), and
// on an answer from the front door's decision cache the front door its own
// decision id, decision-source and origin-decision-id (issue 43).
const (
	// AuditRevision names the installation that decided; every decision carries it.
	AuditRevision = "revision"
	// AuditDecisionID is the decision id, as in the decider's decision log line.
	AuditDecisionID = "decision-id"
	// AuditClassesRevision names the class set a decision consulted.
	AuditClassesRevision = "classes-revision"
	// AuditCluster names the cluster the decision was made for, when known.
	AuditCluster = "cluster"
	// AuditEnvPolicyRulePrefix + i is a warn-mode env-policy rule's finding.
	AuditEnvPolicyRulePrefix = "env-policy-rule-"
	// AuditDeciderUnavailable is the gRPC code of a decider call that failed
	// when the front door allowed the admission anyway.
	AuditDeciderUnavailable = "decider-unavailable"
	// AuditDeciderRole is "follower" on a follower decider's decisions (spec 09 §3).
	AuditDeciderRole = "decider-role"
	// AuditFollowerID is the follower id on a follower decider's decisions (spec 09 §3).
	AuditFollowerID = "follower-id"
	// AuditRollout is "canary" on an answer a rollout's candidate gave (its
	// revision is then the candidate's), and "fallback" on the active's
	// answer the guard gave instead of a candidate's new refusal (spec 10 §4).
	AuditRollout = "rollout"
	// AuditDecisionSource is "cache" or "stale-cache" on an answer the front
	// door gave from its decision cache (issue 43); absent on the decider's.
	AuditDecisionSource = "decision-source"
	// AuditOriginDecisionID is, on an answer from the decision cache, the id
	// of the decider's decision it repeats (its decision log line).
	AuditOriginDecisionID = "origin-decision-id"
)
