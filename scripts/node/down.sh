#!/usr/bin/env bash
# scripts/node/down.sh — tears the real node down, whatever state it is in: a
# run that finished, failed, or was killed mid-way (SIGKILL of make and its
# children leaves the components, each in a session of its own, and the
# containers running). Idempotent: on a clean host it does nothing.
#
# In order: the kubelet (so nothing is restarted), the other components by
# their recorded PIDs, every container (through containerd while it answers,
# then every process left in the kubelet's cgroups and every shim of our
# containerd socket), the mounts under the node's directories and its network
# namespaces, the bridges, the iptables chains of kube-proxy, the kubelet and
# CNI and our confinement rule, the sysctls as they were before the first
# node, the cgroups, the directories. It ends by checking that nothing is left
# and fails naming what is.
#
# Needs NODE_WORK_DIR (logs); KUBE_PROXY (the binary, for --cleanup) if set.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/node/lib.sh
. "$here/lib.sh"

[[ $(id -u) == 0 ]] || fail "the teardown needs root"

anything_left() {
	[[ -e $RUN_DIR || -e $STATE_DIR ]] && return 0
	ip link show "$NODE_BRIDGE" >/dev/null 2>&1 && return 0
	ip link show "$CNI_BRIDGE" >/dev/null 2>&1 && return 0
	iptables -t mangle -S FORWARD 2>/dev/null | grep -q -- "$CONFINE_COMMENT" && return 0
	return 1
}
if ! anything_left; then
	timeline "teardown: nothing of a node on this host"
	exit 0
fi
start=$SECONDS

# --- processes ------------------------------------------------------------------

stop_component kubelet 15
for c in kube-proxy coredns kube-scheduler kube-controller-manager; do
	stop_component "$c" 10
done

if component_alive containerd; then
	for id in $(node_ctr tasks ls -q 2>/dev/null); do
		node_ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1
	done
	for id in $(node_ctr tasks ls -q 2>/dev/null); do
		node_ctr tasks delete -f "$id" >/dev/null 2>&1
	done
	for id in $(node_ctr containers ls -q 2>/dev/null); do
		node_ctr containers delete "$id" >/dev/null 2>&1
	done
fi
stop_component containerd 15

# pids_in_kubepods: every process in the kubelet's pod cgroups, any hierarchy.
pids_in_kubepods() {
	local d
	for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
		[[ -d $d ]] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
	done | sort -u
}
for round in 1 2 3 4 5; do
	pids="$(pids_in_kubepods) $(our_shims)"
	[[ -z ${pids// /} ]] && break
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null
	sleep 0.5
done

stop_component kube-apiserver 15
stop_component etcd 10
# A component whose pidfile is gone but whose binary still runs from our
# tools directory is ours too (a pidfile written after a kill, never read).
for f in "$PID_DIR"/*; do
	[[ -f $f ]] && stop_component "$(basename "$f")" 5
done

# --- mounts and network namespaces -----------------------------------------------

for ns in /run/netns/cni-*; do
	[[ -e $ns ]] || continue
	ip netns delete "$(basename "$ns")" 2>/dev/null || { umount -l "$ns" 2>/dev/null; rm -f "$ns"; }
done
# Deepest first; lazily when busy.
awk '{print $5}' /proc/self/mountinfo |
	grep -E "^($STATE_DIR|$RUN_DIR|/var/lib/kubelet|/run/containerd)(/|$)" |
	awk '{print length, $0}' | sort -rn | cut -d' ' -f2- |
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done

# --- network ----------------------------------------------------------------------

# A veth whose pod namespace is gone went with it; one still plugged into the
# pod bridge goes now, then the bridges (their routes go with them).
for veth in $(ip -o link show master "$CNI_BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
	ip link delete "$veth" 2>/dev/null
done
for link in "$CNI_BRIDGE" "$NODE_BRIDGE"; do
	ip link show "$link" >/dev/null 2>&1 && ip link delete "$link"
done

if [[ -n ${KUBE_PROXY:-} && -x ${KUBE_PROXY:-} ]]; then
	"$KUBE_PROXY" --cleanup >"$LOG_DIR/kube-proxy-cleanup.log" 2>&1
fi
# clean_chains IPTABLES: drop the rules that jump into KUBE-* or CNI-* chains
# (or carry our comment), then those chains themselves.
clean_chains() {
	local ipt=$1 t line chain
	for t in filter nat mangle raw; do
		"$ipt" -t "$t" -S >/dev/null 2>&1 || continue
		"$ipt" -t "$t" -S | grep -E '^-A (PREROUTING|INPUT|FORWARD|OUTPUT|POSTROUTING) ' |
			grep -E -- "-j (KUBE-|CNI-)|$CONFINE_COMMENT" |
			while read -r line; do
				eval "\"$ipt\" -t $t ${line/#-A/-D}" 2>/dev/null
			done
		for chain in $("$ipt" -t "$t" -S | awk '/^-N (KUBE-|CNI-)/ {print $2}'); do
			"$ipt" -t "$t" -F "$chain" 2>/dev/null
		done
		for chain in $("$ipt" -t "$t" -S | awk '/^-N (KUBE-|CNI-)/ {print $2}'); do
			"$ipt" -t "$t" -X "$chain" 2>/dev/null
		done
	done
}
clean_chains iptables
clean_chains ip6tables

# --- sysctls, cgroups, directories -----------------------------------------------

if [[ -s $SYSCTL_SAVE ]]; then
	while IFS='=' read -r key value; do
		sysctl -qw "$key=$value" 2>/dev/null || echo "node: teardown: could not restore $key=$value" >&2
	done <"$SYSCTL_SAVE"
fi

for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/*/k8s.io /sys/fs/cgroup/kubepods /sys/fs/cgroup/k8s.io; do
	[[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
done

# The fixed paths only when the first node created them; otherwise only what
# is ours inside them.
if [[ -f $CREATED_LIST ]]; then
	while read -r p; do
		[[ -n $p ]] && rm -rf -- "$p"
	done <"$CREATED_LIST"
fi
find /var/log/containers -maxdepth 1 -lname "$STATE_DIR/*" -delete 2>/dev/null
rm -f /var/lib/cni/results/dcnode-* 2>/dev/null
rm -rf -- "$STATE_DIR" "$RUN_DIR"

# --- nothing left ---------------------------------------------------------------------

left=()
ip link show "$NODE_BRIDGE" >/dev/null 2>&1 && left+=("bridge $NODE_BRIDGE")
ip link show "$CNI_BRIDGE" >/dev/null 2>&1 && left+=("bridge $CNI_BRIDGE")
[[ -n $(ls /run/netns/cni-* 2>/dev/null) ]] && left+=("network namespaces $(ls /run/netns/cni-* | tr '\n' ' ')")
for ipt in iptables ip6tables; do
	for t in filter nat mangle raw; do
		n=$("$ipt" -t "$t" -S 2>/dev/null | grep -cE -- "^-N (KUBE-|CNI-)|$CONFINE_COMMENT")
		((n > 0)) && left+=("$n $ipt $t rules or chains")
	done
done
grep -qE " ($STATE_DIR|$RUN_DIR)(/| )" /proc/self/mountinfo && left+=("mounts under $STATE_DIR or $RUN_DIR")
[[ -n $(pids_in_kubepods) ]] && left+=("processes in the kubepods cgroups: $(pids_in_kubepods | tr '\n' ' ')")
[[ -n $(our_shims) ]] && left+=("containerd shims: $(our_shims | tr '\n' ' ')")
[[ -e $STATE_DIR || -e $RUN_DIR ]] && left+=("$STATE_DIR or $RUN_DIR")
if ((${#left[@]} > 0)); then
	printf 'node: teardown left: %s\n' "${left[@]}" >&2
	exit 1
fi
timeline "teardown: done in $((SECONDS - start))s (processes, containers, mounts, namespaces, bridges, chains, sysctls, cgroups, directories)"
