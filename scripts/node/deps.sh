#!/usr/bin/env bash
# scripts/node/deps.sh — the host packages the real node runs on (issue 39),
# from Debian's archive when one is missing: containerd and runc (crun cannot
# run on a cgroup v1/v2 hybrid host), the CNI plugins (bridge, host-local,
# loopback), iptables (kube-proxy) and conntrack. Needs root. Installing does
# not start containerd: the node runs its own, on its own socket.
set -euo pipefail

# package → a file it installs.
declare -A wanted=(
	[containerd]=/usr/bin/containerd
	[runc]=/usr/sbin/runc
	[containernetworking-plugins]=/usr/lib/cni/bridge
	[iptables]=/usr/sbin/iptables
	[conntrack]=/usr/sbin/conntrack
)
missing=()
for pkg in "${!wanted[@]}"; do
	[[ -x ${wanted[$pkg]} ]] || missing+=("$pkg")
done
if ((${#missing[@]} == 0)); then
	echo "node deps: containerd, runc, the CNI plugins, iptables and conntrack are installed"
	exit 0
fi
if [[ $(id -u) != 0 ]]; then
	echo "node deps: ${missing[*]} missing, and installing them needs root" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "node deps: ${missing[*]} missing and no apt-get to install them" >&2
	exit 1
fi
start=$SECONDS
echo "node deps: installing ${missing[*]} from the Debian archive"
apt-get update -qq
# policy-rc.d (when the machine has one) keeps the packaged containerd service
# from starting; nothing is started here in any case.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for pkg in "${missing[@]}"; do
	[[ -x ${wanted[$pkg]} ]] || { echo "node deps: $pkg installed but ${wanted[$pkg]} is missing" >&2; exit 1; }
done
echo "node deps: installed ${missing[*]} in $((SECONDS - start))s"
