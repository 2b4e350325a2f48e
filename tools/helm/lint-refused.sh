#!/usr/bin/env bash
# Values the chart refuses fail `helm lint --strict` (make chart-lint, issue 40 item 10): the
# schema's refusals, and the cross-field rules of templates/_validate.tpl, which helm lint's
# no-op `fail` used to let through. Usage: lint-refused.sh CHART (HELM: the helm command line,
# with VAR=value assignments first, as make passes it).
set -euo pipefail
chart="$1"
# shellcheck disable=SC2206 # HELM is a command line on purpose
helm=($HELM)
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
n=0
# Each case: the values (--set / --set-string arguments) | what the lint output must name.
while IFS='|' read -r args want; do
	[ -n "$args" ] || continue
	# shellcheck disable=SC2086 # the arguments are split on purpose
	if env "${helm[@]}" lint --strict "$chart" $args >"$out" 2>&1; then
		echo "lint-refused: helm lint --strict passed with $args, which the chart refuses ($want)" >&2
		exit 1
	fi
	grep -qF -- "$want" "$out" || { cat "$out" >&2; echo "lint-refused: helm lint --strict $args failed without naming \"$want\"" >&2; exit 1; }
	n=$((n + 1))
done <<'CASES'
--set webhooks.failurePolicy=Fail|additional properties 'webhooks' not allowed
--set webhook.failurePolicy=Never|value must be one of 'Ignore', 'Fail'
--set agent.defaults.fileMode=416|got number, want string
--set agent.tag=latest|agent.tag: latest is refused; pin a version or a digest
--set tls.mode=certManager --set webhook.selfRotate.enabled=true|ask for different TLS modes; set tls.mode only
--set frontdoor.deciderTimeout=30s|must be at most webhook.timeoutSeconds
CASES
echo "lint-refused: helm lint --strict fails on each of $n refused values (the schema's and the chart's own rules)"
