#!/bin/bash
# tests/syscalls/run.sh: the differential tier (gVisor's syscall_test, PRoot's cmp).
#
# Every program of tests/syscalls/ (race_* excepted: they are isolation probes,
# run by tests/integration/isolation_race.sh) runs twice:
#   native:  BIN/<name> SCRATCH                              must exit 0 (or 77 = skip)
#   moat:    moat run --bind BIN:/t:ro --bind SCRATCH:/work:rw --workdir /work
#                     --env MOAT_GUEST=1 -- /t/<name> /work   stdout and exit status must equal native's
#
# usage: tests/syscalls/run.sh [--native-only] [--bin DIR] [--moat PATH] [--audit-dir DIR] [NAME...]
#   --bin DIR    the built test programs (default: build/tests/syscalls)
#   --moat PATH  the moat binary (default: build/cli/moat, or $MOAT)
#   --audit-dir DIR  moat runs each with --audit DIR/NAME.audit and DIR/results
#                gets "NAME pass|fail|skip DIR/NAME.audit" per program: what
#                tests/compat/syscalls-page.sh --from DIR reads (one run for both)
# Runs as whoever calls it (tests/run-all.sh calls it as root and as an unprivileged user).
set -uo pipefail
# At nice 0 when root may get there (CI runs at nice 19): cases that check a
# nice value a guest set, or kept, need room below the one they start at.
# (and SCHED_OTHER on every online CPU: tests/sched-normal.sh, as run-all)
if [ "$(id -u)" = 0 ] && [ -z "${MOAT_TEST_RENICED:-}" ]; then . "$(dirname "$0")/../sched-normal.sh"; fi
if [ "$(id -u)" = 0 ] && [ "$(nice)" -gt 0 ] && [ -z "${MOAT_TEST_RENICED:-}" ]; then
	MOAT_TEST_RENICED=1 exec nice -n "-$(nice)" "$0" "$@"
fi

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${SYSCALL_BIN:-$top/build/tests/syscalls}
moat=${MOAT:-$top/build/cli/moat}
native_only=0
audit_dir=""
per_test_timeout=${TEST_TIMEOUT:-180}
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--native-only) native_only=1 ;;
	--bin) bin=$2; shift ;;
	--moat) moat=$2; shift ;;
	--audit-dir) audit_dir=$2; shift ;;
	-h|--help) sed -n '2,18p' "$0"; exit 0 ;;
	*) names+=("$1") ;;
	esac
	shift
done
bin=$(cd "$bin" && pwd) || { echo "FAIL syscalls: no test binaries in $bin (build first)"; exit 1; }
if [ ${#names[@]} -eq 0 ]; then
	for src in "$here"/*.c; do
		n=$(basename "$src" .c)
		case $n in race_*|probe_*) continue ;; esac
		names+=("$n")
	done
fi

if [ -n "$audit_dir" ]; then
	rm -rf "$audit_dir" && mkdir -p "$audit_dir" && audit_dir=$(cd "$audit_dir" && pwd) && : >"$audit_dir/results" ||
		{ echo "FAIL syscalls: cannot make $audit_dir"; exit 1; }
fi
# page NAME VERDICT: the program's line for syscalls-page.sh --from (race_* and
# probe_* are not conformance programs there)
page() {
	[ -n "$audit_dir" ] || return 0
	case $1 in race_*|probe_*) return 0 ;; esac
	echo "$1 $2 $audit_dir/$1.audit" >>"$audit_dir/results"
}

# The programs' expectations (modes of what they create, another user
# reaching it: chown_nonowner, owner_root, drop_rules ...) are written for
# umask 022; a runner's 077 (tests/ci-env.sh) failed nine of them natively.
# Native and moat runs both get 022 (the caller's umask reaching the guest
# is the umask program's and cli's own cases).
umask 022
work=$(mktemp -d /tmp/moat-syscalls.XXXXXX)
chmod 755 "$work"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# Counted in cases: each "ok CASE" line of a native run is one case natively and
# one under moat (passed when moat prints the same line); a FAIL line, a line
# moat adds, a differing exit status, or a program that does not run at all is
# one failed case; a program that exits 77 natively is one skipped case.
pass=0 fail=0 skip=0
failed=()
note_fail() { fail=$((fail + ${2:-1})); failed+=("$1"); }

for n in "${names[@]}"; do
	prog=$bin/$n
	if [ ! -x "$prog" ]; then
		echo "FAIL native/$n: $prog not built"
		note_fail "native/$n"
		continue
	fi
	scratch=$work/$n
	mkdir -p "$scratch/native" "$scratch/guest"
	timeout -k 5 "$per_test_timeout" "$prog" "$scratch/native" >"$scratch/native.out" 2>"$scratch/native.err" </dev/null
	nrc=$?
	nok=$(grep -c '^ok ' "$scratch/native.out")
	nbad=$(grep -c '^FAIL ' "$scratch/native.out")
	if [ $nrc -eq 77 ]; then
		why="natively: $(head -1 "$scratch/native.out")"
		echo "skip $n ($why)"
		page "$n" skip
		skip=$((skip + 1))
		continue
	elif [ $nrc -ne 0 ] || [ "$nok" -eq 0 ]; then
		echo "FAIL native/$n: exit $nrc, $nok cases ok, $nbad failed"
		grep -v '^ok ' "$scratch/native.out" "$scratch/native.err" | sed 's/^/    /' | head -20
		pass=$((pass + nok))
		page "$n" fail
		note_fail "native/$n" $((nbad > 0 ? nbad : 1))
		continue
	fi
	echo "ok native/$n ($nok cases)"
	pass=$((pass + nok))
	[ $native_only = 1 ] && continue

	if [ ! -x "$moat" ]; then
		echo "FAIL moat/$n: no moat binary at $moat"
		note_fail "moat/$n" "$nok"
		continue
	fi
	audit=()
	[ -n "$audit_dir" ] && audit=(--audit "$audit_dir/$n.audit" --audit-rate 0 --audit-max-bytes 0)
	timeout -k 5 "$per_test_timeout" "$moat" run "${audit[@]}" --bind "$bin:/t:ro" --bind "$scratch/guest:/work:rw" \
		--workdir /work --env MOAT_GUEST=1 -- "/t/$n" /work \
		>"$scratch/moat.out" 2>"$scratch/moat.err" </dev/null
	mrc=$?
	# cases: native "ok" lines that moat printed too (as a set: order is compared below)
	same=$(grep '^ok ' "$scratch/native.out" | sort | comm -12 - <(sort "$scratch/moat.out") | wc -l)
	extra=$(sort "$scratch/moat.out" | comm -13 <(sort "$scratch/native.out") - | wc -l)
	bad=$((nok - same + extra))
	[ $mrc -ne $nrc ] && bad=$((bad + 1))
	if [ $bad -eq 0 ] && ! cmp -s "$scratch/native.out" "$scratch/moat.out"; then
		bad=1 # same lines, another order
	fi
	pass=$((pass + same))
	if [ $bad -eq 0 ]; then
		echo "ok moat/$n ($same cases)"
		page "$n" pass
	else
		page "$n" fail
		echo "FAIL moat/$n: exit $mrc (native $nrc), $same of $nok cases the same; differences (- native, + moat):"
		diff "$scratch/native.out" "$scratch/moat.out" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/' | head -30
		[ -s "$scratch/moat.err" ] && sed 's/^/    stderr: /' "$scratch/moat.err" | head -10
		note_fail "moat/$n" "$bad"
	fi
done

echo "syscalls ($(id -un)): $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || { printf '  failed: %s\n' "${failed[*]}"; exit 1; }
[ $pass -gt 0 ] || { echo "  no case ran: a tier that runs nothing fails"; exit 1; }
exit 0
