#!/usr/bin/env bash
# The grpcurl promise (spec 06 §9): a plaintext decider holding the empty
# installation answers list, describe and Decide through server reflection.
# Needs GRPCURL and DYNAMIC_CONFIG (paths to the built binaries).
set -euo pipefail
: "${GRPCURL:?path to grpcurl}"
: "${DYNAMIC_CONFIG:?path to dynamic-config}"

work="$(mktemp -d)"
decider_pid=""
cleanup() {
	if [ -n "$decider_pid" ]; then
		kill "$decider_pid" 2>/dev/null || true
		wait "$decider_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

fail() {
	echo "grpcurl-check: $*" >&2
	echo "--- decider log" >&2
	cat "$work/decider.log" >&2 || true
	exit 1
}

: >"$work/empty.yaml"

# start_decider ARGS…: starts a plaintext decider holding the empty
# installation on a random high port (retrying with another when it is
# taken, so parallel runs never collide) and waits for health SERVING, which
# it reports only once the installation is held — or, without reflection
# (grpcurl cannot call health then), for its "decider listening" log line.
# Sets addr and decider_pid.
start_decider() {
	addr=""
	local attempt port health
	for attempt in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		env -u DYNAMIC_CONFIG_DECIDER_TOKEN_FILE \
			"$DYNAMIC_CONFIG" decider --plaintext --installation "$work/empty.yaml" \
			--addr "127.0.0.1:$port" --metrics-addr "" "$@" >"$work/decider.log" 2>&1 &
		decider_pid=$!
		for _ in $(seq 1 100); do
			if ! kill -0 "$decider_pid" 2>/dev/null; then
				wait "$decider_pid" 2>/dev/null || true
				decider_pid=""
				break
			fi
			if [[ " $* " == *" --reflection=false "* ]]; then
				health="$(grep -o '"msg":"decider listening"' "$work/decider.log" || true)"
			else
				health="$("$GRPCURL" -plaintext "127.0.0.1:$port" grpc.health.v1.Health/Check 2>/dev/null || true)"
			fi
			if grep -q '"SERVING"\|decider listening' <<<"$health"; then
				addr="127.0.0.1:$port"
				return 0
			fi
			sleep 0.1
		done
		[ -z "$decider_pid" ] || fail "health did not become SERVING on 127.0.0.1:$port"
		grep -q 'address already in use' "$work/decider.log" || fail "the decider exited early (attempt $attempt)"
	done
	fail "no free port found"
}

stop_decider() {
	kill "$decider_pid" 2>/dev/null || true
	wait "$decider_pid" 2>/dev/null || true
	decider_pid=""
}

start_decider

list="$("$GRPCURL" -plaintext "$addr" list)" || fail "list failed"
grep -qx 'dynamicconfig.decider.v1.DeciderService' <<<"$list" ||
	fail "list does not show dynamicconfig.decider.v1.DeciderService: $list"

describe="$("$GRPCURL" -plaintext "$addr" describe dynamicconfig.decider.v1.DeciderService)" || fail "describe failed"
grep -q 'rpc Decide' <<<"$describe" || fail "describe does not show Decide: $describe"
grep -q 'rpc GetInstallation' <<<"$describe" || fail "describe does not show GetInstallation: $describe"

decision="$("$GRPCURL" -plaintext -d @ "$addr" dynamicconfig.decider.v1.DeciderService/Decide <<'JSON'
{"purpose": "PURPOSE_MUTATE",
 "pod": {"namespace": "default", "name": "app", "operation": "OPERATION_CREATE",
         "resourceKind": "RESOURCE_KIND_POD",
         "annotations": {"dynamic-config.rs/inject": "true",
                         "dynamic-config.rs/source": "consul",
                         "dynamic-config.rs/endpoint": "http://consul:8500",
                         "dynamic-config.rs/key": "myapp/config.json",
                         "dynamic-config.rs/path": "/config/rendered.toml"},
         "containers": [{"name": "app"}]}}
JSON
)" || fail "Decide failed"
grep -q '"decision"' <<<"$decision" || fail "Decide did not return a DecisionResponse: $decision"
grep -q '"outcome": "OUTCOME_INJECT"' <<<"$decision" || fail "example 1 of 03 §7 is not OUTCOME_INJECT under the empty installation: $decision"
grep -q '"name": "dynamic-config-agent"' <<<"$decision" || fail "the plan has no dynamic-config-agent container: $decision"
grep -q '"installationRevision": "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"' <<<"$decision" ||
	fail "the DecisionResponse does not carry the empty installation's revision: $decision"

installation="$("$GRPCURL" -plaintext "$addr" dynamicconfig.decider.v1.DeciderService/GetInstallation)" || fail "GetInstallation failed"
grep -q '"revision": "sha256:' <<<"$installation" || fail "GetInstallation has no revision: $installation"

stop_decider

# --reflection=false hides the service from grpcurl (health still answers).
start_decider --reflection=false
if "$GRPCURL" -plaintext "$addr" list >"$work/list-off" 2>&1; then
	fail "list answered with --reflection=false: $(cat "$work/list-off")"
fi
grep -q 'does not support the reflection API' "$work/list-off" ||
	fail "list with --reflection=false failed for another reason: $(cat "$work/list-off")"
stop_decider

echo "grpcurl-check: list, describe, Decide and GetInstallation answered; --reflection=false hides the service"
