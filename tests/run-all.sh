#!/bin/bash
# tests/run-all.sh: the single entry point for every test tier.
#
#   unit         ctest -R '^unit/' (criterion tests of the libraries)
#   syscalls     tests/syscalls/run.sh: each program natively, then under moat (diffed)
#   integration  tests/integration/run.sh: real programs, CLI, lifecycle, isolation
#   rootless     syscalls + integration again as an unprivileged user
#   selfcheck    the harness against tests/integration/fake-moat (no isolation at
#                all): every isolation test must FAIL there, the differential tier must pass
#
# usage: tests/run-all.sh [--build DIR] [--user NAME] [--only TIER[,TIER...]] [--skip TIER[,TIER...]]
#   --build DIR  CMake build directory (default: build); it must be built already
#   --user NAME  unprivileged user for the rootless tier (default: $MOAT_TEST_USER,
#                else cloudsdk or moatci if present; none -> rootless tier FAILS)
# Exit status: 0 iff every tier that ran passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$top/build
user=${MOAT_TEST_USER:-}
only="" skipt=""
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--user) user=$2; shift ;;
	--only) only=$2; shift ;;
	--skip) skipt=$2; shift ;;
	-h | --help) sed -n '2,19p' "$0"; exit 0 ;;
	*) echo "run-all: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
build=$(cd "$build" 2>/dev/null && pwd) || { echo "run-all: no build dir (cmake -B build && cmake --build build)" >&2; exit 2; }
moat=$build/cli/moat
sbin=$build/tests/syscalls
if [ -z "$user" ]; then
	for u in cloudsdk moatci; do id "$u" >/dev/null 2>&1 && { user=$u; break; }; done
fi
want() { # want TIER: selected by --only/--skip?
	[ -n "$only" ] && [[ ",$only," != *",$1,"* ]] && return 1
	[[ ",$skipt," == *",$1,"* ]] && return 1
	return 0
}

stage=""
cleanup() { [ -n "$stage" ] && rm -rf "$stage"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A result
order=()
tier() { # tier NAME CMD...: run, log to $build/test-logs/NAME.log and stdout
	local name=$1; shift
	order+=("$name")
	echo "=== $name"
	mkdir -p "$build/test-logs"
	"$@" 2>&1 | tee "$build/test-logs/$name.log"
	local rc=${PIPESTATUS[0]}
	result[$name]=$([ "$rc" -eq 0 ] && echo PASS || echo "FAIL (exit $rc)")
}

if want unit; then
	if ctest --test-dir "$build" -N -R '^unit/' 2>/dev/null | grep -q 'Total Tests: [1-9]'; then
		tier unit ctest --test-dir "$build" -R '^unit/' --output-on-failure
	else
		order+=(unit); result[unit]="PASS (no unit tests registered)"
	fi
fi
want syscalls && tier syscalls "$here/syscalls/run.sh" --bin "$sbin" --moat "$moat"
want integration && tier integration "$here/integration/run.sh" --moat "$moat" --syscall-bin "$sbin"

if want rootless; then
	if [ "$(id -u)" != 0 ]; then
		order+=(rootless); result[rootless]="FAIL (must start as root to switch user)"
	elif [ -z "$user" ]; then
		order+=(rootless); result[rootless]="FAIL (no unprivileged user: useradd -m moatci)"
	else
		# A world-readable copy: the user may not be able to read the build tree.
		stage=$(mktemp -d /tmp/moat-test-XXXXXX)
		mkdir -p "$stage/bin" "$stage/tests"
		cp "$moat" "$stage/bin/moat" 2>/dev/null
		cp -r "$sbin" "$stage/syscall-bin"
		cp -r "$here/syscalls" "$here/integration" "$stage/tests/"
		chmod -R a+rX "$stage"
		chmod 755 "$stage"
		q() { printf '%q ' "$@"; }
		tier rootless-syscalls su "$user" -s /bin/bash -c "$(q "$stage/tests/syscalls/run.sh" --bin "$stage/syscall-bin" --moat "$stage/bin/moat")"
		tier rootless-integration su "$user" -s /bin/bash -c "$(q "$stage/tests/integration/run.sh" --moat "$stage/bin/moat" --syscall-bin "$stage/syscall-bin")"
	fi
fi

if want selfcheck; then
	selfcheck() {
		local fake=$here/integration/fake-moat rc=0 t out caught
		echo "# differential plumbing (binds, workdir) with the fake: must pass"
		"$here/syscalls/run.sh" --bin "$sbin" --moat "$fake" >"$build/test-logs/selfcheck-syscalls.log" 2>&1 ||
			{ echo "FAIL selfcheck/differential: see $build/test-logs/selfcheck-syscalls.log"; rc=1; }
		for t in "$here"/integration/isolation_*.sh "$here"/integration/lifecycle.sh; do
			out=$(MOAT=$fake SYSCALL_BIN=$sbin RACE_SECONDS=1 "$t" </dev/null 2>/dev/null)
			caught=$(printf '%s\n' "$out" | grep -c '^FAIL')
			if printf '%s\n' "$out" | tail -1 | grep -q ' 0 failed'; then
				echo "FAIL selfcheck/$(basename "$t" .sh): passes without any isolation - it cannot catch a leak"
				rc=1
			else
				echo "ok selfcheck/$(basename "$t" .sh): $caught cases catch the leak of a non-isolating moat"
			fi
			printf '%s\n' "$out" | grep '^ok ' | sed 's/^/    (passes without isolation: host-dependent or sanity) /'
		done
		return $rc
	}
	tier selfcheck selfcheck
fi

echo
echo "=== summary"
fail=0
for t in "${order[@]}"; do
	printf '  %-22s %s\n' "$t" "${result[$t]}"
	[[ ${result[$t]} == PASS* ]] || fail=1
done
echo "  logs: $build/test-logs/"
exit $fail
