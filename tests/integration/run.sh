#!/bin/bash
# tests/integration/run.sh: runs every tests/integration/*.sh against one moat binary.
# usage: tests/integration/run.sh --moat PATH --syscall-bin DIR [NAME...]
# Runs as whoever calls it; prints each test's lines and a summary in cases
# ("integration (user): N passed, M failed, K skipped", then every skip with its
# reason); exit 1 on any failure or when no case passed.
set -uo pipefail
# At nice 0 when root may get there (CI runs at nice 19): cases that check a
# nice value a guest set, or kept, need room below the one they start at.
# (and SCHED_OTHER on every online CPU: tests/sched-normal.sh, as run-all)
if [ "$(id -u)" = 0 ] && [ -z "${MOAT_TEST_RENICED:-}" ]; then . "$(dirname "$0")/../sched-normal.sh"; fi
if [ "$(id -u)" = 0 ] && [ "$(nice)" -gt 0 ] && [ -z "${MOAT_TEST_RENICED:-}" ]; then
	MOAT_TEST_RENICED=1 exec nice -n "-$(nice)" "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
MOAT=${MOAT:-} SYSCALL_BIN=${SYSCALL_BIN:-}
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--moat) MOAT=$2; shift ;;
	--syscall-bin) SYSCALL_BIN=$2; shift ;;
	*) names+=("$1") ;;
	esac
	shift
done
export MOAT SYSCALL_BIN
[ ${#names[@]} -eq 0 ] && for f in "$here"/*.sh; do
	n=$(basename "$f" .sh)
	case $n in lib | run) continue ;; esac
	names+=("$n")
done
[ -x "$MOAT" ] || { echo "FAIL integration: no moat binary at '$MOAT'"; exit 1; }
# Counted in cases: each test file ends with finish's "# FILE (user): N passed,
# M failed, K skipped"; a file that exits non-zero without a FAIL line, or never
# reaches finish (crash, timeout), counts as one failed case.
pass=0 fail=0 skip=0
failed=() skips=()
# this run's id, in every test's scratch directory name (lib.sh), so that the
# check below sees only this run's processes (not another run's on the machine)
export IT_RUN=r$$
# IT_JOBS (default 1) test files at a time: most of their time is waits
# (timeouts, sleeps, other processes), not CPU. Each file's output goes to
# its own log and is printed whole, with its time, when the file ends (one
# job: as it runs); the counting is the same either way. The files in
# IT_ALONE run with no other file beside them: their cases measure time or
# CPU shares (limits), start heavy programs with their own timeouts, or
# take all they can of the caller's per-user kernel budgets (isolation_host:
# pending signals, inotify instances, mq bytes, the host's AIO events; run
# beside isolation_fs, root's own timer_create got EAGAIN), or hold a case
# that stalls under CPU load (isolation_sentry
# moved_lock_holders_do_not_stall_locks: 80 s and a kill at 90 s, once
# each, with another file beside it on this loaded 2-CPU VM).
jobs=${IT_JOBS:-1}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "FAIL integration: IT_JOBS='$jobs' is not a count"; exit 1; }
alone=" ${IT_ALONE-limits runtimes workloads sysfuzz isolation_host isolation_sentry} "
od=$(mktemp -d /tmp/moat-integration.XXXXXX)
trap 'rm -rf "$od"' EXIT
# run_file NAME: the test, then the harness's checks; all of it in $od/NAME.log,
# its counts ("P F S") in $od/NAME.counts
run_file() {
	local n=$1 t0=$SECONDS out=$od/$1.log rc counts left i
	if [ "$jobs" = 1 ]; then
		timeout -k 10 "${IT_TIMEOUT:-900}" "$here/$n.sh" </dev/null 2>&1 | tee "$out"
		rc=${PIPESTATUS[0]}
	else
		timeout -k 10 "${IT_TIMEOUT:-900}" "$here/$n.sh" </dev/null >"$out" 2>&1
		rc=$?
	fi
	{
	echo "# $n: $((SECONDS - t0)) s"
	counts=$(sed -n 's/^# .*: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$out" | tail -1)
	if [ -z "$counts" ]; then
		echo "FAIL $n/finish: exit $rc before the test's summary line"
		counts="$(grep -c '^ok ' "$out") $(($(grep -c '^FAIL ' "$out") + 1)) $(grep -c '^skip ' "$out")"
	elif [ $rc -ne 0 ] && [ "$(echo "$counts" | cut -d' ' -f2)" = 0 ]; then
		echo "FAIL $n/exit: exit $rc with no failed case (no case passed?)"
		counts="${counts% * *} 1 ${counts##* }"
	fi
	# Nothing a test started may outlive it: a process whose command line
	# names the test's scratch directory (lib.sh: /tmp/moat-it-NAME.RUN.XXXXXX)
	# after a second's grace is left running (then ended here, by pid).
	for ((i = 0; i < 10; i++)); do
		left=$(pgrep -f "/tmp/moat-it-$n\.$IT_RUN\.[A-Za-z0-9]{6}(/| |$)" | tr '\n' ' ')
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -n "$left" ]; then
		echo "FAIL $n/nothing_left_running: $(ps -o pid=,args= -p "$(echo $left | tr " " ",")" 2>/dev/null | cut -c1-120 | head -3 | tr '\n' ';')"
		kill -9 $left 2>/dev/null
		counts="${counts%% *} $(($(echo "$counts" | cut -d' ' -f2) + 1)) ${counts##* }"
	fi
	} >"$od/$n.tail"
	echo "$counts" >"$od/$n.counts"
}
# account NAME: print what run_file left (the whole log unless it was shown
# as it ran) and add its counts
account() {
	local n=$1 p f s
	[ "$jobs" = 1 ] || cat "$od/$n.log"
	cat "$od/$n.tail"
	read -r p f s <"$od/$n.counts"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	[ "$f" -eq 0 ] || failed+=("$n")
	while IFS= read -r l; do skips+=("$l"); done < <(grep '^skip ' "$od/$n.log")
}
declare -A pid_of=()
# interrupted: the files still running end too (their timeout, in a process
# group of its own, passes the TERM on; each test's EXIT trap cleans up)
trap 'for p in "${pid_of[@]}"; do pkill -TERM -P "$p"; kill "$p"; done 2>/dev/null; exit 130' INT TERM
# reap [ALL]: account every file that has ended (ALL: wait for all of them)
reap() {
	local n
	while [ ${#pid_of[@]} -gt 0 ]; do
		for n in "${!pid_of[@]}"; do
			if [ ! -e "$od/$n.counts" ]; then
				kill -0 "${pid_of[$n]}" 2>/dev/null && continue
				# (ended without its counts: the harness itself was killed)
				[ -e "$od/$n.counts" ] || { echo "FAIL $n/harness: ended without its counts" >"$od/$n.tail"; echo "0 1 0" >"$od/$n.counts"; }
			fi
			wait "${pid_of[$n]}" 2>/dev/null
			unset "pid_of[$n]"
			account "$n"
		done
		[ "${1:-}" = all ] || [ ${#pid_of[@]} -ge "$jobs" ] || return 0
		[ ${#pid_of[@]} -gt 0 ] && wait -n 2>/dev/null
	done
}
# (several jobs: the longest files start first, so that no long one is left
# running alone at the end; the alone ones, last)
if [ "$jobs" != 1 ]; then
	long=" isolation_sentry isolation_tty isolation_race isolation_net isolation_identity lifecycle isolation_fs isolation_secrets isolation_cow isolation_proctree "
	first=() rest=() last=()
	for n in $long; do [[ " ${names[*]} " == *" $n "* ]] && first+=("$n"); done
	for n in "${names[@]}"; do
		[[ $long == *" $n "* ]] && continue
		if [[ $alone == *" $n "* ]]; then last+=("$n"); else rest+=("$n"); fi
	done
	names=(${first[@]+"${first[@]}"} ${rest[@]+"${rest[@]}"} ${last[@]+"${last[@]}"})
fi
for n in "${names[@]}"; do
	if [ "$jobs" = 1 ]; then
		run_file "$n"; account "$n"
	elif [[ $alone == *" $n "* ]]; then
		reap all; run_file "$n"; account "$n"
	else
		reap; run_file "$n" & pid_of[$n]=$!
	fi
done
reap all
echo "integration ($(id -un)): $pass passed, $fail failed, $skip skipped"
for s in "${skips[@]}"; do echo "  $s"; done
[ ${#failed[@]} -eq 0 ] || { echo "  failed in: ${failed[*]}"; exit 1; }
[ $pass -gt 0 ] || { echo "  no case ran: a tier that runs nothing fails"; exit 1; }
exit 0
