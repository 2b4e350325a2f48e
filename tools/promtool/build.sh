#!/usr/bin/env bash
# Builds promtool (Prometheus's rule checker and rule unit-test runner) from the Go module
# proxy, at the version this module's go.mod pins, into DIR/promtool, once per version. Its own
# module keeps Prometheus's large dependency graph out of the project's and the chart tools'.
set -euo pipefail
dir=${1:?usage: build.sh DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
mkdir -p "$dir"
v=$(go list -m -f '{{.Version}}' github.com/prometheus/prometheus)
out="$dir/promtool"
if [[ -x $out && -f $out.version && $(cat "$out.version") == "$v" ]]; then
  exit 0
fi
start=$SECONDS
go build -trimpath -ldflags "-s -w -X github.com/prometheus/common/version.Version=${v#v}" -o "$out" github.com/prometheus/prometheus/cmd/promtool
echo "$v" > "$out.version"
echo "promtool: built $v in $((SECONDS - start))s"
