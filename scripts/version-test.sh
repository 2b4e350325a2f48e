#!/usr/bin/env bash
# Proves scripts/version.sh's rules in a scratch repository: CHANGELOG.md decides the
# release, the commits after it are pre-releases of the next patch, the tags must agree
# with the CHANGELOG, uncommitted changes, a clone without the release commit, not a git
# checkout.
set -euo pipefail
script="$(cd "$(dirname "$0")" && pwd)/version.sh"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

repo="$work/repo"
mkdir -p "$repo/scripts"
cp "$script" "$repo/scripts/version.sh"
git_() { git -C "$repo" -c user.name=version-test -c user.email=version-test@localhost -c commit.gpgsign=false -c tag.gpgsign=false "$@"; }
git_ init -q
commit() {
	echo "$1" >"$repo/file"
	git_ add -A
	git_ commit -q -m "$1"
}
changelog() { # the release headings, newest first
	{
		echo "# Changelog"
		echo
		echo "## [Unreleased]"
		for r in "$@"; do
			echo
			echo "## [$r] - 2026-12-0${r##*.}"
		done
	} >"$repo/CHANGELOG.md"
}
sha() { git_ rev-parse --short=12 HEAD; }
expect() {
	local got rc=0
	got="$("$repo/scripts/version.sh" ${3:-} 2>"$work/stderr")" || rc=$?
	if [ $rc != 0 ] || [ "$got" != "$2" ]; then
		echo "version-test: $1: got \"$got\" (exit $rc, $(cat "$work/stderr")), want $2" >&2
		exit 1
	fi
	echo "version-test: $1: $got"
}
refuse() { # what, the message it must print, [flag]
	local rc=0
	"$repo/scripts/version.sh" ${3:-} >/dev/null 2>"$work/stderr" || rc=$?
	if [ $rc = 0 ] || ! grep -qF "$2" "$work/stderr"; then
		echo "version-test: $1: exit $rc, stderr \"$(cat "$work/stderr")\", want a failure saying \"$2\"" >&2
		exit 1
	fi
	echo "version-test: $1: refused ($(cat "$work/stderr"))"
}

changelog
commit one
commit two
expect "no release in CHANGELOG.md" "v0.0.0-dev+$(sha)"
expect "--release without a release" "" --release

changelog 1.4.2
commit "release 1.4.2"
release_commit=$(sha)
expect "the commit that adds ## [1.4.2]" "v1.4.2"
expect "--tag on the release commit" "v1.4.2" --tag
expect "--release" "v1.4.2" --release
commit three
commit four
expect "two commits after 1.4.2 (a pre-release of 1.4.3)" "v1.4.3-dev.2+$(sha)"
refuse "--tag after the release commit" "2 commit(s) after the release commit" --tag

git_ tag v1.4.2 "$release_commit"
git_ tag not-a-version
expect "a tag on the release commit agrees" "v1.4.3-dev.2+$(sha)"
git_ tag -d v1.4.2 >/dev/null
git_ tag v1.4.2 HEAD~1
refuse "a tag on another commit than its release's" "tag v1.4.2 is on $(git_ rev-parse --short=12 HEAD~1), but CHANGELOG.md's \"## [1.4.2]\" came with $release_commit"
git_ tag -f v1.4.2 "$release_commit" >/dev/null
git_ tag v1.4.9 HEAD
refuse "a tag CHANGELOG.md does not name" "tag v1.4.9 (on $(sha)) names no release in CHANGELOG.md"
git_ tag -d v1.4.9 >/dev/null

changelog 1.5.0 1.4.2
commit "release 1.5.0"
expect "the commit that adds ## [1.5.0]" "v1.5.0"
echo changed >"$repo/file"
expect "uncommitted changes on the release commit" "v1.5.0+$(sha).dirty"
refuse "--tag with uncommitted changes" "uncommitted changes" --tag
git_ checkout -q -- file
commit five
echo changed >"$repo/file"
expect "uncommitted changes after the release" "v1.5.1-dev.1+$(sha).dirty"
git_ checkout -q -- file

shallow="$work/shallow"
git clone -q --depth 1 "file://$repo" "$shallow"
got="$("$shallow/scripts/version.sh")"
want="v1.5.1-dev+$(sha)"
[ "$got" = "$want" ] || { echo "version-test: a shallow clone without the release commit: got $got, want $want" >&2; exit 1; }
echo "version-test: a shallow clone without the release commit: $got"

plain="$work/plain"
mkdir -p "$plain/scripts"
cp "$script" "$plain/scripts/version.sh"
cp "$repo/CHANGELOG.md" "$plain/CHANGELOG.md"
got="$(GIT_CEILING_DIRECTORIES="$work" "$plain/scripts/version.sh")"
[ "$got" = "v1.5.1-dev" ] || { echo "version-test: not a git checkout: got $got, want v1.5.1-dev" >&2; exit 1; }
echo "version-test: not a git checkout: $got"
