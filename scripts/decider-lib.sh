# Shared by the grpcurl scripts (source it; not executable on its own): a work
# directory, cleanup on exit, fail, and starting/stopping a plaintext decider
# on a random high port. The sourcing script sets check_name first.
# Needs GRPCURL and DYNAMIC_CONFIG (paths to the built binaries).
: "${GRPCURL:?path to grpcurl}"
: "${DYNAMIC_CONFIG:?path to dynamic-config}"
: "${check_name:?the sourcing script names itself}"

work="$(mktemp -d)"
decider_pid=""
addr=""
cleanup() {
	if [ -n "$decider_pid" ]; then
		kill "$decider_pid" 2>/dev/null || true
		wait "$decider_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

fail() {
	echo "$check_name: $*" >&2
	echo "--- decider log" >&2
	cat "$work/decider.log" >&2 || true
	exit 1
}

# start_decider INSTALLATION [ARGS…]: starts a plaintext decider holding
# INSTALLATION on a random high port (retrying with another when it is taken,
# so parallel runs never collide) and waits for health SERVING, which it
# reports only once the installation is held — or, without reflection
# (grpcurl cannot call health then), for its "decider listening" log line.
# The caller's token and env-policy variables are not passed on. Sets addr
# and decider_pid.
start_decider() {
	local installation="$1"
	shift
	addr=""
	local attempt port health
	for attempt in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		env -u DYNAMIC_CONFIG_DECIDER_TOKEN_FILE -u DYNAMIC_CONFIG_ENV_POLICY \
			"$DYNAMIC_CONFIG" decider --plaintext --installation "$installation" \
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
