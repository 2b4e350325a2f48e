#!/usr/bin/env bash
# The environment-variable policy through grpcurl (spec 05, 06 §3, issue 6):
# a plaintext decider holding an installation with an envPolicy answers
# Decide with PURPOSE_VALIDATE for Deployments — the §4.1 truth table for the
# four operators (one rule per namespace), the §4.2 valued rows, one allowed
# and one refused Deployment — and refuses RESOURCE_KIND_UNSPECIFIED with
# InvalidArgument. Needs GRPCURL and DYNAMIC_CONFIG (paths to the built
# binaries). The decider is always stopped.
set -euo pipefail
check_name=grpcurl-validate-check
# shellcheck source=scripts/decider-lib.sh
. "$(dirname "$0")/decider-lib.sh"

# One rule per namespace, so that one decider answers every operator.
cat >"$work/installation.yaml" <<'YAML'
envPolicy:
  targets: [workloads]
  rules:
    - reject: anyIn
      environmentVariables: [{name: ALPHA}, {name: BETA}]
      namespaces: [any-in]
    - reject: allAreUsed
      environmentVariables: [{name: ALPHA}, {name: BETA}]
      namespaces: [all-are-used]
    - reject: anyNotIn
      environmentVariables: [{name: ALPHA}, {name: BETA}]
      namespaces: [any-not-in]
    - reject: notAllAreUsed
      environmentVariables: [{name: ALPHA}, {name: BETA}]
      namespaces: [not-all-are-used]
    - reject: anyIn
      environmentVariables: [{name: HTTPS_PROXY}]
      namespaces: [payments]
    - environmentVariables: [{name: LOG_LEVEL, value: debug}, {name: TRACE}]
      namespaces: [valued]
YAML

start_decider "$work/installation.yaml"

# decide KIND NAMESPACE CONTAINERS: Decide with PURPOSE_VALIDATE; CONTAINERS
# is the JSON members for the container lists. Prints grpcurl's output.
decide() {
	"$GRPCURL" -plaintext -d @ "$addr" dynamicconfig.decider.v1.DeciderService/Decide 2>&1 <<JSON
{"purpose": "PURPOSE_VALIDATE",
 "pod": {"namespace": "$2", "name": "web", "operation": "OPERATION_CREATE",
         "resourceKind": "$1", $3}}
JSON
}

checks=0
# expect NAMESPACE CONTAINERS RULE OPERATOR DETAIL: a Deployment with these
# containers in NAMESPACE is refused by envPolicy.rules[RULE] with DETAIL, or
# (DETAIL "") allowed.
expect() {
	local ns="$1" containers="$2" rule="$3" op="$4" detail="$5" out
	out="$(decide RESOURCE_KIND_DEPLOYMENT "$ns" "$containers")" || fail "Decide failed in $ns for $containers: $out"
	if [ -z "$detail" ]; then
		grep -q '"outcome": "OUTCOME_ALLOW"' <<<"$out" && ! grep -q '"refusals"' <<<"$out" ||
			fail "want allowed in $ns for $containers: $out"
	else
		local message="envPolicy.rules[$rule] ($op) rejects this Deployment in namespace \\\"$ns\\\": $detail"
		grep -q '"outcome": "OUTCOME_REFUSE"' <<<"$out" &&
			grep -q '"reason": "REFUSAL_REASON_ENV_POLICY"' <<<"$out" &&
			grep -q '"reasonSlug": "DynamicConfigEnvPolicy"' <<<"$out" &&
			grep -q '"httpCode": 403' <<<"$out" &&
			grep -qF "\"message\": \"$message\"" <<<"$out" ||
			fail "want refused in $ns with \"$message\" for $containers: $out"
	fi
	checks=$((checks + 1))
}

# The rows of spec 05 §4.1 (L = [ALPHA, BETA], GAMMA unlisted), spread over
# containers, initContainers and ephemeralContainers.
none='"containers": [{"name": "app"}]'
a='"containers": [{"name": "app"}], "initContainers": [{"name": "setup", "env": [{"name": "ALPHA", "value": "1"}]}]'
b='"containers": [{"name": "app"}], "ephemeralContainers": [{"name": "debug", "env": [{"name": "BETA", "valueFrom": true}]}]'
ab='"containers": [{"name": "app", "env": [{"name": "ALPHA", "value": ""}]}], "ephemeralContainers": [{"name": "debug", "env": [{"name": "BETA", "value": "2"}]}]'
ac='"containers": [{"name": "app"}], "ephemeralContainers": [{"name": "debug", "env": [{"name": "ALPHA", "value": "x"}]}], "initContainers": [{"name": "setup", "env": [{"name": "GAMMA", "value": "3"}]}]'
c='"containers": [{"name": "app", "env": [{"name": "GAMMA", "valueFrom": true}]}]'

forbids_a="it sets ALPHA, which this rule forbids"
none_of="it sets none of ALPHA, BETA; at least one of them is required"
a_not_b="it sets ALPHA but not BETA; set all of them or none"

expect any-in "$none" 0 anyIn ""
expect any-in "$a" 0 anyIn "$forbids_a"
expect any-in "$b" 0 anyIn "it sets BETA, which this rule forbids"
expect any-in "$ab" 0 anyIn "it sets ALPHA, BETA, which this rule forbids"
expect any-in "$ac" 0 anyIn "$forbids_a"
expect any-in "$c" 0 anyIn ""

expect all-are-used "$none" 1 allAreUsed ""
expect all-are-used "$a" 1 allAreUsed ""
expect all-are-used "$b" 1 allAreUsed ""
expect all-are-used "$ab" 1 allAreUsed "it sets all of ALPHA, BETA together, which this rule forbids"
expect all-are-used "$ac" 1 allAreUsed ""
expect all-are-used "$c" 1 allAreUsed ""

expect any-not-in "$none" 2 anyNotIn "$none_of"
expect any-not-in "$a" 2 anyNotIn ""
expect any-not-in "$b" 2 anyNotIn ""
expect any-not-in "$ab" 2 anyNotIn ""
expect any-not-in "$ac" 2 anyNotIn ""
expect any-not-in "$c" 2 anyNotIn "$none_of"

expect not-all-are-used "$none" 3 notAllAreUsed ""
expect not-all-are-used "$a" 3 notAllAreUsed "$a_not_b"
expect not-all-are-used "$b" 3 notAllAreUsed "it sets BETA but not ALPHA; set all of them or none"
expect not-all-are-used "$ab" 3 notAllAreUsed ""
expect not-all-are-used "$ac" 3 notAllAreUsed "$a_not_b"
expect not-all-are-used "$c" 3 notAllAreUsed ""

# The rows of spec 05 §4.2 (L = [LOG_LEVEL = debug, TRACE], anyIn). envFrom
# is not carried in the facts, so its row is the pod without env.
expect valued '"containers": [{"name": "app", "env": [{"name": "LOG_LEVEL", "value": "info"}]}]' 5 anyIn ""
expect valued '"containers": [{"name": "app", "env": [{"name": "LOG_LEVEL", "value": "debug"}]}]' 5 anyIn \
	"it sets LOG_LEVEL (with the listed value), which this rule forbids"
expect valued '"containers": [{"name": "app", "env": [{"name": "LOG_LEVEL", "valueFrom": true}]}]' 5 anyIn ""
expect valued '"containers": [{"name": "app", "env": [{"name": "TRACE", "valueFrom": true}]}]' 5 anyIn \
	"it sets TRACE, which this rule forbids"
expect valued '"containers": [{"name": "app", "env": [{"name": "TRACE", "value": ""}]}]' 5 anyIn \
	"it sets TRACE, which this rule forbids"
expect valued "$none" 5 anyIn ""

# One allowed and one refused Deployment in payments.
expect payments '"containers": [{"name": "app", "env": [{"name": "NO_PROXY", "value": ".svc"}]}]' 4 anyIn ""
expect payments '"containers": [{"name": "app", "env": [{"name": "HTTPS_PROXY", "value": "http://egress:3128"}]}]' 4 anyIn \
	"it sets HTTPS_PROXY, which this rule forbids"

# A Pod is not targeted by this installation ([workloads]): skipped.
out="$(decide RESOURCE_KIND_POD payments '"containers": [{"name": "app", "env": [{"name": "HTTPS_PROXY", "value": "x"}]}]')" ||
	fail "Decide for a Pod failed: $out"
grep -q '"outcome": "OUTCOME_SKIP"' <<<"$out" && grep -q '"skipReason": "SKIP_REASON_NOT_TARGETED"' <<<"$out" ||
	fail "a Pod under targets [workloads] was not skipped as not targeted: $out"

# A request without a resource kind is a broken request.
if out="$(decide RESOURCE_KIND_UNSPECIFIED payments "$none")"; then
	fail "Decide accepted RESOURCE_KIND_UNSPECIFIED: $out"
fi
grep -q 'Code: InvalidArgument' <<<"$out" || fail "RESOURCE_KIND_UNSPECIFIED did not answer InvalidArgument: $out"

kill "$decider_pid" 2>/dev/null || true
wait "$decider_pid" 2>/dev/null || true
decider_pid=""

echo "grpcurl-validate-check: $checks PURPOSE_VALIDATE decisions held spec 05 §4.1/§4.2; a Pod under [workloads] is skipped; RESOURCE_KIND_UNSPECIFIED is InvalidArgument"
