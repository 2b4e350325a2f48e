#!/usr/bin/env bash
# Prints the project version (semantic versioning, with a leading v) for the binary
# (`dynamic-config version`), the image (its org.opencontainers.image.version label and tag)
# and the chart (version and appVersion). CHANGELOG.md decides which release a commit
# belongs to; the git tags must agree with it (docs/releasing.md):
#
#   the commit that added CHANGELOG.md's newest "## [X.Y.Z]" heading   vX.Y.Z   (a release)
#   N commits after that commit                                        vX.Y.(Z+1)-dev.N+<sha>
#   a shallow clone that lacks that commit                             vX.Y.(Z+1)-dev+<sha>
#   no release heading in CHANGELOG.md                                 v0.0.0-dev+<sha>
#   not a git checkout                                                 vX.Y.(Z+1)-dev (v0.0.0-dev)
#
# Only a release has no pre-release part, so only a release is what `helm install` and
# `helm pull` take when no --version or --devel is given (Helm skips pre-releases); every
# other build sorts after the last release and before the next. Uncommitted changes to
# tracked files add ".dirty" to the build metadata (on a release commit: vX.Y.Z+<sha>.dirty,
# which make publish refuses).
#
# The tags agree when every version tag vA.B.C that HEAD contains sits on the commit that
# added "## [A.B.C]" to CHANGELOG.md; otherwise this script fails and says which tag is
# where. Tags are optional: a clone without them (CI's) gets the same version.
#
#   scripts/version.sh            the version
#   scripts/version.sh --release  the newest release CHANGELOG.md names (vX.Y.Z), or nothing
#   scripts/version.sh --tag      the tag this commit must carry (vX.Y.Z); fails unless HEAD
#                                 is a clean release commit (make release-tag)
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
case "$mode" in "" | --release | --tag) ;; *) echo "usage: scripts/version.sh [--release | --tag]" >&2; exit 2 ;; esac

die() {
	echo "version.sh: $*" >&2
	exit 1
}

# The newest release heading: "## [X.Y.Z]" or "## [X.Y.Z] - date" ([Unreleased] is not one).
release=""
if [ -f CHANGELOG.md ]; then
	release="$(sed -n 's/^## \[\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)\].*/\1/p' CHANGELOG.md | head -n 1)"
fi
if [ "$mode" = --release ]; then
	[ -z "$release" ] || echo "v$release"
	exit 0
fi
next=""
if [ -n "$release" ]; then
	IFS=. read -r major minor patch <<<"$release"
	next="v${major}.${minor}.$((patch + 1))"
fi

if ! sha="$(git rev-parse --short=12 HEAD 2>/dev/null)"; then
	[ "$mode" != --tag ] || die "not a git checkout"
	echo "${next:-v0.0.0}-dev"
	exit 0
fi
dirty=""
if ! git diff --quiet HEAD -- 2>/dev/null; then
	dirty=".dirty"
fi

# released_at X.Y.Z: the commit that added its heading (empty when this clone lacks it: in a
# shallow clone the oldest commit seems to add every line, so a boundary commit says nothing).
shallow="$(git rev-parse --git-path shallow)"
released_at() {
	local at
	at="$(git log --format=%H -S"## [$1]" -- CHANGELOG.md 2>/dev/null | tail -n 1)"
	if [ -n "$at" ] && [ -f "$shallow" ] && grep -qx "$at" "$shallow"; then
		at=""
	fi
	echo "$at"
}

# The tags HEAD contains must sit on their release commits.
while read -r tag; do
	[ -n "$tag" ] || continue
	v="${tag#v}"
	tagged="$(git rev-parse "$tag^{commit}")"
	if ! grep -q "^## \[${v//./\\.}\]" CHANGELOG.md 2>/dev/null; then
		die "tag $tag (on ${tagged:0:12}) names no release in CHANGELOG.md: add its \"## [$v]\" section in that commit, or delete the tag"
	fi
	at="$(released_at "$v")"
	if [ -n "$at" ] && [ "$at" != "$tagged" ]; then
		die "tag $tag is on ${tagged:0:12}, but CHANGELOG.md's \"## [$v]\" came with ${at:0:12}: move the tag (git tag -f $tag ${at:0:12}) or the heading"
	fi
done < <(git tag --merged HEAD --list 'v[0-9]*.[0-9]*.[0-9]*' 2>/dev/null | grep -E '^v[0-9]+\.[0-9]+\.[0-9]+$' || true)

if [ -z "$release" ]; then
	[ "$mode" != --tag ] || die "CHANGELOG.md names no release (a \"## [X.Y.Z] - date\" heading)"
	echo "v0.0.0-dev+${sha}${dirty}"
	exit 0
fi
at="$(released_at "$release")"
if [ -z "$at" ]; then
	[ "$mode" != --tag ] || die "this clone lacks the commit that added \"## [$release]\" (a shallow clone?)"
	echo "${next}-dev+${sha}${dirty}"
	exit 0
fi
commits="$(git rev-list --count "$at..HEAD")"
if [ "$mode" = --tag ]; then
	[ "$commits" = 0 ] || die "HEAD is $commits commit(s) after the release commit ${at:0:12} of $release: a release tag goes on the commit that adds its CHANGELOG.md heading"
	[ -z "$dirty" ] || die "uncommitted changes: commit or stash them first"
	echo "v$release"
	exit 0
fi
if [ "$commits" = 0 ]; then
	if [ -z "$dirty" ]; then
		echo "v$release"
	else
		echo "v${release}+${sha}${dirty}"
	fi
	exit 0
fi
echo "${next}-dev.${commits}+${sha}${dirty}"
