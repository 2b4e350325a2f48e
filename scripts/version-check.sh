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

# On a release commit (scripts/version.sh --tag: the commit that added CHANGELOG.md's newest
# "## [X.Y.Z]"), the committed chart names the release.
if release_tag="$(scripts/version.sh --tag 2>/dev/null)"; then
	for key in version appVersion; do
		committed="$(sed -n "s/^$key: *\"\{0,1\}\([^\" ]*\)\"\{0,1\}.*$/\1/p" "$CHART_DIR/Chart.yaml")"
		[ "$committed" = "${release_tag#v}" ] || fail "release $release_tag: $CHART_DIR/Chart.yaml has $key \"$committed\""
	done
fi
echo "version-check: binary, chart ($chart_version) and image tag ($tag) agree on $VERSION"
