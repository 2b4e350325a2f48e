#!/usr/bin/env bash
# cli-compare.sh OLD NEW — runs two dynamic-config binaries over the same
# command lines and compares what each prints, byte for byte: stdout, stderr
# and the exit code. A refactoring of the command line (issue 22, issue 37)
# proves with it that flags, variables, defaults, help, completion and every
# output stayed the same:
#
#   git worktree add /tmp/old <base> && (cd /tmp/old && go build -ldflags '-X main.version=vX' -o /tmp/dc-old ./cmd/dynamic-config)
#   go build -ldflags '-X main.version=vX' -o /tmp/dc-new ./cmd/dynamic-config
#   scripts/cli-compare.sh /tmp/dc-old /tmp/dc-new
#
# Covered: every golden case (test/cases) through inject (every -o) and
# explain (every -o, with and without --all), with the case's environment or
# --no-env and its classes file; check-installation of every case, of the
# chart values (examples/, cmd/dynamic-config/testdata/values) and of broken
# installations; inject and explain over the values; usage errors, unknown
# commands and flags, --help and `help` of every subcommand; completion
# scripts and completion requests; version; the refusals of the long-running
# subcommands; and decider, frontdoor and serve started, asked (serve: the
# README's review) and stopped with SIGTERM.
#
# Before comparing, what differs from run to run is masked in both outputs
# alike: log timestamps, durations and GetInstallation's loadedAt, loopback
# ports, decision ids (random UUIDs), serve's temporary directory and the
# addr file's temporary name, the VCS revision of `version -o json`; lines
# that race the process's exit are dropped (the health watch's end, the end
# of the decision cache's revision watch — Canceled or Unavailable, whichever
# end stops first — and its warning when serve stops during its start, and
# the watch of serve's temporary directory removed at exit); and the second space protojson puts after a colon in
# some binaries and not in others (google.golang.org/protobuf/internal/detrand:
# its output is unstable between builds by design).
#
# Every server the script starts listens on loopback only (--addr 127.0.0.1:0
# is given to decider and frontdoor before the case's own flags), and every
# command line is bounded in time.
# Prints one line per difference and the count; exits 1 when any differ.
set -euo pipefail

old=${1:?usage: cli-compare.sh OLD-BINARY NEW-BINARY}
new=${2:?usage: cli-compare.sh OLD-BINARY NEW-BINARY}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
# a loopback port in use, for the "address in use" refusals
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(3600)' >"$work/busy" &
holder=$!
trap 'kill "$holder"; rm -rf "$work"' EXIT
mkdir -p "$work/home" "$work/out"
cd "$work"
until [[ -s busy ]]; do sleep 0.1; done
busy=127.0.0.1:$(<busy)

compared=0
differed=0

# mask normalises what differs from run to run.
mask() {
	sed -E \
		-e 's/time=[^ ]+/time=T/g' \
		-e 's/"time":"[^"]*"/"time":"T"/g' \
		-e 's/(127\.0\.0\.1|localhost|\[::1\]):[0-9]+/\1:PORT/g' \
		-e 's/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/<uuid>/g' \
		-e 's#dynamic-config-serve-[A-Za-z0-9]+#dynamic-config-serve-X#g' \
		-e 's/"revision": "[0-9a-f]{40}"/"revision": "<vcs>"/' \
		-e 's/"loadedAt": +"[^"]*"/"loadedAt": "T"/' \
		-e 's/": {2}/": /g' \
		-e 's/\.addr-[0-9]+/.addr-N/g' \
		-e 's/(duration_us|duration_ms|rpc_ms)(=|":)[0-9.]+/\1\2N/g' \
		-e '/grpc\.health\.v1\.Health/d' \
		-e '/grpc_method(=|":")WatchRevision/d' \
		-e '/decision cache: no revision watch/d' \
		-e '/installation watch: cannot watch the document.s directory.*dynamic-config-serve-X/d' \
		-e '/"modified": true,?/d'
}

# run BINARY OUT ENV... -- ARGS...: one invocation with only the given
# environment, stdin from $stdin (default /dev/null).
run() {
	local bin=$1 out=$2
	shift 2
	local env=()
	while [[ $1 != -- ]]; do
		env+=("$1")
		shift
	done
	shift
	local code=0
	case ${1:-} in
	decider) set -- decider --addr 127.0.0.1:0 --metrics-addr "" "${@:2}" ;;
	frontdoor) set -- frontdoor --addr 127.0.0.1:0 "${@:2}" ;;
	esac
	timeout -k 5 60 env -i PATH="$PATH" HOME="$work/home" "${env[@]}" "$bin" "$@" <"${stdin:-/dev/null}" >"$out.stdout" 2>"$out.stderr" || code=$?
	echo "$code" >"$out.code"
	mask <"$out.stdout" >"$out.stdout.m"
	mask <"$out.stderr" >"$out.stderr.m"
}

# check NAME ENV... -- ARGS...: both binaries, compared.
check() {
	local name=$1
	shift
	run "$old" "$work/out/old" "$@"
	run "$new" "$work/out/new" "$@"
	compared=$((compared + 1))
	local part
	for part in stdout.m stderr.m code; do
		if ! cmp -s "$work/out/old.$part" "$work/out/new.$part"; then
			differed=$((differed + 1))
			echo "DIFFERS ($part): $name"
			diff "$work/out/old.$part" "$work/out/new.$part" | head -20 || true
			return
		fi
	done
}

# --- the golden corpus ----------------------------------------------------

for dir in "$root"/test/cases/*/; do
	case=$(basename "$dir")
	ns=$(tr -d '[:space:]' <"$dir/namespace")
	env=()
	noenv=(--no-env)
	if [[ -f $dir/environment ]]; then
		noenv=()
		while IFS= read -r line || [[ -n $line ]]; do
			trimmed=${line#"${line%%[![:space:]]*}"}
			[[ -z $trimmed || $trimmed == \#* ]] && continue
			env+=("${trimmed%$'\r'}")
		done <"$dir/environment"
	fi
	classes=()
	[[ -f $dir/classes.yaml ]] && classes=(--classes-file "$dir/classes.yaml")
	common=(-f "$dir/pod.yaml" --installation "$dir/installation.yaml" -n "$ns" "${noenv[@]}" "${classes[@]}")
	check "$case: inject" "${env[@]}" -- inject "${common[@]}"
	for o in yaml json patch review; do
		check "$case: inject -o $o" "${env[@]}" -- inject "${common[@]}" -o "$o"
	done
	for o in text json yaml; do
		check "$case: explain -o $o" "${env[@]}" -- explain "${common[@]}" -o "$o"
		check "$case: explain -o $o --all" "${env[@]}" -- explain "${common[@]}" -o "$o" --all
	done
	for o in text json; do
		check "$case: check-installation -o $o" "${env[@]}" -- check-installation --installation "$dir/installation.yaml" "${noenv[@]}" -o "$o"
	done
done

# --- chart values and broken installations --------------------------------

canon=$root/test/cases/canonical-1-consul-sidecar/pod.yaml
for values in "$root"/examples/*.values.yaml "$root"/cmd/dynamic-config/testdata/values/*.yaml; do
	name=${values#"$root"/}
	for o in text json; do
		check "check-installation --values $name -o $o" -- check-installation --values "$values" -o "$o"
	done
	check "inject --values $name -o review" -- inject -f "$canon" --values "$values" -o review
	check "inject --values $name" -- inject -f "$canon" --values "$values"
	check "explain --values $name" -- explain -f "$canon" --values "$values"
	check "explain --values $name -o json --all" -- explain -f "$canon" --values "$values" -o json --all
done
check "explain -f examples/review-inject.json (not a Pod)" -- explain -f "$root/examples/review-inject.json" --no-env
check "inject -f examples/review-inject.json (not a Pod)" -- inject -f "$root/examples/review-inject.json" --no-env

printf 'watchSeconds: "-1"\nendpoint: http://x\n' >bad-setting.yaml
printf 'watchSeconds: [\n' >bad-yaml.yaml
printf 'wachSeconds: "30"\n' >unknown-key.yaml
printf 'envPolicy:\n  rules:\n    - reject: noneIn\n      environmentVariables: [{name: 1BAD}]\n' >bad-policy.yaml
printf '# nothing\n' >blank.yaml
printf '{"watchSeconds": "30"}\n' >doc.json
printf 'watchSeconds = "30"\n' >doc.toml
printf 'apiVersion: dynamic-config.rs/v1alpha1\nkind: DynamicConfigClass\nmetadata: {name: a, namespace: billing}\nspec: {source: mysql}\n' >bad-classes.yaml
for doc in bad-setting.yaml bad-yaml.yaml unknown-key.yaml bad-policy.yaml blank.yaml doc.json doc.toml missing.yaml; do
	for o in text json; do
		check "check-installation --installation $doc -o $o" -- check-installation --installation "$doc" -o "$o"
	done
	check "inject --installation $doc" -- inject -f "$canon" --installation "$doc" --no-env
	check "explain --installation $doc" -- explain -f "$canon" --installation "$doc" --no-env
done
check "check-installation, the installation in the environment" DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=soon DYNAMIC_CONFIG_ENV_POLICY='{"rules":[]}' -- check-installation
check "check-installation, the document located by variable" DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE="$work/doc.json" -- check-installation -o json
check "check-installation, the default document absent" -- check-installation
check "check-installation --installation and --values" -- check-installation --installation doc.json --values "$root/examples/seed000-pins.values.yaml"
check "check-installation -o xml" -- check-installation -o xml
check "check-installation --values missing" -- check-installation --values missing.yaml
check "inject with classes on and no classes file" DYNAMIC_CONFIG_WEBHOOK_CLASSES=true -- inject -f "$canon"
check "inject --classes-file broken" -- inject -f "$canon" --no-env --classes-file bad-classes.yaml
check "explain --classes-file missing" -- explain -f "$canon" --no-env --classes-file missing.yaml
check "inject -f a directory" -- inject -f "$root/test/cases/canonical-2-vault-kubernetes-ca" --no-env -o review
check "inject -f - (stdin)" -- inject -f - --no-env -o patch
stdin=$canon check "inject -f - (a pod on stdin)" -- inject -f - --no-env -o json
stdin=$canon check "explain -f - -v" -- explain -f - --no-env -v
check "inject -f missing" -- inject -f missing.yaml --no-env
check "inject --cluster-name Bad_Name" -- inject -f "$canon" --no-env --cluster-name Bad_Name
check "inject --cluster-name west -o review" -- inject -f "$canon" --no-env --cluster-name west -o review
check "explain --release-namespace and --values" -- explain -f "$canon" --values "$root/examples/seed000-pins.values.yaml" --release-namespace team-a

# --- usage, help, completion, version -------------------------------------

subcommands=(decider frontdoor serve inject explain check-installation check-cluster audit-pods audit-reporter fleet-status version completion)
check "no arguments" --
check "--help" -- --help
check "-h" -- -h
check "help" -- help
check "--version" -- --version
check "unknown command" -- injekt -f x
check "unknown command, no suggestion" -- frobnicate
check "unknown root flag" -- --bogus
for sc in "${subcommands[@]}"; do
	check "$sc --help" -- "$sc" --help
	check "$sc -h" -- "$sc" -h
	check "help $sc" -- help "$sc"
	check "$sc --bogus" -- "$sc" --bogus
	check "$sc --log-level loud" -- "$sc" --log-level loud
	check "$sc --log-format xml" -- "$sc" --log-format xml
	check "$sc extra argument" -- "$sc" extra arguments
done
check "inject without -f" -- inject
check "explain without -f" -- explain --no-env
check "inject -o xml" -- inject -f "$canon" -o xml
check "explain -o patch" -- explain -f "$canon" -o patch
check "inject -single-dash-long-flags" -- inject -f "$canon" -installation doc.json -o=review -no-env
check "completion without a shell" -- completion
check "completion powershell" -- completion powershell
for shell in bash zsh fish; do
	check "completion $shell" -- completion "$shell"
done
for request in "" "in" "inject -" "inject --" "inject -o " "inject --log-level " "explain -o " "check-installation --values " \
	"completion " "decider --" "frontdoor --on-decider-error " "serve --" "audit-pods -o " "version -o "; do
	read -r -a words <<<"$request"
	[[ $request == *" " || -z $request ]] && words+=("")
	check "__complete $request" -- __complete "${words[@]}"
done
check "version" -- version
check "version -o json" -- version -o json
check "version -o xml" -- version -o xml

# --- the long-running subcommands: refusals --------------------------------

check "decider without TLS" -- decider --installation doc.json
check "decider --plaintext --tls-cert" -- decider --plaintext --tls-cert x.crt --tls-key x.key
check "decider --plaintext --tls-client-ca" -- decider --plaintext --tls-client-ca ca.crt
check "decider half a pair" -- decider --tls-cert x.crt
check "decider a pair that does not load" -- decider --tls-cert x.crt --tls-key x.key --installation doc.json --addr 127.0.0.1:0 --metrics-addr ""
check "decider --reload-interval 0s" -- decider --plaintext --reload-interval 0s
check "decider --drain-delay -1s" -- decider --plaintext --drain-delay -1s
check "decider --pprof without metrics" -- decider --plaintext --pprof --metrics-addr ""
check "decider --max-recv-bytes" -- decider --plaintext --max-recv-bytes 10
check "decider --max-request-bytes 0" -- decider --plaintext --max-request-bytes 0
check "decider --callers without --cluster-name" -- decider --plaintext --callers c.yaml
check "decider --callers and a token" -- decider --plaintext --callers c.yaml --cluster-name east --auth-token-file t
check "decider --cluster-name East_1" -- decider --plaintext --cluster-name East_1
check "decider a missing callers file" -- decider --plaintext --callers missing.yaml --cluster-name east --installation doc.json --addr 127.0.0.1:0 --metrics-addr ""
check "decider an invalid installation" -- decider --plaintext --installation bad-setting.yaml --addr 127.0.0.1:0 --metrics-addr ""
check "decider an invalid policy in the environment" DYNAMIC_CONFIG_ENV_POLICY='{"rules":[{"reject":"x"}]}' -- decider --plaintext --installation doc.json --addr 127.0.0.1:0 --metrics-addr ""
check "decider a missing installation" -- decider --plaintext --installation missing.yaml --addr 127.0.0.1:0 --metrics-addr ""
check "decider --trace-sample-ratio 1.5" -- decider --plaintext --trace-sample-ratio 1.5
check "decider --otlp-endpoint not a URL" -- decider --plaintext --otlp-endpoint collector:4317 --installation doc.json --addr 127.0.0.1:0 --metrics-addr ""
check "decider --follow with --installation" -- decider --plaintext --follow 127.0.0.1:1 --installation doc.json
check "decider --follow with an installation variable" DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30 -- decider --plaintext --follow 127.0.0.1:1
check "decider a follower flag without --follow" -- decider --plaintext --max-stale 10s
check "decider --follower-id West_1" -- decider --plaintext --follow 127.0.0.1:1 --follower-id West_1
check "decider --classes-file and --kubeconfig" -- decider --plaintext --installation doc.json --classes-file bad-classes.yaml --kubeconfig k --addr 127.0.0.1:0 --metrics-addr ""
check "decider --kubeconfig without --classes" -- decider --plaintext --installation doc.json --kubeconfig k --addr 127.0.0.1:0 --metrics-addr ""
check "decider a broken classes file" -- decider --plaintext --installation doc.json --classes-file bad-classes.yaml --addr 127.0.0.1:0 --metrics-addr ""
check "decider a bad variable" DYNAMIC_CONFIG_DECIDER_RELOAD_INTERVAL=soon -- decider --plaintext
check "decider a bad boolean variable" DYNAMIC_CONFIG_DECIDER_PLAINTEXT=maybe -- decider
check "decider an address in use" -- decider --plaintext --installation doc.json --addr "$busy" --metrics-addr ""
check "frontdoor without --decider-target" -- frontdoor
check "frontdoor an installation variable" DYNAMIC_CONFIG_AGENT_WATCH_SECONDS=30 DYNAMIC_CONFIG_WEBHOOK_DEFAULTS_FILE=x -- frontdoor --decider-target x
check "frontdoor --on-decider-error maybe" -- frontdoor --decider-target x --on-decider-error maybe
check "frontdoor --on-decider-error-validate maybe" -- frontdoor --decider-target x --on-decider-error-validate maybe
check "frontdoor --pprof without metrics" -- frontdoor --decider-target x --pprof
check "frontdoor --cluster-name Bad" -- frontdoor --decider-target x --cluster-name Bad_1
check "frontdoor --decider-timeout 0s" -- frontdoor --decider-target x --decider-timeout 0s
check "frontdoor --drain-delay -1s" -- frontdoor --decider-target x --drain-delay -1s
check "frontdoor --max-request-bytes 0" -- frontdoor --decider-target x --max-request-bytes 0
check "frontdoor no certificate" -- frontdoor --decider-target x --tls-cert missing.crt --tls-key missing.key
check "frontdoor a pair that does not load" -- frontdoor --decider-target x --tls-cert doc.json --tls-key doc.json
check "frontdoor --client-ca over plain HTTP" -- frontdoor --decider-target x --plaintext --tls-cert missing.crt --tls-key missing.key --client-ca ca.crt
check "frontdoor a token in plaintext off loopback" -- frontdoor --decider-target 10.0.0.1:9090 --decider-plaintext --decider-token-file t --plaintext --tls-cert missing.crt --tls-key missing.key
check "frontdoor --self-rotate without hosts" -- frontdoor --decider-target x --self-rotate
check "frontdoor --self-rotate decider hosts without the Secret" -- frontdoor --decider-target x --self-rotate --self-rotate-hosts a --self-rotate-decider-hosts b
check "frontdoor --self-rotate decider Secret without hosts" -- frontdoor --decider-target x --self-rotate --self-rotate-hosts a --self-rotate-decider-secret s
check "frontdoor --self-rotate outside a pod" -- frontdoor --decider-target x --self-rotate --self-rotate-hosts a
check "frontdoor --self-rotate a kubeconfig that does not exist" -- frontdoor --decider-target x --self-rotate --self-rotate-hosts a --self-rotate-namespace ns --kubeconfig missing
check "frontdoor --trace-sample-ratio -1" -- frontdoor --decider-target x --trace-sample-ratio -1
check "frontdoor an address in use" -- frontdoor --decider-target 127.0.0.1:1 --decider-plaintext --plaintext --tls-cert missing.crt --tls-key missing.key --addr "$busy"
check "serve a routable address" -- serve --addr 0.0.0.0:8080
check "serve --decider-addr off loopback" -- serve --decider-addr 10.0.0.1:9090
check "serve --on-decider-error maybe" -- serve --on-decider-error maybe
check "serve --pprof without metrics" -- serve --pprof
check "serve --reload-interval 0s" -- serve --reload-interval 0s
check "serve --max-request-bytes 0" -- serve --max-request-bytes 0
check "serve --tls-generate and --tls-cert" -- serve --tls-generate d --tls-cert x
check "serve half a pair" -- serve --tls-key x
check "serve an invalid installation" -- serve --installation bad-setting.yaml --addr 127.0.0.1:0 --decider-addr 127.0.0.1:0
check "serve --client-ca without TLS" -- serve --client-ca ca.crt --addr 127.0.0.1:0 --decider-addr 127.0.0.1:0
check "serve a pair that does not load" -- serve --tls-cert doc.json --tls-key doc.json --addr 127.0.0.1:0 --decider-addr 127.0.0.1:0
check "serve a front door address in use" -- serve --addr "$busy" --decider-addr 127.0.0.1:0
check "serve a metrics address in use" -- serve --addr 127.0.0.1:0 --decider-addr 127.0.0.1:0 --metrics-addr "$busy"
check "serve --addr-file in a missing directory" -- serve --addr 127.0.0.1:0 --decider-addr 127.0.0.1:0 --addr-file missing/dir/addr
check "fleet-status without a target" -- fleet-status
check "fleet-status --timeout 0s" -- fleet-status --decider-target static:///127.0.0.1:1 --timeout 0s
check "fleet-status an unreachable replica" -- fleet-status --decider-target static:///127.0.0.1:1 --decider-plaintext --timeout 1s
check "fleet-status a bad target" -- fleet-status --decider-target 'dns:///'
check "check-cluster --probe-only --no-probe" -- check-cluster --probe-only --no-probe
check "check-cluster -o xml" -- check-cluster -o xml
check "check-cluster --probe-annotation bad" -- check-cluster --probe-annotation bad
check "check-cluster --probe-timeout 0s" -- check-cluster --probe-timeout 0s
check "check-cluster no kubeconfig" -- check-cluster --kubeconfig missing
check "audit-pods -o xml" -- audit-pods -o xml
check "audit-pods -n and -A" -- audit-pods -n a -A
check "audit-pods --timeout 0s" -- audit-pods --timeout 0s
check "audit-pods no kubeconfig" -- audit-pods --kubeconfig missing
check "audit-reporter --interval 0s" -- audit-reporter --interval 0s
check "audit-reporter --max-events-per-pass -1" -- audit-reporter --max-events-per-pass -1
check "audit-reporter no kubeconfig" -- audit-reporter --kubeconfig missing

# --- the long-running subcommands: started, asked, stopped -----------------

# serve_once BINARY OUT WHAT ARGS...: runs a long-running subcommand until
# its addr file appears (WHAT serve: then POSTs the README's review to the
# front door) or a second has passed, sends SIGTERM and records its output,
# the answer and the exit code.
serve_once() {
	local bin=$1 out=$2 what=$3
	shift 3
	rm -f "$work/addr"
	timeout -k 5 60 env -i PATH="$PATH" HOME="$work/home" "$bin" "$@" >"$out.stdout" 2>"$out.stderr" &
	local pid=$! answer=""
	if [[ $what == serve ]]; then
		for _ in $(seq 100); do
			[[ -s $work/addr ]] && break
			sleep 0.1
		done
		local url
		url=$(sed -n 's/^frontdoor=//p' "$work/addr")
		local ca=()
		[[ -f $work/tls/ca.crt ]] && ca=(--cacert "$work/tls/ca.crt")
		answer=$(curl -sS "${ca[@]}" -H 'Content-Type: application/json' --data @"$root/examples/review-inject.json" "$url/mutate" || echo "curl failed")
	else
		sleep 1
	fi
	kill -TERM "$pid"
	local code=0
	wait "$pid" || code=$?
	echo "$answer" >>"$out.stdout"
	echo "$code" >"$out.code"
	mask <"$out.stdout" >"$out.stdout.m"
	mask <"$out.stderr" >"$out.stderr.m"
}

serve_check() {
	local name=$1
	shift
	serve_once "$old" "$work/out/old" "$@"
	serve_once "$new" "$work/out/new" "$@"
	compared=$((compared + 1))
	local part
	for part in stdout.m stderr.m code; do
		if ! cmp -s "$work/out/old.$part" "$work/out/new.$part"; then
			differed=$((differed + 1))
			echo "DIFFERS ($part): $name"
			diff "$work/out/old.$part" "$work/out/new.$part" | head -20 || true
			return
		fi
	done
}

serve_check "serve: the README's review, then SIGTERM" serve serve --addr 127.0.0.1:0 --decider-addr 127.0.0.1:0 --addr-file "$work/addr" --log-level debug
serve_check "serve --tls-generate --metrics-addr: the review, then SIGTERM" serve serve --addr 127.0.0.1:0 --decider-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 \
	--tls-generate "$work/tls" --addr-file "$work/addr" --log-format json
serve_check "decider --plaintext, then SIGTERM" decider decider --plaintext --installation doc.json --addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 --drain-delay 0s --log-format text
serve_check "frontdoor --plaintext, then SIGTERM" frontdoor frontdoor --plaintext --tls-cert missing.crt --tls-key missing.key --decider-target 127.0.0.1:1 \
	--decider-plaintext --addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 --drain-delay 0s --log-format text

echo "compared $compared command lines (stdout, stderr and exit code of each); $differed differ"
[[ $differed -eq 0 ]]
