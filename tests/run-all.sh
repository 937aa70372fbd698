#!/bin/bash
# tests/run-all.sh: the single entry point for every test tier.
#
#   unit         ctest -R '^unit/' (criterion tests of the libraries)
#   loader       tests/loader/run.sh: the loader under a harness playing the sentry
#   syscalls     tests/syscalls/run.sh: each program natively, then under moat (diffed)
#   integration  tests/integration/run.sh: real programs, CLI, lifecycle, isolation
#                IT_JOBS (default 2) test files at a time, each file's
#                output printed whole (integration/run.sh; IT_JOBS=1: one by one);
#                with an ASan build (and the asan tier wanted), only the
#                scripts of ASAN_SKIP: the asan tier runs the others as root
#   rootless     syscalls + integration again as an unprivileged user (races
#                1 s each: RACE_SECONDS), every script on the release moat
#   asan         the integration scripts as root with an ASan+UBSan moat
#                (--asan-build DIR, a -DMOAT_SANITIZE=ON build;
#                ASAN_OPTIONS=detect_leaks=0); any sanitizer report in its log
#                fails it. Not the scripts in ASAN_SKIP (default: runtimes
#                limits isolation_proctree workloads, whose time is waits and
#                other programs; isolation_sentry, its time waits for locks
#                and stops, and isolation_race, its time race loops): the
#                root integration tier runs those on the release moat; races
#                1 s each (RACE_SECONDS)
#   fuzz         fuzz/run.sh: every libFuzzer target for FUZZ_SECONDS (default
#                15) each (--fuzz-build DIR, a clang -DMOAT_FUZZ=ON build)
#   selfcheck    the harness against tests/integration/fake-moat (no isolation at
#                all): every isolation CASE must FAIL there (except those marked
#                sanity, listed apart), the differential tier must pass;
#                SELFCHECK_JOBS (default 2) scripts at a time (they mostly wait)
#
# Every tier counts test cases and ends with "N passed, M failed, K skipped";
# a tier FAILS when a case failed, when it printed no count, or when no case
# passed. The summary shows each tier's counts and every skip with its reason.
#
# usage: tests/run-all.sh [--build DIR] [--user NAME] [--asan-build DIR] [--fuzz-build DIR]
#                         [--only TIER[,TIER...]] [--skip TIER[,TIER...]]
#   --build DIR  CMake build directory (default: build); it must be built already
#   --asan-build DIR, --fuzz-build DIR  (default: build-asan, build-fuzz) the
#                asan and fuzz tiers run when these hold a build, and are
#                listed as not run otherwise
#   --user NAME  unprivileged user for the rootless tier (default: $MOAT_TEST_USER,
#                else cloudsdk or moatci if present; none -> rootless tier FAILS)
# Exit status: 0 iff every tier that ran passed.
set -uo pipefail
# The machine's normal share when root may take it. CI's runner may start
# us SCHED_IDLE at nice 19 on one CPU of two (stop 34's did, and this
# session's shell too): a SCHED_IDLE guest cannot set SCHED_OTHER as an
# unprivileged user, moat-init inherits SCHED_IDLE (cases read its policy),
# a native double fetch is rarely caught on one CPU, and nproc builds with
# one job. So as root: SCHED_OTHER, every online CPU (what the cpuset
# allows), and nice 0 below (cases that check a nice value a guest set, or
# kept, need room below the one they start at). tests/sched-normal.sh.
if [ "$(id -u)" = 0 ] && [ -z "${MOAT_TEST_RENICED:-}" ]; then
	. "$(dirname "$0")/sched-normal.sh"
fi
if [ "$(id -u)" = 0 ] && [ "$(nice)" -gt 0 ] && [ -z "${MOAT_TEST_RENICED:-}" ]; then
	MOAT_TEST_RENICED=1 exec nice -n "-$(nice)" "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$top/build
user=${MOAT_TEST_USER:-}
only="" skipt=""
asan_build=$top/build-asan fuzz_build=$top/build-fuzz
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--user) user=$2; shift ;;
	--asan-build) asan_build=$2; shift ;;
	--fuzz-build) fuzz_build=$2; shift ;;
	--only) only=$2; shift ;;
	--skip) skipt=$2; shift ;;
	-h | --help) sed -n '2,42p' "$0"; exit 0 ;;
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

declare -A result counts took
order=()
skips=()
# tier NAME CMD...: run, log to $build/test-logs/NAME.log and stdout; the
# tier's counts are its last "N passed, M failed, K skipped" line.
tier() {
	local name=$1 log t0=$SECONDS; shift
	order+=("$name")
	echo "=== $name"
	mkdir -p "$build/test-logs"
	log=$build/test-logs/$name.log
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]} c p
	took[$name]=$((SECONDS - t0))
	c=$(grep -oE '[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -1)
	counts[$name]=${c:-no count}
	p=$(printf '%s' "$c" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
	while IFS= read -r l; do skips+=("$name: $l"); done < <(grep -E '^ *skip |^ok - # skip ' "$log" | sed 's/^ *//' | awk '!seen[$0]++')
	if [ "$rc" -ne 0 ]; then
		result[$name]="FAIL (exit $rc)"
	elif [ -z "$c" ]; then
		result[$name]="FAIL (no case count)"
	elif [ "${p:-0}" -eq 0 ]; then
		result[$name]="FAIL (ran no test)"
	else
		result[$name]=PASS
	fi
}

# unit: every criterion executable through ctest, counted in criterion cases.
unit_tier() {
	local log=$build/test-logs/unit.ctest.log rc p=0 f=0 tp tf tc
	ctest --test-dir "$build" -R '^unit/' -V >"$log" 2>&1
	rc=$?
	grep -E 'Synthesis:|FAIL|Assertion|Crash|tests passed|Failed|\*\*\*' "$log" | sed 's/^[0-9]*: //'
	while read -r tp tf tc; do
		p=$((p + tp)) f=$((f + tf + tc))
	done < <(sed -n 's/.*Synthesis: Tested: [0-9]* | Passing: \([0-9]*\) | Failing: \([0-9]*\) | Crashing: \([0-9]*\).*/\1 \2 \3/p' "$log")
	# an executable that died before its synthesis line
	local nexe nsyn
	nexe=$(ctest --test-dir "$build" -N -R '^unit/' | sed -n 's/^Total Tests: //p')
	nsyn=$(grep -c 'Synthesis:' "$log")
	[ "${nexe:-0}" -gt "$nsyn" ] && f=$((f + nexe - nsyn))
	echo "unit: $p passed, $f failed, 0 skipped"
	[ $rc -eq 0 ] && [ $f -eq 0 ]
}

# the integration tiers run IT_JOBS (default 2) test files at a time
# (integration/run.sh: their output kept whole, file by file)
it_jobs=${IT_JOBS:-2}
[[ $it_jobs =~ ^[1-9][0-9]*$ ]] || { echo "run-all: IT_JOBS='$it_jobs' is not a count" >&2; exit 2; }
want unit && tier unit unit_tier
want loader && tier loader sh "$here/loader/run.sh" "$build/loader/moat-loader" "$build/tests/loader/loader-harness" "$build/tests/loader"
# (with each program's audit: tests/compat/syscalls-page.sh --from reads them)
want syscalls && tier syscalls "$here/syscalls/run.sh" --bin "$sbin" --moat "$moat" --audit-dir "$build/test-logs/syscalls-audit"
# The scripts the sanitized moat runs (the asan tier): all but ASAN_SKIP,
# whose time goes to waiting and to other programs (memory cases an ASan
# runtime's shadow and quarantine would break, lock and stop waits, race
# loops). With an ASan build the asan tier runs them as root in place of
# the root integration tier, which runs the rest on the release moat: each
# script runs once as root (release or ASan) and once rootless (release),
# in place of the ASan scripts twice as root (stop 36's CI took 2,030 s,
# over its 30 minutes; the two root runs were 860 s of 2,209 in tests/ci-env.sh).
# Without an ASan build (or with --skip asan) the root tier runs every script.
asan_names=() rest_names=()
for f in "$here"/integration/*.sh; do
	n=$(basename "$f" .sh)
	case $n in lib | run) continue ;; esac
	case " ${ASAN_SKIP-runtimes limits isolation_proctree workloads isolation_sentry isolation_race} " in
	*" $n "*) rest_names+=("$n") ;;
	*) asan_names+=("$n") ;;
	esac
done
asan_on=0
want asan && [ -x "$asan_build/cli/moat" ] && asan_on=1
it_names=()
[ $asan_on = 1 ] && it_names=("${rest_names[@]}")
want integration && IT_JOBS=$it_jobs tier integration "$here/integration/run.sh" --moat "$moat" --syscall-bin "$sbin" "${it_names[@]}"

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
		# (races 1 s each here too: the root tier runs them 2 s)
		tier rootless-integration su "$user" -s /bin/bash -c "RACE_SECONDS=${RACE_SECONDS:-1} IT_JOBS=$it_jobs $(q "$stage/tests/integration/run.sh" --moat "$stage/bin/moat" --syscall-bin "$stage/syscall-bin")"
	fi
fi

notrun=()
if want asan; then
	if [ $asan_on = 1 ]; then
		asan_tier() {
			# (races 1 s each, RACE_SECONDS; what a sanitized moat cannot
			# hold runs on MOAT_PLAIN, the release one: isolation_secrets
			# value_only_in_broker_memory, runs 2-6 of isolation_cow
			# scratch_gone_after_kill9_in_cgroup)
			RACE_SECONDS=${RACE_SECONDS:-1} MOAT_SLOW_TESTS=0 IT_JOBS=$it_jobs MOAT_PLAIN=$moat \
			ASAN_OPTIONS=detect_leaks=0:handle_segv=0:${ASAN_OPTIONS:-} UBSAN_OPTIONS=print_stacktrace=1:${UBSAN_OPTIONS:-} \
				"$here/integration/run.sh" --moat "$asan_build/cli/moat" --syscall-bin "$sbin" "${asan_names[@]}" 2>&1 |
				tee "$build/test-logs/asan-run.log"
			local rc=${PIPESTATUS[0]}
			# (most reports are on a moat stderr a test captured: the sentry or
			# gofer then died, which fails that test's cases)
			if grep -qE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' "$build/test-logs/asan-run.log"; then
				echo "FAIL asan: a sanitizer report above"; return 1
			fi
			return $rc
		}
		tier asan asan_tier
	else
		notrun+=("asan: no ASan build at $asan_build (cmake -B build-asan -DMOAT_SANITIZE=ON)")
	fi
fi

if want fuzz; then
	if [ -d "$fuzz_build/fuzz" ]; then
		tier fuzz "$top/fuzz/run.sh" "$fuzz_build" "${FUZZ_SECONDS:-15}"
	else
		notrun+=("fuzz: no fuzz build at $fuzz_build (cmake -B build-fuzz -DCMAKE_C_COMPILER=clang -DMOAT_FUZZ=ON)")
	fi
fi

if want selfcheck; then
	# Every isolation case must FAIL against the fake (a case that passes there
	# cannot catch a leak), except the cases the test marks "# sanity".
	selfcheck() {
		local fake=$here/integration/fake-moat t n out l caught=0 leaky=0 sane=0 sanity=()
		local dir=$build/test-logs/selfcheck jobs=${SELFCHECK_JOBS:-2}
		rm -rf "$dir"; mkdir -p "$dir"
		# The scripts run natively against the fake and mostly wait (timeouts,
		# sleeps): SELFCHECK_JOBS (default 2) at a time, each script's output
		# in $dir/NAME.out, reported below in a fixed order.
		sc_one() { # NAME CMD...: run CMD, its output in $dir/NAME.out, seconds in NAME.time
			local n=$1 t0=$SECONDS; shift
			# shielded: the fake's "guests" run natively and act on what
			# they attack; the host's system directories take their writes
			# in a throwaway overlay (integration/shield)
			"$here/integration/shield" "$@" </dev/null >"$dir/$n.out" 2>"$dir/$n.err"
			echo $? >"$dir/$n.rc"
			echo $((SECONDS - t0)) >"$dir/$n.time"
		}
		sc_job() { # like sc_one, in the background once fewer than $jobs run
			while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
			sc_one "$@" &
		}
		# isolation_host last, once the differential is done: its guest,
		# native here, takes every Linux AIO event of the host (the leak it
		# must show), and the differential's native aio program then got
		# EAGAIN (CI's self-check with three jobs)
		# The longest start first (against the fake, in stop 37's CI-like
		# run: isolation_net 182 s, the differential 160, lifecycle 140,
		# isolation_tty 138, isolation_cow 110; the rest 78 s or less): the
		# tier ends near its longest script, not a long one started last.
		local scripts=() first=(isolation_net lifecycle isolation_tty isolation_cow isolation_fs isolation_race isolation_proctree) dpid
		for t in "${first[@]}"; do [ -f "$here/integration/$t.sh" ] && scripts+=("$here/integration/$t.sh"); done
		for t in "$here"/integration/isolation_*.sh; do
			case " isolation_host ${first[*]} " in *" $(basename "$t" .sh) "*) ;; *) scripts+=("$t") ;; esac
		done
		scripts+=("$here"/integration/isolation_host.sh)
		# The differential's plumbing (binds, workdir) with the fake: every
		# fourth program (the syscalls tiers run each natively, as root and
		# rootless; all of them here were ~160 s of script time and the CPU
		# of two native runs, in a phase CPU-bound on one CPU: stop 37)
		local dnames=() i=0
		for t in "$here"/syscalls/*.c; do
			n=$(basename "$t" .c)
			case $n in race_* | probe_*) continue ;; esac
			[ $((i++ % 4)) = 0 ] && dnames+=("$n")
		done
		sc_job differential "$here/syscalls/run.sh" --bin "$sbin" --moat "$fake" "${dnames[@]}"
		dpid=$!
		for t in "${scripts[@]}"; do
			[ "$(basename "$t")" = isolation_host.sh ] && wait "$dpid" 2>/dev/null
			sc_job "$(basename "$t" .sh)" env MOAT="$fake" SYSCALL_BIN="$sbin" RACE_SECONDS=1 MOAT_TIMEOUT=10 "$t"
		done
		wait
		cat "$dir/differential.out" "$dir/differential.err" >"$build/test-logs/selfcheck-syscalls.log"
		echo "# differential plumbing (binds, workdir) with the fake, ${#dnames[@]} programs: must pass ($(cat "$dir/differential.time") s)"
		if [ "$(cat "$dir/differential.rc")" = 0 ]; then
			echo "ok selfcheck/differential"; caught=$((caught + 1))
		else
			echo "FAIL selfcheck/differential: see $build/test-logs/selfcheck-syscalls.log"; leaky=$((leaky + 1))
		fi
		for t in "$here"/integration/isolation_*.sh "$here"/integration/lifecycle.sh; do
			n=$(basename "$t" .sh)
			out=$(cat "$dir/$n.out")
			caught=$((caught + $(printf '%s\n' "$out" | grep -c '^FAIL ')))
			while IFS= read -r l; do
				case $l in
				*" # sanity") l=${l#ok }; sanity+=("${l% # sanity}"); sane=$((sane + 1)) ;;
				*) echo "FAIL selfcheck/${l#ok }: passes without any isolation - it cannot catch a leak"
				   leaky=$((leaky + 1)) ;;
				esac
			done < <(printf '%s\n' "$out" | grep '^ok ')
			echo "# $n: $(printf '%s\n' "$out" | grep -c '^FAIL ') cases catch the leak of a non-isolating moat ($(cat "$dir/$n.time") s)"
		done
		for l in "${sanity[@]}"; do echo "skip $l (sanity: holds without isolation by design)"; done
		echo "selfcheck: $caught passed, $leaky failed, $sane skipped"
		[ $leaky -eq 0 ]
	}
	tier selfcheck selfcheck
fi

echo
echo "=== summary"
fail=0 tp=0 tf=0 ts=0
for t in "${order[@]}"; do
	printf '  %-22s %-24s %-36s %5ss\n' "$t" "${result[$t]}" "${counts[$t]:-}" "${took[$t]:-?}"
	[[ ${result[$t]} == PASS* ]] || fail=1
	read -r p f s < <(printf '%s\n' "${counts[$t]:-}" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	tp=$((tp + ${p:-0})) tf=$((tf + ${f:-0})) ts=$((ts + ${s:-0}))
	[[ ${result[$t]} == PASS* ]] || [ "${f:-0}" -gt 0 ] || tf=$((tf + 1))
done
for l in "${notrun[@]}"; do echo "  not run: $l"; done
if [ ${#skips[@]} -gt 0 ]; then
	echo "  skipped (${#skips[@]}):"
	for l in "${skips[@]}"; do echo "    $l"; done
fi
echo "  logs: $build/test-logs/"
echo "run-all: $tp passed, $tf failed, $ts skipped"
exit $fail
