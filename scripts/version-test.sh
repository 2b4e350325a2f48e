#!/usr/bin/env bash
# Proves scripts/version.sh's rules in a scratch repository: no tag, commits
# after a tag, on a tag, uncommitted changes, not a git checkout.
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
expect() {
	local got
	got="$("$repo/scripts/version.sh")"
	if [ "$got" != "$2" ]; then
		echo "version-test: $1: got $got, want $2" >&2
		exit 1
	fi
	echo "version-test: $1: $got"
}

commit one
commit two
commit three
sha() { git_ rev-parse --short=12 HEAD; }
expect "no release tag" "v0.0.0-dev+$(sha)"
git_ tag v1.4.2 HEAD~2
expect "two commits after v1.4.2" "v1.4.3-dev.2+$(sha)"
git_ tag not-a-version
expect "a tag that is not a version is ignored" "v1.4.3-dev.2+$(sha)"
git_ tag v1.5.0
expect "on the release tag v1.5.0" "v1.5.0"
echo changed >"$repo/file"
expect "uncommitted changes on a tag" "v1.5.0+$(sha).dirty"
git_ checkout -q -- file
commit four
echo changed >"$repo/file"
expect "uncommitted changes after a tag" "v1.5.1-dev.1+$(sha).dirty"

plain="$work/plain"
mkdir -p "$plain/scripts"
cp "$script" "$plain/scripts/version.sh"
got="$(GIT_CEILING_DIRECTORIES="$work" "$plain/scripts/version.sh")"
[ "$got" = "v0.0.0-dev" ] || { echo "version-test: not a git checkout: got $got, want v0.0.0-dev" >&2; exit 1; }
echo "version-test: not a git checkout: $got"
