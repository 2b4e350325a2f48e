#!/bin/sh
# Builds the pinned kube-apiserver, kube-controller-manager (the burst
# scenario's ReplicaSet controller) and the embedded etcd used by the e2e
# tests into $1 (a directory keyed by the Kubernetes version), kubectl too
# when BUILD_KUBECTL=1 (a machine without one), and the node's kubelet,
# kube-scheduler, kube-proxy and CoreDNS when BUILD_NODE=1 (`make e2e-node`). Skips
# each binary that already exists. Each build writes a temporary file of its
# own and renames it, so two builds at once never write one file.
set -eu
# No -trimpath: the packages the e2e tests and the product share with
# kube-apiserver (k8s.io/api, apimachinery at the same versions) then hit the
# same build-cache entries.
out=${1:?usage: build.sh OUTDIR}
k8s_version=${K8S_VERSION:-v1.35.4}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cd "$here"
minor=$(echo "$k8s_version" | cut -d. -f2)
major=$(echo "$k8s_version" | cut -d. -f1 | tr -d v)
# Without the version stamp the server reports v0.0.0-master.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean"

# build NAME PACKAGE LDFLAGS [LABEL]: build PACKAGE into $out/NAME unless it exists.
build() {
  [ -x "$out/$1" ] && return 0
  start=$(date +%s)
  tmp="$out/.$1.tmp.$$"
  trap 'rm -f "$tmp"' EXIT
  go build -o "$tmp" -ldflags "$3" "$2"
  mv "$tmp" "$out/$1"
  trap - EXIT
  echo "e2e tools: built $1 ${4:-$k8s_version} in $(( $(date +%s) - start ))s"
}

build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager "$ldflags"
build etcd ./etcd "-s -w" "(embedded)"
if [ "${BUILD_KUBECTL:-0}" = 1 ]; then
  build kubectl k8s.io/kubernetes/cmd/kubectl "$ldflags"
fi
if [ "${BUILD_NODE:-0}" = 1 ]; then
  build kubelet k8s.io/kubernetes/cmd/kubelet "$ldflags"
  build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$ldflags"
  build kube-proxy k8s.io/kubernetes/cmd/kube-proxy "$ldflags"
  # The node's cluster DNS: CoreDNS, pinned in its own module (coredns/go.mod),
  # cached under its own version.
  coredns_version=$(cd coredns && go list -m -f '{{.Version}}' github.com/coredns/coredns)
  (cd coredns && build "coredns-$coredns_version" . "-s -w" "$coredns_version")
fi
