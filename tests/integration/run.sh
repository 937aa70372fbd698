#!/bin/bash
# tests/integration/run.sh: runs every tests/integration/*.sh against one moat binary.
# usage: tests/integration/run.sh --moat PATH --syscall-bin DIR [NAME...]
# Runs as whoever calls it; prints each test's lines and a summary; exit 1 on any failure.
set -uo pipefail
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
failed=()
for n in "${names[@]}"; do
	timeout -k 10 "${IT_TIMEOUT:-900}" "$here/$n.sh" </dev/null
	rc=$?
	[ $rc -eq 0 ] || failed+=("$n")
done
echo "integration ($(id -un)): $((${#names[@]} - ${#failed[@]})) of ${#names[@]} test files passed"
[ ${#failed[@]} -eq 0 ] || { echo "  failed: ${failed[*]}"; exit 1; }
