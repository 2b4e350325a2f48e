#!/usr/bin/env bash
# Prints the project version (semantic versioning, with a leading v) from
# `git describe`, for the binary (`dynamic-config version`), the image (its
# org.opencontainers.image.version label and tag) and the chart's appVersion:
#
#   on a release tag vX.Y.Z           vX.Y.Z
#   N commits after vX.Y.Z            vX.Y.(Z+1)-dev.N+<sha>   (sorts after vX.Y.Z, before the next patch)
#   no release tag (CI clones carry   v0.0.0-dev+<sha>
#   no tags)
#   not a git checkout                v0.0.0-dev
#
# Uncommitted changes to tracked files add ".dirty" to the build metadata.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! sha="$(git rev-parse --short=12 HEAD 2>/dev/null)"; then
	echo "v0.0.0-dev"
	exit 0
fi
dirty=""
if ! git diff --quiet HEAD -- 2>/dev/null; then
	dirty=".dirty"
fi
if desc="$(git describe --tags --long --match 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null)"; then
	# desc is <tag>-<commits since>-g<sha>
	rest="${desc%-g*}"
	commits="${rest##*-}"
	tag="${rest%-*}"
	if [ "$commits" = 0 ] && [ -z "$dirty" ]; then
		echo "$tag"
		exit 0
	fi
	core="${tag#v}"
	core="${core%%[-+]*}"
	IFS=. read -r major minor patch <<<"$core"
	if [ "$commits" = 0 ]; then
		echo "${tag}+${sha}${dirty}"
	else
		echo "v${major}.${minor}.$((patch + 1))-dev.${commits}+${sha}${dirty}"
	fi
	exit 0
fi
echo "v0.0.0-dev+${sha}${dirty}"
