#!/bin/bash
# fuzz/run.sh: a bounded run of every libFuzzer target (the CI's).
# usage: fuzz/run.sh BUILD_DIR [SECONDS_PER_TARGET]   (default 15)
# BUILD_DIR is a clang build with -DMOAT_FUZZ=ON. Each target starts from a
# scratch copy of fuzz/corpus/<target>/ (new inputs are not kept); a crash,
# leak or sanitizer report fails the run, its reproducer is in fuzz-out/ of
# the build dir. Prints the executions per target and a closing count line.
# FUZZ_JOBS (default 2) targets run at a time.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS]}" && pwd)
secs=${2:-15}
out=$build/fuzz-out
mkdir -p "$out"
work=$(mktemp -d /tmp/moat-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
# FUZZ_JOBS (default 2) targets at a time, each on its own CPU for SECONDS:
# the same executions per target as one after another, in half the time.
jobs=${FUZZ_JOBS:-2}
one() { # TARGET: fuzz it; its verdict line(s) in $work/TARGET.res
	local t=$1 bin=$build/fuzz/fuzz_$1 rc runs
	if [ ! -x "$bin" ]; then echo "FAIL fuzz/$t: $bin not built" >"$work/$t.res"; return; fi
	mkdir -p "$work/$t"
	cp "$here/corpus/$t"/* "$work/$t/" 2>/dev/null
	# -timeout: one input that hangs fails the target in 20 s (libFuzzer's
	# default is 20 minutes); timeout(1) bounds the whole target as well
	timeout -k 5 $((secs + 60)) "$bin" -max_total_time="$secs" -timeout=20 \
		-print_final_stats=1 -artifact_prefix="$out/$t-" \
		-close_fd_mask=1 "$work/$t" >"$out/$t.log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log")
	if [ $rc -eq 0 ]; then
		echo "ok fuzz/$t: ${runs:-?} executions in ${secs}s, corpus $(ls "$work/$t" | wc -l) inputs" >"$work/$t.res"
	else
		{ echo "FAIL fuzz/$t: exit $rc after ${runs:-?} executions; see $out/$t.log"
		  grep -E 'ERROR|runtime error|SUMMARY|artifact' "$out/$t.log" | head -5 | sed 's/^/    /'; } >"$work/$t.res"
	fi
}
targets=()
for src in "$here"/fuzz_*.c; do
	t=$(basename "$src" .c); targets+=("${t#fuzz_}")
done
for t in "${targets[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	one "$t" &
done
wait
pass=0 fail=0
for t in "${targets[@]}"; do
	cat "$work/$t.res" 2>/dev/null || echo "FAIL fuzz/$t: no verdict"
	if grep -q '^ok ' "$work/$t.res" 2>/dev/null; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "fuzz: $pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
