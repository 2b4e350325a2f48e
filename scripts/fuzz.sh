#!/usr/bin/env bash
# Runs every native fuzz target of the root module for FUZZTIME each.
set -euo pipefail
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-10s}"
cd "$(dirname "$0")/.."

# `go test -list` prints a package's targets, then "ok <package> …".
runs=()
targets=()
while read -r first second _; do
	case "$first" in
	Fuzz*) targets+=("$first") ;;
	ok)
		for target in "${targets[@]}"; do
			runs+=("$second $target")
		done
		targets=()
		;;
	esac
done < <("$GO" test -list '^Fuzz' ./...)

if [ "${#runs[@]}" -eq 0 ]; then
	echo "fuzz: no fuzz targets found"
	exit 0
fi
for run in "${runs[@]}"; do
	read -r pkg target <<<"$run"
	echo "== $pkg $target ($FUZZTIME)"
	"$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
done
echo "fuzz: ${#runs[@]} targets passed"
