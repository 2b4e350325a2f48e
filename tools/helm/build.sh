#!/usr/bin/env bash
# Builds the chart tools from the Go module proxy (versions pinned in this module's go.mod)
# into DIR, once per version:
#   DIR/helm                       helm v3, with its version and the Kubernetes version of its
#                                  client libraries stamped in (as helm's own Makefile does)
#   DIR/plugins/unittest/          helm-unittest as a helm plugin directory (plugin.yaml +
#                                  binary): it cannot be `go install`ed because its go.mod has a
#                                  replace directive, which this module repeats
#   DIR/kustomize                  the kustomize CLI (the engine of `kubectl kustomize`)
# A tool that exists with the right version stamp is not rebuilt.
set -euo pipefail
dir=${1:?usage: build.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
mkdir -p "$dir/plugins/unittest"

version() { go list -m -f '{{.Version}}' "$1"; }
helm_v=$(version helm.sh/helm/v3)
untt_v=$(version github.com/helm-unittest/helm-unittest)
kust_v=$(version sigs.k8s.io/kustomize/kustomize/v5)
k8s_minor=$(version k8s.io/client-go | sed -E 's/^v0\.([0-9]+)\..*/\1/')
ld="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_v \
 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor \
 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$k8s_minor"

build() { # name stamp-value out package [ldflags]
  local name=$1 stamp=$2 out=$3 pkg=$4 flags=${5:-}
  if [[ -x $out && -f $out.version && $(cat "$out.version") == "$stamp" ]]; then
    return
  fi
  local start=$SECONDS
  go build -trimpath -ldflags "$flags" -o "$out" "$pkg"
  echo "$stamp" > "$out.version"
  echo "chart-tools: built $name $stamp in $((SECONDS - start))s"
}

build helm "$helm_v" "$dir/helm" helm.sh/helm/v3/cmd/helm "$ld"
build helm-unittest "$untt_v" "$dir/plugins/unittest/untt" github.com/helm-unittest/helm-unittest/cmd/helm-unittest "$ld"
build kustomize "$kust_v" "$dir/kustomize" sigs.k8s.io/kustomize/kustomize/v5 "-s -w"

cat > "$dir/plugins/unittest/plugin.yaml" <<YAML
name: "unittest"
version: "${untt_v#v}"
usage: "unittest for helm charts"
description: "helm-unittest ${untt_v}, built from the Go module proxy by tools/helm/build.sh"
ignoreFlags: false
command: "\$HELM_PLUGIN_DIR/untt"
YAML
