#!/bin/bash
# tests/syscalls/run.sh: the differential tier (gVisor's syscall_test, PRoot's cmp).
#
# Every program of tests/syscalls/ (race_* excepted: they are isolation probes,
# run by tests/integration/isolation_race.sh) runs twice:
#   native:  BIN/<name> SCRATCH                              must exit 0 (or 77 = skip)
#   moat:    moat run --bind BIN:/t:ro --bind SCRATCH:/work:rw --workdir /work
#                     --env MOAT_GUEST=1 -- /t/<name> /work   stdout and exit status must equal native's
#
# usage: tests/syscalls/run.sh [--native-only] [--bin DIR] [--moat PATH] [NAME...]
#   --bin DIR    the built test programs (default: build/tests/syscalls)
#   --moat PATH  the moat binary (default: build/cli/moat, or $MOAT)
# Runs as whoever calls it (tests/run-all.sh calls it as root and as an unprivileged user).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bin=${SYSCALL_BIN:-$top/build/tests/syscalls}
moat=${MOAT:-$top/build/cli/moat}
native_only=0
per_test_timeout=${TEST_TIMEOUT:-180}
names=()
while [ $# -gt 0 ]; do
	case $1 in
	--native-only) native_only=1 ;;
	--bin) bin=$2; shift ;;
	--moat) moat=$2; shift ;;
	-h|--help) sed -n '2,15p' "$0"; exit 0 ;;
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

work=$(mktemp -d /tmp/moat-syscalls.XXXXXX)
chmod 755 "$work"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

pass=0 fail=0 skip=0
failed=()
note_fail() { fail=$((fail + 1)); failed+=("$1"); }

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
	if [ $nrc -eq 77 ]; then
		echo "skip $n (natively: $(head -1 "$scratch/native.out"))"
		skip=$((skip + 1))
		continue
	elif [ $nrc -ne 0 ]; then
		echo "FAIL native/$n: exit $nrc"
		grep -v '^ok ' "$scratch/native.out" "$scratch/native.err" | sed 's/^/    /' | head -20
		note_fail "native/$n"
		continue
	fi
	echo "ok native/$n ($(grep -c '^ok ' "$scratch/native.out") cases)"
	pass=$((pass + 1))
	[ $native_only = 1 ] && continue

	if [ ! -x "$moat" ]; then
		echo "FAIL moat/$n: no moat binary at $moat"
		note_fail "moat/$n"
		continue
	fi
	timeout -k 5 "$per_test_timeout" "$moat" run --bind "$bin:/t:ro" --bind "$scratch/guest:/work:rw" \
		--workdir /work --env MOAT_GUEST=1 -- "/t/$n" /work \
		>"$scratch/moat.out" 2>"$scratch/moat.err" </dev/null
	mrc=$?
	if [ $mrc -eq $nrc ] && cmp -s "$scratch/native.out" "$scratch/moat.out"; then
		echo "ok moat/$n"
		pass=$((pass + 1))
	else
		echo "FAIL moat/$n: exit $mrc (native $nrc); differences (- native, + moat):"
		diff "$scratch/native.out" "$scratch/moat.out" | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/' | head -30
		[ -s "$scratch/moat.err" ] && sed 's/^/    stderr: /' "$scratch/moat.err" | head -10
		note_fail "moat/$n"
	fi
done

echo "syscalls ($(id -un)): $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || { printf '  failed: %s\n' "${failed[*]}"; exit 1; }
exit 0
