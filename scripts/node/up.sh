#!/usr/bin/env bash
# scripts/node/up.sh — brings up a real single-node Kubernetes on this machine
# (`make e2e-node`, issue 39): etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, containerd + runc with the bridge CNI, kubelet, kube-proxy
# (iptables) and CoreDNS answering cluster.local only. Prints one timeline
# line per stage. Run scripts/node/down.sh first (run.sh does): up.sh
# expects a clean host.
#
# Needs root and, in the environment: NODE_WORK_DIR (logs, image tarballs),
# NODE_TOOLS_DIR (kube-apiserver, kube-controller-manager, etcd, kubelet,
# kube-scheduler, kube-proxy), NODE_COREDNS (the CoreDNS binary), KUBECTL,
# NODE_IMAGES (image tarballs, space-separated, imported into containerd's
# k8s.io namespace: FILE a docker archive naming its image, FILE@BASE an OCI
# layout whose tag is joined to the repository BASE).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/node/lib.sh
. "$here/lib.sh"

: "${NODE_TOOLS_DIR:?}" "${NODE_COREDNS:?}" "${KUBECTL:?}" "${NODE_IMAGES:?}"
[[ $(id -u) == 0 ]] || fail "the node needs root (containerd, kubelet, bridges, iptables)"
for b in kube-apiserver kube-controller-manager etcd kubelet kube-scheduler kube-proxy; do
	[[ -x $NODE_TOOLS_DIR/$b ]] || fail "$NODE_TOOLS_DIR/$b is missing (make e2e-tools with BUILD_NODE=1)"
done
[[ -x $NODE_COREDNS ]] || fail "$NODE_COREDNS is missing"
[[ ! -e $RUN_DIR/up ]] || fail "$RUN_DIR/up exists: a node is up (or was killed); run scripts/node/down.sh first"

mkdir -p "$STATE_DIR" "$RUN_DIR" "$PID_DIR" "$LOG_DIR" "$PKI_DIR" "$CNI_CONF_DIR" "$STATE_DIR/config"
: >"$RUN_DIR/up"
touch "$CREATED_LIST"

# --- the host: sysctls, network ----------------------------------------------

host_prepare() {
	# The values before the first node: kept across a killed run, restored by down.sh.
	if [[ ! -s $SYSCTL_SAVE ]]; then
		local k
		for k in "${NODE_SYSCTLS[@]}"; do
			[[ -e /proc/sys/${k//.//} ]] && echo "$k=$(sysctl -n "$k")"
		done >"$SYSCTL_SAVE"
	fi
	sysctl -qw net.ipv4.ip_forward=1 # pod -> ClusterIP -> pod is routed through the host
	sysctl -qw net.bridge.bridge-nf-call-iptables=1

	# Nothing of ours may already overlap the host's own routes.
	local net
	for net in "$NODE_NET" "$POD_CIDR" "$SERVICE_CIDR"; do
		if ip -4 route show to match "${net%/*}" | grep -v '^default' | grep -q .; then
			fail "the host already routes $net: $(ip -4 route show to match "${net%/*}" | grep -v '^default')"
		fi
	done
	# Paths the kubelet, containerd and libcni use whatever they are told:
	# down.sh removes each one that did not exist before the first node.
	local p
	for p in "${NODE_FIXED_PATHS[@]}"; do
		[[ -e $p ]] || grep -qx "$p" "$CREATED_LIST" || echo "$p" >>"$CREATED_LIST"
	done

	ip link add "$NODE_BRIDGE" type bridge
	ip addr add "$NODE_IP/24" dev "$NODE_BRIDGE"
	ip link set "$NODE_BRIDGE" up
	ip route add "$SERVICE_CIDR" dev "$NODE_BRIDGE"
	ip route add "$POD_CIDR" dev "$NODE_BRIDGE"
	# Pods have no default route; should one ever appear, nothing from a pod
	# leaves through anything but the pod bridge.
	iptables -t mangle -A FORWARD -s "$POD_CIDR" ! -o "$CNI_BRIDGE" -m comment --comment "$CONFINE_COMMENT" -j DROP
}

# --- PKI: one CA, the API server's pair, its client pair for the kubelet ------

pki() {
	local d=$PKI_DIR
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=dcnode-ca" \
		-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" \
		-keyout "$d/apiserver.key" -out "$d/apiserver.csr" 2>/dev/null
	printf 'subjectAltName=IP:%s,IP:%s,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' \
		"$NODE_IP" "$KUBERNETES_SERVICE_IP" >"$d/apiserver.ext"
	openssl x509 -req -in "$d/apiserver.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 2 -extfile "$d/apiserver.ext" -out "$d/apiserver.crt" 2>/dev/null
	# The API server calls the kubelet (logs, exec) as a system:masters user.
	openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" \
		-keyout "$d/apiserver-kubelet-client.key" -out "$d/apiserver-kubelet-client.csr" 2>/dev/null
	printf 'extendedKeyUsage=clientAuth\n' >"$d/client.ext"
	openssl x509 -req -in "$d/apiserver-kubelet-client.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 2 -extfile "$d/client.ext" -out "$d/apiserver-kubelet-client.crt" 2>/dev/null
	openssl genrsa -out "$d/sa.key" 2048 2>/dev/null
	openssl rsa -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null

	# Every client of the API server authenticates with a static token:
	# kubeconfig name, user, groups.
	local name user groups token
	: >"$d/tokens.csv"
	while IFS='|' read -r name user groups; do
		token=$(openssl rand -hex 24)
		echo "$token,$user,$name${groups:+,\"$groups\"}" >>"$d/tokens.csv"
		kubeconfig "$name" "$token"
	done <<EOF
admin|admin|system:masters
kubelet|system:node:$NODE_NAME|system:nodes
kube-controller-manager|system:kube-controller-manager|
kube-scheduler|system:kube-scheduler|
kube-proxy|system:kube-proxy|
coredns|dcnode:coredns|
EOF
}

# kubeconfig NAME TOKEN: $PKI_DIR/NAME.kubeconfig
kubeconfig() {
	cat >"$PKI_DIR/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NODE_NAME
  cluster:
    server: https://$NODE_IP:$API_PORT
    certificate-authority: $PKI_DIR/ca.crt
users:
- name: $1
  user:
    token: $2
contexts:
- name: $NODE_NAME
  context: {cluster: $NODE_NAME, user: $1}
current-context: $NODE_NAME
EOF
}

# --- control plane ------------------------------------------------------------

control_plane() {
	local t=$NODE_TOOLS_DIR
	start_component etcd "$t/etcd" --data-dir "$STATE_DIR/etcd" \
		--listen-client-url "$ETCD_CLIENT_URL" --listen-peer-url "$ETCD_PEER_URL"
	wait_until 60 "etcd health" curl -fsS "$ETCD_CLIENT_URL/health"
	timeline "etcd ready"

	start_component kube-apiserver "$t/kube-apiserver" \
		--etcd-servers "$ETCD_CLIENT_URL" \
		--bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$API_PORT" \
		--tls-cert-file "$PKI_DIR/apiserver.crt" --tls-private-key-file "$PKI_DIR/apiserver.key" \
		--client-ca-file "$PKI_DIR/ca.crt" --token-auth-file "$PKI_DIR/tokens.csv" \
		--service-account-key-file "$PKI_DIR/sa.pub" --service-account-signing-key-file "$PKI_DIR/sa.key" \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-cluster-ip-range "$SERVICE_CIDR" \
		--authorization-mode Node,RBAC \
		--kubelet-client-certificate "$PKI_DIR/apiserver-kubelet-client.crt" \
		--kubelet-client-key "$PKI_DIR/apiserver-kubelet-client.key" \
		--kubelet-preferred-address-types InternalIP \
		--profiling=false
	wait_until 120 "kube-apiserver /readyz" node_kubectl get --raw /readyz
	timeline "kube-apiserver ready (https://$NODE_IP:$API_PORT)"

	start_component kube-controller-manager "$t/kube-controller-manager" \
		--kubeconfig "$PKI_DIR/kube-controller-manager.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
		--service-account-private-key-file "$PKI_DIR/sa.key" --root-ca-file "$PKI_DIR/ca.crt" \
		--use-service-account-credentials=true --service-cluster-ip-range "$SERVICE_CIDR" \
		--profiling=false
	start_component kube-scheduler "$t/kube-scheduler" \
		--kubeconfig "$PKI_DIR/kube-scheduler.kubeconfig" \
		--bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false --profiling=false
	# CoreDNS reads Services, EndpointSlices and Namespaces, nothing else.
	node_kubectl apply -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "dcnode:coredns"}
rules:
- apiGroups: [""]
  resources: [services, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "dcnode:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "dcnode:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "dcnode:coredns"}
EOF
}

# --- the node: containerd, images, kubelet, kube-proxy, DNS -------------------

containerd_up() {
	cat >"$CNI_CONF_DIR/10-dcnode.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "dcnode",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE_DIR/cni-ipam",
        "ranges": [[{"subnet": "$POD_SUBNET", "gateway": "$POD_GATEWAY"}]],
        "routes": [{"dst": "$POD_CIDR"}, {"dst": "$SERVICE_CIDR"}, {"dst": "$NODE_NET"}]
      }
    }
  ]
}
EOF
	cat >"$STATE_DIR/config/containerd.toml" <<EOF
# containerd (Debian 12: 1.6) for the real node; everything under $STATE_DIR and $RUN_DIR.
version = 2
root = "$STATE_DIR/containerd"
state = "$RUN_DIR/containerd"
[grpc]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE_DIR/containerd-opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/dcnode/pause:1"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  disable_apparmor = true
  # Root has no CAP_SYS_RESOURCE here, so runc cannot lower oom_score_adj (the
  # sandbox asks for -998): clamp every request to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1
EOF
	start_component containerd /usr/bin/containerd --config "$STATE_DIR/config/containerd.toml"
	wait_until 30 "containerd" node_ctr version
	timeline "containerd ready"

	local spec file
	for spec in $NODE_IMAGES; do
		if [[ $spec != *@* ]]; then
			node_ctr images import "$spec" >/dev/null
		else
			file=${spec%@*}
			node_ctr images import --base-name "${spec#*@}" "$file" >/dev/null
		fi
	done
	timeline "images imported: $(node_ctr images ls -q | grep -v '^sha256:' | tr '\n' ' ')"
}

kubelet_up() {
	cat >"$STATE_DIR/config/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false            # 1.35 refuses cgroup v1 without it
cgroupDriver: cgroupfs         # no systemd here
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI_DIR/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [$CLUSTER_DNS_IP]
resolvConf: ""                 # pods get the cluster DNS only, no upstream
podLogsDirectory: $STATE_DIR/pod-logs
volumePluginDir: $STATE_DIR/kubelet-plugins
staticPodPath: ""
protectKernelDefaults: false   # it writes vm/kernel sysctls; down.sh restores them
failSwapOn: true
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
serializeImagePulls: false
rotateCertificates: false
serverTLSBootstrap: false
nodeStatusReportFrequency: 10s
EOF
	start_component kubelet "$NODE_TOOLS_DIR/kubelet" \
		--config "$STATE_DIR/config/kubelet.yaml" \
		--kubeconfig "$PKI_DIR/kubelet.kubeconfig" \
		--root-dir "$STATE_DIR/kubelet" --cert-dir "$STATE_DIR/kubelet/pki" \
		--hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
	wait_until 120 "node $NODE_NAME Ready" node_ready
	timeline "node Ready ($NODE_NAME, $NODE_IP, $(node_kubectl get node "$NODE_NAME" -o jsonpath='{.status.nodeInfo.containerRuntimeVersion}'))"
}

node_ready() {
	[[ $(node_kubectl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

proxy_up() {
	cat >"$STATE_DIR/config/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
clientConnection:
  kubeconfig: $PKI_DIR/kube-proxy.kubeconfig
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
nodePortAddresses: ["$NODE_IP/32"]
iptables:
  localhostNodePorts: false    # else it sets net.ipv4.conf.all.route_localnet=1
  syncPeriod: 30s
  minSyncPeriod: 1s
conntrack:
  maxPerCore: 0                # leave nf_conntrack_max and the timeouts alone
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
	start_component kube-proxy "$NODE_TOOLS_DIR/kube-proxy" --config "$STATE_DIR/config/kube-proxy.yaml"
	wait_until 60 "kube-proxy healthz" curl -fsS "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz"
	timeline "kube-proxy ready (iptables)"
}

dns_up() {
	cat >"$STATE_DIR/config/Corefile" <<EOF
# cluster.local only: no forwarder, so no name outside the cluster resolves.
cluster.local:53 {
    bind $CLUSTER_DNS_IP
    ready $DNS_READY_ADDR
    health $DNS_HEALTH_ADDR
    errors
    cache 5
    kubernetes cluster.local {
        kubeconfig $PKI_DIR/coredns.kubeconfig $NODE_NAME
        pods disabled
    }
}
EOF
	start_component coredns "$NODE_COREDNS" -conf "$STATE_DIR/config/Corefile"
	wait_until 60 "CoreDNS ready" curl -fsS "http://$DNS_READY_ADDR/ready"
	timeline "CoreDNS ready ($CLUSTER_DNS_IP:53, cluster.local only)"
}

host_prepare
pki
timeline "host prepared (bridge $NODE_BRIDGE $NODE_IP, PKI)"
control_plane
containerd_up
kubelet_up
proxy_up
dns_up
wait_until 60 "the default ServiceAccount" node_kubectl -n default get serviceaccount default
wait_until 60 "kube-controller-manager healthz" curl -fsSk "https://127.0.0.1:$KCM_PORT/healthz"
wait_until 60 "kube-scheduler healthz" curl -fsSk "https://127.0.0.1:$SCHEDULER_PORT/healthz"
timeline "cluster up (controller-manager and scheduler healthy, default ServiceAccount)"
