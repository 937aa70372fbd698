#!/bin/bash
# bench/hotpath.sh: the trapped-call hot path, stage by stage (issue 6).
#
# usage: bench/hotpath.sh [--build DIR] [N]
# Prints, for a cached stat (/usr/bin/env) and an open+close of /etc/passwd:
#   - wall ns per call natively and under moat (median of 3 runs), and the
#     ratio;
#   - CPU ns per call of the whole process tree (perf stat task-clock, when
#     perf works here): on a loaded machine wall time mostly measures the
#     wait for a CPU, CPU time what the call costs;
#   - the floor: bench/unotify_floor (a supervisor that only answers), with
#     one and with two threads waiting in RECV, and the floor of an emulated
#     stat (unotify_floor N 1 stat: the path read, ID_VALID, the stat
#     written, from another process);
#   - the idle CPUs' halts per call during one moat run of each loop (cpuidle
#     entries past POLL, every CPU; wake41): on a VM a wake-up sent to a
#     halted vCPU costs tens of µs, one sent to a running vCPU a few, so a
#     run that halts ~once per call is a quiet machine's number, one at ~0 a
#     loaded machine's (the other work keeps the vCPUs awake);
#   - moat's per-stage means (MOAT_PROFILE=1, printed by the sentry at exit).
# As root it takes SCHED_OTHER and every online CPU first (as bench/run.sh:
# a runner's SCHED_IDLE makes the scheduler see every CPU running the loops
# as idle, and one CPU times the scheduler).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then . "$here/../tests/sched-normal.sh"; renice -n 0 -p $$ >/dev/null 2>&1; fi
build=$here/../build
n=20000
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	[0-9]*) n=$1 ;;
	*) echo "usage: bench/hotpath.sh [--build DIR] [N]" >&2; exit 2 ;;
	esac
	shift
done
moat=$build/cli/moat
[ -x "$build/bench/stat_loop" ] || { echo "hotpath: build first" >&2; exit 1; }
tmp=$(mktemp -d /tmp/moat-hotpath.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cp "$build"/bench/stat_loop "$build"/bench/open_loop "$tmp/"
uf=$build/bench/unotify_floor
[ -x "$uf" ] || uf=$here/../build/bench/unotify_floor # (an older build)
[ -x "$uf" ] && cp "$uf" "$tmp/"
chmod 755 "$tmp" "$tmp"/*
perf_ok=0
perf stat -x, -e task-clock true >/dev/null 2>&1 && perf_ok=1

wall() { # wall PREFIX... -- PROG ARGS: median ns per call of 3 runs
	local out=()
	for _ in 1 2 3; do out+=("$("$@" 2>/dev/null | awk '{print $2}')"); done
	printf '%s\n' "${out[@]}" | sort -g | sed -n 2p
}
cpu() { # cpu N CMD...: task-clock ns per call of the whole tree (median of 3)
	local k=$1 out=()
	shift
	[ $perf_ok = 1 ] || { echo n/a; return; }
	for _ in 1 2 3; do
		out+=("$(perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null | awk -F, -v k="$k" '/task-clock/ { printf "%.0f", $1 * 1e6 / k }')")
	done
	printf '%s\n' "${out[@]}" | sort -g | sed -n 2p
}
m=("$moat" run --bind "$tmp:$tmp:ro" --)
echo "moat hot path, $(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg), N=$n"
echo
echo "| call | native wall | moat wall | ratio | native CPU | moat CPU | ratio |"
echo "|---|---|---|---|---|---|---|"
for what in "stat:stat_loop $n /usr/bin/env" "open+close:open_loop $n /etc/passwd"; do
	label=${what%%:*}
	read -r -a cmd <<<"${what#*:}"
	nw=$(wall "$tmp/${cmd[0]}" "${cmd[@]:1}")
	mw=$(wall "${m[@]}" "$tmp/${cmd[0]}" "${cmd[@]:1}")
	nc=$(cpu "$n" "$tmp/${cmd[0]}" "${cmd[@]:1}")
	mc=$(cpu "$n" "${m[@]}" "$tmp/${cmd[0]}" "${cmd[@]:1}")
	r1=$(awk -v a="$mw" -v b="$nw" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "n/a" }')
	r2=$(awk -v a="$mc" -v b="$nc" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "n/a" }')
	echo "| $label | $nw ns | $mw ns | $r1 | $nc ns | $mc ns | $r2 |"
done
if [ -x "$tmp/unotify_floor" ]; then
f1=$(wall "$tmp/unotify_floor" "$n" 1)
f2=$(wall "$tmp/unotify_floor" "$n" 2)
c1=$(cpu "$n" "$tmp/unotify_floor" "$n" 1)
c2=$(cpu "$n" "$tmp/unotify_floor" "$n" 2)
echo "| floor: trap + answer, 1 waiter | | $f1 ns | | | $c1 ns | |"
echo "| floor: trap + answer, 2 waiters | | $f2 ns | | | $c2 ns | |"
fs=$(wall "$tmp/unotify_floor" "$n" 1 stat)
cs=$(cpu "$n" "$tmp/unotify_floor" "$n" 1 stat)
echo "| floor of a stat: + readv, ID_VALID, writev | | $fs ns | | | $cs ns | |"
fa=$(wall "$tmp/unotify_floor" "$n" 1 addfd)
ca=$(cpu "$n" "$tmp/unotify_floor" "$n" 1 addfd)
fk=$(wall "$tmp/unotify_floor" "$n" 1 addfd-keep)
ck=$(cpu "$n" "$tmp/unotify_floor" "$n" 1 addfd-keep)
echo "| floor of an open: ADDFD with SEND, close | | $fa ns | | | $ca ns | |"
echo "| the same, a spinning SCHED_IDLE keeper per CPU (wake41; CPU: theirs too) | | $fk ns | | | $ck ns | |"
fi
halts() { # cpuidle entries past POLL, summed over every CPU
	local t=0 d
	for d in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[1-9]*; do
		[ -r "$d/usage" ] && t=$((t + $(cat "$d/usage")))
	done
	echo $t
}
if [ -r /sys/devices/system/cpu/cpu0/cpuidle/state1/usage ]; then
	hl=
	for what in "stat_loop $n /usr/bin/env" "open_loop $n /etc/passwd"; do
		read -r -a cmd <<<"$what"
		h0=$(halts)
		"${m[@]}" "$tmp/${cmd[0]}" "${cmd[@]:1}" >/dev/null 2>&1
		h1=$(halts)
		hl+=" ${cmd[0]} $(awk -v a="$h0" -v b="$h1" -v k="$n" 'BEGIN { printf "%.3f", (b - a) / k }')"
	done
	echo
	echo "vCPU halts per call under moat (cpuidle, every CPU):$hl"
fi
echo
for what in "stat_loop $n /usr/bin/env" "open_loop $n /etc/passwd"; do
	read -r -a cmd <<<"$what"
	MOAT_PROFILE=1 "${m[@]}" "$tmp/${cmd[0]}" "${cmd[@]:1}" 2>&1 >/dev/null | grep -E '^(syscall|newfstatat|openat) '
	echo
done
