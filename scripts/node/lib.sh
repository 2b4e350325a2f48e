# scripts/node/lib.sh — what every real-node script shares (`make e2e-node`,
# issue 39): the names and addresses the node owns, the timeline clock, and
# how a component is started and stopped by its PID. Sourced, not run.
#
# Everything the node creates on the host carries the prefix dcnode (bridges,
# directories, the iptables rule's comment, the node's name), so the teardown
# touches nothing that is not its own. The facts behind the settings are
# /work/shared/realnode (REPORT.md): a cgroup v1 host without systemd, root
# without CAP_SYS_RESOURCE, no loadable modules.

NODE_NAME=dcnode
# The node's address sits on a bridge with no ports (the kernel has no dummy
# link type); the Service and pod ranges are routed into it, so a packet
# kube-proxy did not translate dies there instead of taking the default route.
NODE_BRIDGE=dcnode0
NODE_IP=10.200.0.1
NODE_NET=10.200.0.0/24
CNI_BRIDGE=dcnodecni0
POD_CIDR=10.244.0.0/16
POD_SUBNET=10.244.0.0/24
POD_GATEWAY=10.244.0.1
SERVICE_CIDR=10.96.0.0/12
KUBERNETES_SERVICE_IP=10.96.0.1
CLUSTER_DNS_IP=$NODE_IP

# Fixed ports, all below the kernel's ephemeral range (32768-60999), so no
# test elsewhere on the machine that asked the kernel for a free port holds
# one; the API server and the kubelet on the node's own address.
API_PORT=16443
ETCD_CLIENT_URL=http://127.0.0.1:12379
ETCD_PEER_URL=http://127.0.0.1:12380
KCM_PORT=17257
SCHEDULER_PORT=17259
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
PROXY_HEALTHZ_PORT=10256
PROXY_METRICS_PORT=10249
DNS_HEALTH_ADDR=127.0.0.1:18080
DNS_READY_ADDR=127.0.0.1:18181

STATE_DIR=/var/lib/dcnode
RUN_DIR=/run/dcnode
PKI_DIR=$STATE_DIR/pki
CNI_CONF_DIR=$STATE_DIR/cni/net.d
CNI_BIN_DIR=/usr/lib/cni
CONTAINERD_SOCK=$RUN_DIR/containerd/containerd.sock
PID_DIR=$RUN_DIR/pids
SYSCTL_SAVE=$RUN_DIR/sysctl.orig
# What the host had before the first node came up: set once, restored by down.sh.
CREATED_LIST=$RUN_DIR/created
# The uplinks' interfaces are never touched; pods may not leave through them.
CONFINE_COMMENT=dcnode-confine

# The sysctls the node (or the kubelet, protectKernelDefaults: false) writes.
NODE_SYSCTLS=(
	net.ipv4.ip_forward
	vm.overcommit_memory
	vm.panic_on_oom
	kernel.panic
	kernel.panic_on_oops
	kernel.keys.root_maxkeys
	kernel.keys.root_maxbytes
	net.ipv4.conf.all.route_localnet
	net.bridge.bridge-nf-call-iptables
	net.bridge.bridge-nf-call-ip6tables
)

# Fixed paths that containerd (shim sockets), the kubelet (device plugins,
# pod resources, the /var/log/containers links) and libcni (its result
# cache) write whatever they are configured with.
NODE_FIXED_PATHS=(/run/netns /run/containerd /var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods /opt/containerd)

# Components in start order; down.sh stops them in reverse.
NODE_COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns)

# The work directory (logs, configs written per run, image tarballs) is the
# caller's: NODE_WORK_DIR. Logs outlive the teardown there.
: "${NODE_WORK_DIR:?NODE_WORK_DIR is not set}"
LOG_DIR=$NODE_WORK_DIR/logs

# NODE_T0 (epoch milliseconds) is the start of the run's timeline; each line
# says how long after it something happened.
: "${NODE_T0:=$(date +%s%3N)}"
export NODE_T0

# timeline MESSAGE: one line of the run's timeline.
timeline() {
	local now
	now=$(date +%s%3N)
	printf 'node: [%7.1fs] %s\n' "$(((now - NODE_T0) / 100))e-1" "$*"
}

fail() {
	echo "node: FAIL: $*" >&2
	exit 1
}

# wait_until SECONDS WHAT COMMAND...: run COMMAND every half second until it
# succeeds; fail naming WHAT after SECONDS.
wait_until() {
	local limit=$1 what=$2
	shift 2
	local deadline=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			fail "$what: not within ${limit}s"
		fi
		sleep 0.5
	done
}

# start_component NAME BINARY ARGS...: start BINARY in a session of its own
# (terminal signals never reach it; down.sh stops the components in order),
# log to $LOG_DIR/NAME.log, and record "PID BINARY" in $PID_DIR/NAME.
start_component() {
	local name=$1 bin=$2
	shift 2
	mkdir -p "$PID_DIR" "$LOG_DIR"
	setsid "$bin" "$@" </dev/null >"$LOG_DIR/$name.log" 2>&1 &
	local pid=$!
	echo "$pid $(readlink -f "$bin")" >"$PID_DIR/$name"
}

# component_alive NAME: the recorded PID still runs the recorded binary
# (a PID the kernel gave to another process since is not ours).
component_alive() {
	local f=$PID_DIR/$1 pid bin exe
	[[ -f $f ]] || return 1
	read -r pid bin <"$f"
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
	[[ ${exe% (deleted)} == "$bin" ]]
}

# stop_component NAME [GRACE]: SIGTERM the recorded PID, SIGKILL after GRACE
# seconds (default 10); forget it.
stop_component() {
	local name=$1 grace=${2:-10} f=$PID_DIR/$1 pid bin
	[[ -f $f ]] || return 0
	read -r pid bin <"$f"
	if component_alive "$name"; then
		kill -TERM "$pid" 2>/dev/null || true
		local deadline=$((SECONDS + grace))
		while component_alive "$name" && ((SECONDS < deadline)); do sleep 0.2; done
		if component_alive "$name"; then
			kill -KILL "$pid" 2>/dev/null || true
			while component_alive "$name"; do sleep 0.1; done
		fi
	fi
	rm -f "$f"
}

# our_shims: the PIDs of the containerd shims serving our socket (they
# outlive containerd): one grep over every command line, then the binary.
our_shims() {
	local f pid
	for f in $(grep -lsF -- "$CONTAINERD_SOCK" /proc/[0-9]*/cmdline); do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == */containerd-shim-runc-v2 ]] && echo "$pid"
	done
	return 0
}

# kubectl and ctr against the node.
node_kubectl() { "${KUBECTL:?KUBECTL is not set}" --kubeconfig "$PKI_DIR/admin.kubeconfig" "$@"; }
node_ctr() { ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }
