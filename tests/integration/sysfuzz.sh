#!/bin/bash
# The sentry's syscall handlers under a guest-side fuzzer
# (tests/syscalls/probe_sysfuzz.c: every trapped row, adversarial fds,
# pointers, lengths, flags, paths and structs, from 3 threads while a fourth
# remaps and rewrites the buffers; a child per batch).  The sandbox must
# survive it: the fuzzer ends "ok" (no batch hung: a call that never
# returns), moat exits with the fuzzer's status and says nothing of its own
# on stderr (no sentry error, no sanitizer report: the asan tier runs this
# against an ASan+UBSan moat), and the sentry and the gofer hold no more fds
# after the long run than after a short one (a leak per call), nor the
# sentry more than 12 MiB more memory (red team 84); and 400 threads that
# each name themselves in a call leave the sentry no fd each (fuzz87).
#   SYSFUZZ_SECONDS (default 10): the long run; SYSFUZZ_SEED (default: the
#   clock; printed, and a failing batch prints its replay line).
# The fuzzer runs only under moat (it refuses to run without a seccomp
# filter): natively its calls would reach the host.
. "$(dirname "$0")/lib.sh"
[ -n "$SYSCALL_BIN" ] && [ -x "$SYSCALL_BIN/probe_sysfuzz" ] || { fail setup "no $SYSCALL_BIN/probe_sysfuzz"; finish; }
secs=${SYSFUZZ_SECONDS:-10}
seed=${SYSFUZZ_SEED:-$(date +%s)}
mkdir -p "$T_TMP/w" "$T_TMP/m" && chmod 777 "$T_TMP/w" "$T_TMP/m"

# what moat itself says on stderr that it must not
bad_stderr() { grep -E 'AddressSanitizer|LeakSanitizer|runtime error:|^moat: |sentry (error|crash)|SUMMARY: ' "$1"; }

# fds PID: the open fds of the sentry (PID, moat itself) and of its helper
# children (the gofer...), not of the guest's tree (the child with children)
fds() {
	local n c
	n=$(ls "/proc/$1/fd" 2>/dev/null | wc -l)
	for c in $(pgrep -P "$1"); do
		[ -n "$(pgrep -P "$c")" ] && continue
		n=$((n + $(ls "/proc/$c/fd" 2>/dev/null | wc -l)))
	done
	echo "$n"
}
rss() { awk '/^VmRSS:/{print $2}' "/proc/$1/status" 2>/dev/null; }
thr() { awk '/^Threads:/{print $2}' "/proc/$1/status" 2>/dev/null; }
# settle PID: wait (3 s at most) until the sentry's thread count has held
# for 1.2 s: idle workers end after WORKER_IDLE_MS (1 s), each with its
# gofer connection (2 fds a worker, seen 58 fds at 3 threads, 76 at 12); a
# sample taken while a loaded run's pool was near its 64 workers counted
# them as kept (fuzz_self_named_released 58 -> 184 once, under load)
settle() {
	local i n last="" same=0
	for ((i = 0; i < 30; i++)); do
		n=$(thr "$1")
		if [ "$n" = "$last" ]; then same=$((same + 1)); [ $same -ge 12 ] && return 0; else same=0; last=$n; fi
		sleep 0.1
	done
}

# A hung batch explains itself (fuzz87: a 600 s run left three threads in
# trapped calls, and by the time anyone looked they were killed): the fuzzer
# (SYSFUZZ_HOLD) writes /m/hang (the batch's pid and its stuck threads' tids,
# as the guest numbers them) and holds the batch until /m/hang.done. Here:
# every task of moat's tree, its state, wchan and syscall (the guest's
# threads are in a trapped call's wait, seccomp_do_user_notification, or
# not), kernel stacks where we may read them, and the sentry's and its
# helpers' user stacks (gdb, when there is one: a worker in RECV, in a lock,
# in a gofer wait, or none left in RECV); into $T_TMP/hang.txt, whose lines
# the FAIL message names and stderr shows.
desc() { local c; echo "$1"; for c in $(pgrep -P "$1"); do desc "$c"; done; }
hang_dump() { # MOATPID
	local p t e l n stuck
	stuck=" $(cut -d' ' -f2- "$T_TMP/m/hang") "
	: >"$T_TMP/hang.sum"
	{
		echo "hung batch (pid, stuck tids, guest numbering): $(cat "$T_TMP/m/hang")"
		for p in $(desc "$1"); do
			e=$(readlink "/proc/$p/exe" 2>/dev/null)
			echo "pid $p $(grep NSpid "/proc/$p/status" 2>/dev/null | tr -s '\t' ' ') exe $e"
			for t in /proc/$p/task/*; do
				l="${t##*/} $(cat "$t/comm" 2>/dev/null) $(grep ^State "$t/status" 2>/dev/null | cut -f2 | cut -c1) wchan=$(cat "$t/wchan" 2>/dev/null) syscall=$(cut -d' ' -f1-4 "$t/syscall" 2>/dev/null)"
				echo "  $l"
				sed -n '1,6s/^/      /p' "$t/stack" 2>/dev/null
				echo "      $(grep -E '^(SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt|TracerPid)' "$t/status" 2>/dev/null | tr '\n\t' '  ')"
				# a stuck thread (its guest tid, in a pid namespace), and
				# the sentry's threads by what they wait in
				n=$(awk '/^NSpid:/{if (NF > 2) print $NF}' "$t/status" 2>/dev/null)
				if [ -n "$n" ] && [[ "$stuck" == *" $n "* ]]; then
					echo "guest $n: $l" >>"$T_TMP/hang.sum"
				elif [ "$p" = "$1" ]; then
					echo "sentry wchan=$(cat "$t/wchan" 2>/dev/null) syscall=$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)" >>"$T_TMP/hang.sum"
				fi
			done
		done
		if command -v gdb >/dev/null; then
			for p in $(desc "$1"); do
				e=$(readlink "/proc/$p/exe" 2>/dev/null)
				case "$e" in *moat*) ;; *) continue ;; esac
				echo "gdb $p ($(cat "/proc/$p/comm" 2>/dev/null)):"
				timeout 60 gdb -q "$MOAT" -p "$p" -batch -ex 'set sysroot /' -ex 'thread apply all bt 12' 2>&1 | grep -E '^(Thread|#)' | sed 's/^/  /'
				# the pipeline's state (sentry/pipeline.c): a lead held
				# by no thread in RECV, the pool full, RECV closed
				[ "$p" = "$1" ] && timeout 60 gdb -q "$MOAT" -p "$p" -batch -ex 'set sysroot /' \
					-ex 'p leads' -ex 'p lead_target' -ex 'p lead_waiters' -ex 'p nworkers' -ex 'p idle_workers' \
					-ex 'p nwaiting' -ex 'p recv_closed' -ex 'p fast_busy' 2>/dev/null | grep '^\$' | tr '\n' ' ' |
					awk '{print "pipeline: leads " $3 " target " $6 " lead_waiters " $9 " workers " $12 " idle " $15 " waiting " $18 " recv_closed " $21 " fast_busy " $24}' |
					tee -a "$T_TMP/hang.sum"
				# the tracer's (sentry/tracer.c): stops it took off wait4
				# and holds (a sibling's exec in flight), execs in flight
				# (the first one's tid), early stops, the held stops
				# (fuzz87's ASan hang: an exec'ing process left in a
				# ptrace stop, the tracer idle in waitid)
				[ "$p" = "$1" ] && timeout 60 gdb -q "$MOAT" -p "$p" -batch -ex 'set sysroot /' -ex 'thread 1' \
					-ex 'frame function tracer_run' -ex 'p tr.nheld' -ex 'p tr.nready' -ex 'p tr.nxf' -ex 'p tr.nearly' \
					-ex 'p tr.nxf > 0 ? tr.xf[0]->tid : 0' -ex 'p *tr.held@tr.nheld' 2>/dev/null | grep '^\$' |
					tr '\n' ' ' | cut -c1-1500 | sed 's/^/tracer: /' | tee -a "$T_TMP/hang.sum"; echo
			done
		fi
	} >"$T_TMP/hang.txt" 2>&1
	: >"$T_TMP/m/hang.done"
}

# 1. a short run then the long one in the same sandbox; the marks let the
#    host sample the sentry between them and after. The shell between them
#    ignores SIGIO: the fuzzer may set O_ASYNC and F_SETOWN its parent on a
#    shared description (CI, rootless: the shell died of SIGIO, exit 157, seed
#    1796515684), as Linux allows; moat's own death still fails the case.
"$MOAT" run --bind "$SYSCALL_BIN:/t:ro" --bind "$T_TMP/w:/work:rw" --bind "$T_TMP/m:/m:rw,shared" \
	--workdir /work --env MOAT_GUEST=1 --env SYSFUZZ_HOLD=/m/hang -- /bin/sh -c '
	trap "" IO
	/t/probe_sysfuzz /work 2 "$1"; a=$?
	: >/m/1; while [ ! -e /m/go ]; do sleep 0.05; done
	/t/probe_sysfuzz /work "$2" "$(($1 + 100000))"; b=$?
	: >/m/2; while [ ! -e /m/end ]; do sleep 0.05; done
	[ $a -eq 0 ] && exit $b; exit $a' sh "$seed" "$secs" </dev/null >"$T_TMP/out" 2>"$T_TMP/err" &
mpid=$!
at_exit "kill -9 $mpid"
wait_mark() { # FILE SECONDS
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[ -e "$1" ] && return 0
		kill -0 $mpid 2>/dev/null || return 1
		[ -e "$T_TMP/m/hang" ] && [ ! -e "$T_TMP/m/hang.done" ] && hang_dump $mpid
		sleep 0.05
	done
	return 1
}
f1="" f2="" r1="" r2=""
if wait_mark "$T_TMP/m/1" 60; then
	sleep 0.3; f1=$(fds $mpid) r1=$(rss $mpid)
	: >"$T_TMP/m/go"
	if wait_mark "$T_TMP/m/2" $((secs + 60)); then
		sleep 0.3; f2=$(fds $mpid) r2=$(rss $mpid)
	fi
fi
: >"$T_TMP/m/go"; : >"$T_TMP/m/end"
# a backstop that ends with moat (no sleep left holding our stdout)
( exec >/dev/null 2>&1
  for ((i = 0; i < (secs + 90) * 10; i++)); do kill -0 $mpid || exit 0; sleep 0.1; done
  kill -9 $mpid ) &
wait $mpid; rc=$?
# the guest's stuck threads in one line each (the whole dump on stderr)
hang=$([ -s "$T_TMP/hang.sum" ] && sort "$T_TMP/hang.sum" | uniq -c | sort -rn | head -16 | tr -s ' ' | tr '\n' '|')
echo "# sysfuzz seed=$seed: $(grep -E '^(ok|FAIL) sysfuzz' "$T_TMP/out" | tr '\n' ' ') sentry fds $f1 -> $f2, VmRSS ${r1}k -> ${r2}k"
if [ $rc -eq 0 ] && [ "$(grep -c '^ok sysfuzz' "$T_TMP/out")" = 2 ]; then
	ok fuzz_survives
else
	fail fuzz_survives "exit $rc (seed $seed): $(grep -vE '^(sysfuzz|ok) ' "$T_TMP/out" | head -20 | tr '\n' '|') $(tail -5 "$T_TMP/err" | tr '\n' '|')${hang:+ stuck: $hang}"
	[ -s "$T_TMP/hang.txt" ] && sed -n '1,400p' "$T_TMP/hang.txt" >&2
fi
if b=$(bad_stderr "$T_TMP/err"); then
	fail fuzz_no_sentry_report "(seed $seed) $(echo "$b" | head -5 | tr '\n' '|')"
	sed -n '1,80p' "$T_TMP/err" >&2
else
	ok fuzz_no_sentry_report
fi
# fds: what the sentry keeps by design is bounded — the lock table (at most
# 512 owners, each a pidfd of a process that may have exited and up to 2
# duplicates of the fds it locked through, or a duplicate of the
# description: released lazily, "Locks"; ~1,600 fds at most, 1,042 seen
# after 600 s rootless, hang87), a few device fds; a fd
# kept per call would be thousands (the long run makes ~100,000 calls, a
# few thousand per row)
if [ -n "$f1" ] && [ -n "$f2" ]; then
	if [ "$f2" -le $((f1 + 400)) ]; then ok fuzz_no_fd_growth; else fail fuzz_no_fd_growth "sentry+helpers fds $f1 after 2 s, $f2 after $secs s more (seed $seed)"; fi
else
	fail fuzz_no_fd_growth "no sample (the run ended early: seed $seed)"
fi
# RSS: memory kept per trapped call (the long run traps ~17,000 calls a
# second); seen +2.9 MiB in 10 s, +3.2 in 30 s, 8 -> 14 MiB over 140 s (the
# lock table's holders, up to 64 workers' stacks and arenas); 256 bytes kept
# per handled call made it +34 MiB in 10 s (+17 in CI's 5 s).
# Not on a sanitized moat: ASan's quarantine keeps freed memory (256 MiB).
if grep -q __asan_init "$MOAT" 2>/dev/null; then
	skip fuzz_no_rss_growth "a sanitized moat (its quarantine keeps what is freed)"
elif [ -n "$r1" ] && [ -n "$r2" ]; then
	if [ "$r2" -le $((r1 + 12288)) ]; then ok fuzz_no_rss_growth; else fail fuzz_no_rss_growth "sentry VmRSS ${r1} KiB after 2 s, ${r2} KiB after $secs s more (seed $seed)"; fi
else
	fail fuzz_no_rss_growth "no sample (the run ended early: seed $seed)"
fi

# 2. a short run with --trace and --audit: the decoders see every argument
# (the scratch's mode back first: a batch may have chmod'ed the bind's root,
# and a fuzzer killed before its own clean-up left it so)
chmod 777 "$T_TMP/w" 2>/dev/null
rm -rf "$T_TMP/w"/* 2>/dev/null
moat run --trace --audit "$T_TMP/audit" --bind "$SYSCALL_BIN:/t:ro" --bind "$T_TMP/w:/work:rw" --workdir /work \
	--env MOAT_GUEST=1 -- /t/probe_sysfuzz /work 3 "$((seed + 7))" </dev/null >"$T_TMP/out2" 2>"$T_TMP/err2"
rc=$?
if [ $rc -eq 0 ] && grep -q '^ok sysfuzz' "$T_TMP/out2" && [ -s "$T_TMP/audit" ]; then
	ok fuzz_trace_audit
else
	fail fuzz_trace_audit "exit $rc (seed $((seed + 7))): $(grep -v '^sysfuzz' "$T_TMP/out2" | head -5 | tr '\n' '|') $(grep -v '^\[' "$T_TMP/err2" | tail -5 | tr '\n' '|')"
fi
if b=$(bad_stderr "$T_TMP/err2"); then
	fail fuzz_trace_audit_no_report "(seed $((seed + 7))) $(echo "$b" | head -5 | tr '\n' '|')"
else
	ok fuzz_trace_audit_no_report
fi

# 3. calls that name the caller's own thread release it (fuzz87: prlimit64
#    of RLIMIT_CORE by its own tid took a reference to its task and never
#    put it, so every thread that made one was kept, its pidfd with it: +1
#    sentry fd and a task's memory a thread, 2,204 fds and +26 MiB after
#    the fuzzer's 600 s). 400 threads, one after another, each naming itself
#    in the calls whose handler looks the named task up; the sentry's fds
#    sampled after a run of 10 and after the 400 (seen +400 on main's
#    binary, +0-6 fixed). A sanity case: without a sentry nothing is kept.
if [ -x "$SYSCALL_BIN/probe_selfref" ]; then
	rm -rf "${T_TMP:?}/m" && mkdir -p "$T_TMP/m" && chmod 777 "$T_TMP/m"
	"$MOAT" run --bind "$SYSCALL_BIN:/t:ro" --bind "$T_TMP/m:/m:rw,shared" -- /bin/sh -c '
		/t/probe_selfref 10 && : >/m/1 && while [ ! -e /m/go ]; do sleep 0.05; done &&
		/t/probe_selfref 400 && : >/m/2 && while [ ! -e /m/end ]; do sleep 0.05; done' \
		</dev/null >"$T_TMP/sr.out" 2>"$T_TMP/sr.err" &
	mpid=$!
	at_exit "kill -9 $mpid"
	s1="" s2=""
	if wait_mark "$T_TMP/m/1" 30; then
		settle $mpid; s1=$(fds $mpid) t1=$(thr $mpid)
		: >"$T_TMP/m/go"
		wait_mark "$T_TMP/m/2" 60 && { settle $mpid; s2=$(fds $mpid) t2=$(thr $mpid); }
	fi
	: >"$T_TMP/m/go"; : >"$T_TMP/m/end"
	wait $mpid; rc=$?
	echo "# selfref: sentry+helpers fds $s1 after 10 threads, $s2 after 400 more (sentry threads $t1, $t2)"
	if [ $rc -ne 0 ] || [ -z "$s1" ] || [ -z "$s2" ]; then
		fail fuzz_self_named_released "exit $rc, fds '$s1' -> '$s2': $(tail -3 "$T_TMP/sr.err" | tr '\n' '|')"
	elif [ "$s2" -le $((s1 + 100)) ]; then
		SANITY=1 ok fuzz_self_named_released
	else
		fail fuzz_self_named_released "sentry+helpers fds $s1 after 10 threads, $s2 after 400 more (each kept)"
	fi
else
	fail fuzz_self_named_released "no $SYSCALL_BIN/probe_selfref"
fi
finish
