#!/usr/bin/env bash
# scripts/node/run.sh — the real-node tier end to end (`make e2e-node`):
# build the tier's images, tear down what an earlier (killed) run left, bring
# the node up, measure its idle cost, run test/e2e/node, and tear it all down
# whatever happens (an EXIT trap: a failure, Ctrl-C or SIGTERM all end in
# down.sh; a SIGKILL cannot be trapped, which is why every run starts with
# down.sh). Prints the timeline, the phase times and the cost at the end.
#
# Environment (mk/node.mk sets it): NODE_WORK_DIR, NODE_TOOLS_DIR, KUBECTL,
# NODE_HELM, NODE_CHART, NODE_IMAGE_TAR, NODE_IMAGE_REPOSITORY,
# NODE_IMAGE_TAG, NODE_CERT_MANAGER_VERSION, NODE_TIMEOUT, GO, and helm's
# HELM_* homes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export NODE_T0
NODE_T0=$(date +%s%3N)
# shellcheck source=scripts/node/lib.sh
. "$here/lib.sh"

: "${NODE_TOOLS_DIR:?}" "${KUBECTL:?}" "${NODE_HELM:?}" "${NODE_CHART:?}" "${NODE_IMAGE_TAR:?}"
: "${NODE_IMAGE_REPOSITORY:?}" "${NODE_IMAGE_TAG:?}" "${NODE_CERT_MANAGER_VERSION:?}" "${GO:=go}"
[[ $(id -u) == 0 ]] || fail "make e2e-node needs root: it runs containerd and a kubelet and changes the host's network"
export KUBECTL KUBE_PROXY=$NODE_TOOLS_DIR/kube-proxy

rm -rf "$NODE_WORK_DIR/logs" "$NODE_WORK_DIR/state" "$NODE_WORK_DIR/pod-logs" "$NODE_WORK_DIR/values"
mkdir -p "$NODE_WORK_DIR/bin" "$NODE_WORK_DIR/images" "$LOG_DIR"
# note MESSAGE: a timeline line, kept for the summary too.
note() { timeline "$@" | tee -a "$LOG_DIR/timeline.txt"; }

# --- what the node runs besides the product --------------------------------------

phase_start=$SECONDS
# The agent image the installation injects by default (the chart's agent.image
# and agent.tag, as its decider gets them): the stand-in is imported under it.
agent_image=$("$NODE_HELM" template dynamic-config "$NODE_CHART" --show-only templates/decider-deployment.yaml |
	awk '/name: DYNAMIC_CONFIG_AGENT_IMAGE/ {getline; gsub(/"/, "", $2); print $2}')
[[ -n $agent_image ]] || fail "the chart renders no DYNAMIC_CONFIG_AGENT_IMAGE"
(cd "$root" && "$GO" build -o "$NODE_WORK_DIR/bin/dynamic-config" ./cmd/dynamic-config)
(cd "$root/test/e2e" &&
	CGO_ENABLED=0 "$GO" build -trimpath -ldflags '-s -w' -o "$NODE_WORK_DIR/bin/pause" ./node/pause &&
	CGO_ENABLED=0 "$GO" build -trimpath -ldflags '-s -w' -o "$NODE_WORK_DIR/bin/standin" ./node/standin &&
	"$GO" run ./node/mkimages --pause "$NODE_WORK_DIR/bin/pause" --standin "$NODE_WORK_DIR/bin/standin" \
		--agent-image "$agent_image" --out "$NODE_WORK_DIR/images" >"$LOG_DIR/mkimages.log" &&
	"$GO" test -c -o "$NODE_WORK_DIR/bin/node.test" ./node/)
cert_manager_dir=$(cd "$root" && "$GO" mod download -json "github.com/cert-manager/cert-manager@$NODE_CERT_MANAGER_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $cert_manager_dir/deploy/crds ]] || fail "cert-manager $NODE_CERT_MANAGER_VERSION: no deploy/crds in the module"
build_time=$((SECONDS - phase_start))
note "tier images built (pause, the stand-in agent as $agent_image, consul, app), the test compiled, cert-manager $NODE_CERT_MANAGER_VERSION's CRDs at hand (${build_time}s)"

# --- the node ------------------------------------------------------------------------

teardown() {
	local status=$?
	trap - EXIT INT TERM
	if [[ -n ${test_pid:-} ]] && kill -0 "$test_pid" 2>/dev/null; then
		kill -TERM "$test_pid" 2>/dev/null
		sleep 2
		kill -KILL "$test_pid" 2>/dev/null
	fi
	grep -h '^node: \[' "$LOG_DIR/go-test.log" >>"$LOG_DIR/timeline.txt" 2>/dev/null
	[[ -n ${test_start:-} && -z ${test_time:-} ]] && test_time=$((SECONDS - test_start))
	local t=$SECONDS dropped
	# The confinement rule drops what a pod would send out of any interface but
	# the pod bridge: its counter says whether anything tried.
	dropped=$(iptables -t mangle -L FORWARD -v -n -x 2>/dev/null | awk -v c="$CONFINE_COMMENT" '$0 ~ c {print $1}')
	[[ -n $dropped ]] && note "confinement: ${dropped} packets from pods dropped on their way out of the pod bridge"
	note "teardown"
	"$here/down.sh" | tee -a "$LOG_DIR/timeline.txt" || status=1
	down_time=$((SECONDS - t))
	summary "$status"
	exit "$status"
}

summary() {
	local status=$1
	echo
	echo "node: ---- e2e-node summary ----"
	grep -h '^node: \[' "$LOG_DIR/timeline.txt" 2>/dev/null || true
	echo "node: times: tier images ${build_time}s, earlier run's leftovers ${leftover_time:-0}s, node up ${up_time:-?}s, tests ${test_time:-?}s, teardown ${down_time:-?}s; run.sh total $((SECONDS))s"
	[[ -f $LOG_DIR/cost.txt ]] && sed 's/^/node: /' "$LOG_DIR/cost.txt"
	if ((status == 0)); then
		echo "node: PASS (logs: $NODE_WORK_DIR)"
	else
		echo "node: FAIL (logs and the cluster's state: $NODE_WORK_DIR)"
	fi
}

t=$SECONDS
"$here/down.sh" | tee -a "$LOG_DIR/timeline.txt"
leftover_time=$((SECONDS - t))
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t=$SECONDS
NODE_COREDNS=$NODE_TOOLS_DIR/coredns-$(cd "$root/test/e2e/tools/coredns" && "$GO" list -m -f '{{.Version}}' github.com/coredns/coredns)
export NODE_COREDNS
NODE_IMAGES="$NODE_WORK_DIR/images/pause.tar $NODE_WORK_DIR/images/agent.tar $NODE_WORK_DIR/images/consul.tar"
NODE_IMAGES+=" $NODE_WORK_DIR/images/app.tar $NODE_IMAGE_TAR@$NODE_IMAGE_REPOSITORY"
export NODE_IMAGES
"$here/up.sh" | tee -a "$LOG_DIR/timeline.txt"
up_time=$((SECONDS - t))

"$here/measure.sh" 20 >"$LOG_DIR/cost.txt"
note "idle cost measured: $(tail -1 "$LOG_DIR/cost.txt")"

# The test binary runs in the background so that a SIGTERM or SIGINT reaches
# the trap at once (bash runs a trap only after the foreground command ends);
# the teardown stops it first. It stays in this process group: a SIGKILL of
# make and its children takes it too.
test_start=$SECONDS
NODE_KUBECONFIG="$PKI_DIR/admin.kubeconfig" NODE_KUBECTL="$KUBECTL" NODE_DYNAMIC_CONFIG="$NODE_WORK_DIR/bin/dynamic-config" \
	NODE_CONTAINERD_SOCK="$CONTAINERD_SOCK" NODE_CERT_MANAGER_DIR="$cert_manager_dir" \
	"$NODE_WORK_DIR/bin/node.test" -test.count=1 -test.v -test.timeout "${NODE_TIMEOUT:-45m}" \
	-test.run TestTheProductOnARealNode >"$LOG_DIR/go-test.log" 2>&1 &
test_pid=$!
tail -n +1 -f --pid="$test_pid" "$LOG_DIR/go-test.log" &
wait "$test_pid"
test_pid=
test_time=$((SECONDS - test_start))
