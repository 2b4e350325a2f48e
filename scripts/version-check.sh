#!/usr/bin/env bash
# Checks that the binary, the chart and the image agree on the project
# version (mk/release.mk: make version-check). Inputs from the environment:
# VERSION, DYNAMIC_CONFIG (the built binary), HELM (the helm command line),
# CHART_DIR, CHART_PACKAGE_DIR (what `make chart-package` wrote).
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
	echo "version-check: $*" >&2
	exit 1
}

case "$VERSION" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) fail "the version $VERSION is not a semantic version with a leading v" ;;
esac
chart_version="${VERSION#v}"
tag="${VERSION//+/_}"

got="$("$DYNAMIC_CONFIG" --version)"
[ "$got" = "dynamic-config $VERSION" ] || fail "dynamic-config --version says \"$got\", want \"dynamic-config $VERSION\""
got="$("$DYNAMIC_CONFIG" version | sed -n 1p)"
[ "$got" = "dynamic-config $VERSION" ] || fail "dynamic-config version says \"$got\", want \"dynamic-config $VERSION\""

pkg="$CHART_PACKAGE_DIR/dynamic-config-${chart_version}.tgz"
[ -f "$pkg" ] || fail "no $pkg (make chart-package)"
app="$(tar -xzOf "$pkg" dynamic-config/Chart.yaml | sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p')"
[ "$app" = "$chart_version" ] || fail "the packaged chart's appVersion is \"$app\", want \"$chart_version\""
tags="$(env $HELM template dynamic-config "$pkg" --namespace dynamic-config | grep -o '/dynamic-config:[^" ]*' | sed 's/.*://' | sort -u)"
[ "$tags" = "$tag" ] || fail "the packaged chart deploys the image tag(s) \"$tags\", want $tag"

# On a release tag, the committed chart and the changelog name the release.
if git describe --tags --exact-match --match 'v[0-9]*.[0-9]*.[0-9]*' HEAD >/dev/null 2>&1; then
	committed="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$CHART_DIR/Chart.yaml")"
	[ "$committed" = "$chart_version" ] || fail "release $VERSION: $CHART_DIR/Chart.yaml has appVersion \"$committed\""
	grep -q "^## \[$chart_version\]" CHANGELOG.md || fail "release $VERSION: CHANGELOG.md has no \"## [$chart_version]\" section"
fi
echo "version-check: binary, chart ($chart_version) and image tag ($tag) agree on $VERSION"
