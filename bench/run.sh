#!/bin/bash
# bench/run.sh: moat against native, bwrap, proot and runsc (ptrace platform) in ONE run.
#
# usage: bench/run.sh [--build DIR] [--quick] [--micro | --macro]
# Prints a markdown table (time per operation, and the ratio to native) and the
# idle-sandbox memory (PSS of the runtime's own processes, the guest excluded),
# then the macro workloads' table (bench/macro.sh, same flags). --micro: only
# the first table; --macro: only the second.
# A missing runtime prints n/a. Needs hyperfine (apt-get install hyperfine).
# runsc runs as root only, and only with --platform=ptrace (never kvm).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# every runtime at the machine's normal share (a runner's SCHED_IDLE on one
# CPU would time the scheduler, not the runtimes): tests/sched-normal.sh
if [ "$(id -u)" = 0 ]; then . "$top/tests/sched-normal.sh"; renice -n 0 -p $$ >/dev/null 2>&1; fi
build=$top/build
quick=0 micro=1 macro=1
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--quick) quick=1 ;;
	--micro) macro=0 ;;
	--macro) micro=0 ;;
	*) echo "usage: bench/run.sh [--build DIR] [--quick] [--micro | --macro]" >&2; exit 2 ;;
	esac
	shift
done
bdir=$build/bench
moat=$build/cli/moat
if [ $micro = 0 ]; then
	exec "$here/macro.sh" --build "$build" $([ $quick = 1 ] && echo --quick)
fi
command -v hyperfine >/dev/null || { echo "bench: hyperfine missing (apt-get install hyperfine)" >&2; exit 1; }
[ -x "$bdir/getpid_loop" ] || { echo "bench: build first ($bdir/getpid_loop missing)" >&2; exit 1; }
N_GETPID=1000000 N_OPEN=100000 N_STAT=100000 N_FORK=1000 RUNS=10
[ $quick = 1 ] && N_GETPID=100000 N_OPEN=10000 N_STAT=10000 N_FORK=100 RUNS=3

tmp=$(mktemp -d /tmp/moat-bench.XXXXXX)
chmod 755 "$tmp"
cp "$bdir"/getpid_loop "$bdir"/open_loop "$bdir"/stat_loop "$bdir"/forkexec_loop "$tmp/"
chmod 755 "$tmp"/*
pids=()
# runsc do (root) chowns the host's /dev/null to nobody:nogroup (see
# macro.sh): its owner is put back when the bench ends, before macro.sh
# (which records the owner at its own start) runs
devnull_owner=$(stat -c %u:%g /dev/null 2>/dev/null)
devnull_restore() {
	if [ -n "$devnull_owner" ] && [ "$(stat -c %u:%g /dev/null 2>/dev/null)" != "$devnull_owner" ]; then
		chown "$devnull_owner" /dev/null 2>/dev/null
	fi
}
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"; devnull_restore; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runtimes: name and command prefix. The bench programs are in $tmp, which moat
# sees through a read-only bind at the same path.
runtimes=(native moat bwrap proot runsc)
declare -A prefix avail
prefix[native]=""
prefix[moat]="$moat run --bind $tmp:$tmp:ro --"
prefix[bwrap]="bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --"
prefix[proot]="proot -r /"
prefix[runsc]="runsc --network=none --platform=ptrace do"
avail[native]=1
for r in moat bwrap proot runsc; do
	avail[$r]=0
	[ "$r" = runsc ] && [ "$(id -u)" != 0 ] && continue
	# shellcheck disable=SC2086
	timeout 60 ${prefix[$r]} /bin/true >/dev/null 2>&1 && avail[$r]=1
done

declare -A val
# 1. start-up of `true`, by hyperfine (mean seconds -> ms).
for r in "${runtimes[@]}"; do
	[ "${avail[$r]}" = 1 ] || continue
	hyperfine -N --warmup 2 --runs $((RUNS * 3)) --export-json "$tmp/true.$r.json" "${prefix[$r]} /bin/true" >/dev/null 2>&1 || continue
	val[true,$r]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"]*1e3)' "$tmp/true.$r.json")
done
# 2. loops: each program reports ns per call; median of 3 runs.
loop() { # loop KEY RUNTIME PROG N
	local out=() i v
	for i in 1 2 3; do
		# shellcheck disable=SC2086
		v=$(timeout 600 ${prefix[$2]} "$tmp/$3" "$4" 2>/dev/null | awk '{print $2}')
		[ -n "$v" ] && out+=("$v")
	done
	[ ${#out[@]} -gt 0 ] && val[$1,$2]=$(printf '%s\n' "${out[@]}" | sort -g | sed -n "$(((${#out[@]} + 1) / 2))p")
}
for r in "${runtimes[@]}"; do
	[ "${avail[$r]}" = 1 ] || continue
	loop getpid "$r" getpid_loop $N_GETPID
	loop open "$r" open_loop $N_OPEN
	loop stat "$r" stat_loop $N_STAT
	loop fork "$r" forkexec_loop $N_FORK
done
# 3. memory: PSS of the runtime's own processes for an idle guest (`sleep 30`), guest excluded.
descendants() { ps -e -o pid=,ppid= | awk -v root="$1" '{ parent[$1] = $2 } END { for (p in parent) { q = p; while (q in parent && q != root && q > 1) q = parent[q]; if (q == root) print p } }'; }
for r in moat bwrap proot runsc; do
	[ "${avail[$r]}" = 1 ] || continue
	# shellcheck disable=SC2086
	${prefix[$r]} /bin/sleep 30 </dev/null >/dev/null 2>&1 &
	p=$!
	pids+=("$p")
	sleep 2
	kb=0
	for q in $(descendants $p); do
		[ "$(cat /proc/$q/comm 2>/dev/null)" = sleep ] && continue
		k=$(awk '/^Pss:/ {print $2}' /proc/$q/smaps_rollup 2>/dev/null)
		kb=$((kb + ${k:-0}))
	done
	val[pss,$r]=$(awk -v k=$kb 'BEGIN { printf "%.2f", k / 1024 }')
	kids=$(descendants $p)
	kill -9 $p 2>/dev/null
	for q in $kids; do kill -9 $q 2>/dev/null; done
	{ wait $p; } 2>/dev/null
done

fmt() { # fmt KEY RUNTIME UNIT [SCALE]
	local v=${val[$1,$2]:-}
	[ -n "$v" ] && v=$(awk -v v="$v" -v s="${4:-1}" 'BEGIN { print v / s }')
	[ -z "$v" ] && { printf 'n/a'; return; }
	local n=${val[$1,native]:-}
	[ -n "$n" ] && n=$(awk -v v="$n" -v s="${4:-1}" 'BEGIN { print v / s }')
	if [ -n "$n" ] && [ "$2" != native ]; then
		awk -v v="$v" -v n="$n" -v u="$3" 'BEGIN { printf "%.4g %s (%.1fx)", v, u, v / n }'
	else
		awk -v v="$v" -v u="$3" 'BEGIN { printf "%.4g %s", v, u }'
	fi
}
echo "moat bench, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs"
echo
printf '| benchmark | %s |\n' "$(IFS='|'; echo "${runtimes[*]}" | sed 's/|/ | /g')"
printf '|---|%s\n' "$(for r in "${runtimes[@]}"; do printf -- '---|'; done)"
row() { local key=$1 label=$2 unit=$3 scale=${4:-1} r; printf '| %s |' "$label"; for r in "${runtimes[@]}"; do printf ' %s |' "$(fmt "$key" "$r" "$unit" "$scale")"; done; echo; }
row true '`true` start-up' ms
row getpid "getpid (N=$N_GETPID)" ns
row open "open+close (N=$N_OPEN)" ns
row stat "stat (N=$N_STAT)" ns
row fork "fork+exec /bin/true (N=$N_FORK)" µs 1000
printf '| idle sandbox PSS (runtime only) |'
for r in "${runtimes[@]}"; do
	if [ "$r" = native ]; then printf ' - |'; else printf ' %s |' "$( [ -n "${val[pss,$r]:-}" ] && echo "${val[pss,$r]} MiB" || echo n/a)"; fi
done
echo
devnull_restore
if [ $macro = 1 ]; then
	echo
	"$here/macro.sh" --build "$build" $([ $quick = 1 ] && echo --quick)
fi
