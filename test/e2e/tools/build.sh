#!/bin/sh
# Builds the pinned kube-apiserver, kube-controller-manager (the burst
# scenario's ReplicaSet controller) and the embedded etcd used by the e2e
# tests into $1 (a directory keyed by the Kubernetes version), and kubectl
# too when BUILD_KUBECTL=1 (a machine without one). Skips each binary that
# already exists.
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
if [ ! -x "$out/kube-apiserver" ]; then
  start=$(date +%s)
  go build -o "$out/kube-apiserver.tmp" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kube-apiserver
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
  echo "e2e tools: built kube-apiserver $k8s_version in $(( $(date +%s) - start ))s"
fi
if [ ! -x "$out/kube-controller-manager" ]; then
  start=$(date +%s)
  go build -o "$out/kube-controller-manager.tmp" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kube-controller-manager
  mv "$out/kube-controller-manager.tmp" "$out/kube-controller-manager"
  echo "e2e tools: built kube-controller-manager $k8s_version in $(( $(date +%s) - start ))s"
fi
if [ ! -x "$out/etcd" ]; then
  start=$(date +%s)
  go build -o "$out/etcd.tmp" -ldflags "-s -w" ./etcd
  mv "$out/etcd.tmp" "$out/etcd"
  echo "e2e tools: built etcd in $(( $(date +%s) - start ))s"
fi
if [ "${BUILD_KUBECTL:-0}" = 1 ] && [ ! -x "$out/kubectl" ]; then
  start=$(date +%s)
  go build -o "$out/kubectl.tmp" -ldflags "$ldflags" k8s.io/kubernetes/cmd/kubectl
  mv "$out/kubectl.tmp" "$out/kubectl"
  echo "e2e tools: built kubectl $k8s_version in $(( $(date +%s) - start ))s"
fi
