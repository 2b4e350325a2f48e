#!/usr/bin/env bash
# scripts/node/measure.sh [SECONDS] — what the node costs at rest: the RSS of
# every process of the cluster now (the components by their recorded PIDs,
# containerd's shims, every process in the kubelet's pod cgroups) and their
# CPU over SECONDS (default 20), as a share of one core. One line per
# component, then the total (the last line).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/node/lib.sh
. "$here/lib.sh"
window=${1:-20}
hz=$(getconf CLK_TCK)

# groups: "NAME PID" lines.
groups() {
	local c pid bin p
	for c in "${NODE_COMPONENTS[@]}"; do
		[[ -f $PID_DIR/$c ]] || continue
		read -r pid bin <"$PID_DIR/$c"
		echo "$c $pid"
	done
	our_shims | sed 's/^/shims /'
	for d in /sys/fs/cgroup/pids/kubepods; do
		[[ -d $d ]] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | sed 's/^/pods /'
	done
	return 0
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

declare -A before rss cpu
mapfile -t list < <(groups)
for l in "${list[@]}"; do
	before[${l#* }]=$(cpu_ticks "${l#* }")
done
sleep "$window"
order=()
for l in "${list[@]}"; do
	name=${l% *} pid=${l#* }
	[[ -v rss[$name] ]] || { order+=("$name"); rss[$name]=0; cpu[$name]=0; }
	rss[$name]=$((rss[$name] + $(rss_kib "$pid")))
	cpu[$name]=$((cpu[$name] + $(cpu_ticks "$pid") - before[$pid]))
done
total_rss=0 total_cpu=0
for name in "${order[@]}"; do
	awk -v n="$name" -v r="${rss[$name]}" -v c="${cpu[$name]}" -v hz="$hz" -v w="$window" \
		'BEGIN {printf "idle %-24s RSS %6.1f MiB  CPU %5.2f %% of a core\n", n, r / 1024, c * 100 / hz / w}'
	total_rss=$((total_rss + rss[$name]))
	total_cpu=$((total_cpu + cpu[$name]))
done
awk -v r="$total_rss" -v c="$total_cpu" -v hz="$hz" -v w="$window" -v n="${#list[@]}" \
	'BEGIN {printf "idle cluster total: RSS %.0f MiB, CPU %.1f %% of one core over %ss (%d processes)\n", r / 1024, c * 100 / hz / w, w, n}'
