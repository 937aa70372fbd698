#!/bin/bash
# tests/integration/run.sh: runs every tests/integration/*.sh against one moat binary.
# usage: tests/integration/run.sh --moat PATH --syscall-bin DIR [NAME...]
# Runs as whoever calls it; prints each test's lines and a summary in cases
# ("integration (user): N passed, M failed, K skipped", then every skip with its
# reason); exit 1 on any failure or when no case passed.
set -uo pipefail
# At nice 0 when root may get there (CI runs at nice 19): cases that check a
# nice value a guest set, or kept, need room below the one they start at.
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
out=$(mktemp /tmp/moat-integration.XXXXXX)
trap 'rm -f "$out"' EXIT
for n in "${names[@]}"; do
	t0=$SECONDS
	timeout -k 10 "${IT_TIMEOUT:-900}" "$here/$n.sh" </dev/null 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
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
	read -r p f s <<<"$counts"
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	[ "$f" -eq 0 ] || failed+=("$n")
	while IFS= read -r l; do skips+=("$l"); done < <(grep '^skip ' "$out")
done
echo "integration ($(id -un)): $pass passed, $fail failed, $skip skipped"
for s in "${skips[@]}"; do echo "  $s"; done
[ ${#failed[@]} -eq 0 ] || { echo "  failed in: ${failed[*]}"; exit 1; }
[ $pass -gt 0 ] || { echo "  no case ran: a tier that runs nothing fails"; exit 1; }
exit 0
