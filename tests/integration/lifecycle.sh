#!/bin/bash
# Signals reach the guest; nothing of a sandbox outlives moat, whatever the path out.
. "$(dirname "$0")/lib.sh"

# descendants PID: every process whose parent chain leads to PID.
descendants() {
	ps -e -o pid=,ppid= | awk -v root="$1" '
		{ parent[$1] = $2 }
		END { for (p in parent) { q = p; while (q in parent && q != root && q > 1) q = parent[q]; if (q == root && p != root) print p } }'
}
# gone PATTERN SECONDS: true once no process has PATTERN in its command line.
gone() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		pgrep -f -- "$1" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}
# Every process this test starts carries $T_MARK or a unique sleep time ($S.*) in
# its command line; the exit trap kills exactly those (by pid).
S=$((1000 + $$ % 7919))
at_exit 'for p in $(pgrep -f -- "$T_MARK|sleep $S\\.[0-9]"); do kill -9 $p; done'
# moat_bg ARGS...: moat in the background, unwrapped (signals go straight to it).
# (Background jobs of a script start with SIGINT ignored; undo that so INT can be forwarded.)
moat_bg() {
	"$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL); signal.signal(signal.SIGQUIT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$MOAT" "$@" </dev/null &
}
# wait_max PID SECONDS: wait for PID (our child) at most SECONDS, then kill it; sets rc.
wait_max() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$1" 2>/dev/null && kill -9 "$1"
	{ wait "$1"; } 2>/dev/null; rc=$?
}

# A guest that traps TERM/INT/HUP and reports it. (Forwarding and "nothing
# left" hold trivially for a program run without any sandbox: sanity cases.)
for sig in TERM INT HUP; do
	out=$T_TMP/sig.$sig
	moat_bg run -- /bin/sh -c "trap 'echo got-$sig; exit 0' $sig; echo ready; while :; do sleep 0.1; done; : $T_MARK" \
		>"$out" 2>/dev/null
	pid=$!
	for ((i = 0; i < 100; i++)); do grep -q ready "$out" 2>/dev/null && break; sleep 0.1; done
	kill -$sig $pid
	wait_max $pid 10
	if grep -q "got-$sig" "$out" && [ "$rc" -eq 0 ]; then ok_sanity "forward_sig$sig"
	else fail "forward_sig$sig" "exit $rc output [$(cat "$out")]"; fi
	SANITY=1 check "no_leftovers_after_sig$sig" gone "$T_MARK" 2
done

# Normal exit with a background child still running: nothing left.
moat run -- /bin/sh -c "sleep $S.1 & sleep $S.2 & echo started" >"$T_TMP/bg" 2>/dev/null </dev/null
check exit_kills_background_children gone "sleep $S\\.[12]" 2

# kill -9 of moat itself: the guest dies with it (within a second or two).
moat_bg run -- /bin/sh -c "echo ready; exec sleep $S.3" >"$T_TMP/k9" 2>/dev/null
pid=$!
for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/k9" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
before=$(descendants $pid | wc -l)
kill -9 $pid
wait_max $pid 5
# (Vacuous when moat had no process of its own: then the guest was moat itself.)
k9sane=""; [ "$before" -gt 0 ] || k9sane=1
if gone "sleep $S\\.3" 2; then SANITY=$k9sane ok "kill9_moat_kills_guest"; else fail kill9_moat_kills_guest "still running: $(pgrep -af "sleep $S\\.3")"; fi
[ "$before" -gt 0 ] && ok kill9_had_descendants || fail kill9_had_descendants "moat had no child processes to check"

# The same for a multi-process guest (a pipeline) and kill -9.
moat_bg run -- /bin/sh -c "echo ready; sleep $S.4 | sleep $S.5; : $T_MARK" >"$T_TMP/k9b" 2>/dev/null
pid=$!
for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/k9b" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -9 $pid
wait_max $pid 5
if gone "sleep $S\\.[45]" 2; then ok kill9_pipeline_gone; else fail kill9_pipeline_gone "$(pgrep -af "sleep $S\\.[45]")"; fi

# A sentry crash (MOAT_TEST_CRASH faults on purpose once the guest runs): a
# backtrace on stderr, status 139, and the guest and gofer die with it.
MOAT_TEST_CRASH=1 moat run -- /bin/sh -c "sleep $S.6; : $T_MARK" >/dev/null 2>"$T_TMP/crash" </dev/null
rc=$?
if [ "$rc" -eq 139 ] && grep -q "sentry crashed (signal 11); backtrace:" "$T_TMP/crash" && grep -q "sentry_run" "$T_TMP/crash"; then
	ok crash_backtrace
else
	fail crash_backtrace "exit $rc stderr [$(head -c 300 "$T_TMP/crash")]"
fi
# (Vacuous when the sentry did not crash: only the time-out ended the guest.)
crsane=""; [ "$rc" -eq 139 ] || crsane=1
if gone "sleep $S\\.6" 2; then SANITY=$crsane ok crash_kills_guest; else fail crash_kills_guest "$(pgrep -af "sleep $S\\.6")"; fi

# An orphan is reparented to the guest's pid 1 (moat-init), which reaps it:
# no zombie stays behind a program that never waits for its grandchildren.
# The orphan names its new parent by its comm: any pid namespace's init
# reaps (the self-check's shield runs the fake's program as its pid 1, which
# reaps too); only moat's is moat-init.
out=$(mrun "$PY" -c '
import os, time
r, w = os.pipe()
c = os.fork()
if c == 0:
    if os.fork() == 0:
        time.sleep(0.3)
        p = os.getppid()
        try:
            comm = open("/proc/%d/comm" % p).read().strip()
        except OSError:
            comm = "?"
        os.write(w, b"%d %d %s\n" % (os.getpid(), p, comm.encode()))
        os._exit(0)
    os._exit(0)
os.waitpid(c, 0)
gpid, ppid, comm = os.read(r, 100).split(None, 2)
time.sleep(0.5)
try:
    os.kill(int(gpid), 0); state = "not-reaped"
except ProcessLookupError:
    state = "reaped"
print("ppid", int(ppid), comm.decode().strip(), state)
' 2>&1)
expect_eq orphan_reparented_to_init_and_reaped "$out" "ppid 1 moat-init reaped"

# An idle sandbox keeps one pipeline worker: the workers start-up spawned
# (one each time the lead passed while the others waited for the gofer) end
# after a second without work, with their gofer connections (PSS; before: six
# threads in the sentry and seven in the gofer stayed for the sandbox's life).
# The sentry's threads: the tracer, that worker and the limits' watchdog
# (every run since red team 95: the host's file table; none where
# fs.file-max is unbounded).
moat_bg run -- /bin/sh -c "for i in 1 2 3 4 5 6; do (cat /etc/hostname /etc/os-release >/dev/null &); done; python3 -c pass; exec sleep $S.7"
pid=$!
for ((i = 0; i < 200; i++)); do pgrep -f -- "sleep $S\\.7" >/dev/null && break; sleep 0.1; done
sleep 2.5
nt=$(ls /proc/$pid/task 2>/dev/null | wc -l)
gofer=$(pgrep -P $pid -x moat-gofer | head -1)
ng=$([ -n "$gofer" ] && ls /proc/$gofer/task 2>/dev/null | wc -l)
kill -9 $pid
wait_max $pid 5
if [ "$nt" -ge 1 ] && [ "$nt" -le 3 ] && [ -n "$ng" ] && [ "$ng" -le 3 ]; then ok idle_workers_end
else fail idle_workers_end "sentry threads $nt, gofer threads ${ng:-?} (want <= 3, <= 3)"; fi

# Two threads of one process that trap at once are served at once: while
# the fast calls of two threads' stat loops overlap (git's preload threads),
# a second lead waits in RECV, one per CPU (pipeline.c lead_spread;
# MOAT_PROFILE reports the raise and the most fast calls served at once);
# once the guest is idle the sandbox keeps one worker again (the extra
# lead's poll times out). Before: one lead, one fast call at a time, two
# loops at half speed each.
if [ "$(nproc)" -ge 2 ]; then
	MOAT_PROFILE=1 moat_bg run -- /usr/bin/python3 -c 'import os, threading
def l():
    for i in range(15000):
        os.stat("/etc/hostname")
ts = [threading.Thread(target=l) for _ in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
print("loops-done", flush=True)
os.execv("/bin/sleep", ["sleep", "'"$S"'.8"])' >"$T_TMP/spread.out" 2>"$T_TMP/spread.err"
	pid=$!
	for ((i = 0; i < 300; i++)); do grep -q loops-done "$T_TMP/spread.out" 2>/dev/null && break; sleep 0.1; done
	sleep 2.5
	nt=$(ls /proc/$pid/task 2>/dev/null | wc -l)
	for p in $(pgrep -f -- "sleep $S\\.8"); do kill $p; done # (moat then exits, its profile printed)
	wait_max $pid 10
	prof=$(grep -o 'spread on [0-9]*, fast calls at once [0-9]*' "$T_TMP/spread.err")
	on=$(echo "$prof" | awk '{print $3}' | tr -d ,) most=$(echo "$prof" | awk '{print $NF}')
	if [ "${on:-0}" -ge 1 ] && [ "${most:-0}" -ge 2 ] && [ "$nt" -ge 1 ] && [ "$nt" -le 3 ]; then
		ok parallel_fast_calls
	else
		fail parallel_fast_calls "spread on ${on:-?}, fast calls at once ${most:-?}, sentry threads when idle $nt (want >= 1, >= 2, <= 3: the watchdog too)"
	fi
	# ... but not the calls of separate processes, which have their own
	# work between calls (two compilers of a make -j2 opening headers): a
	# second lead made that 10% slower, each call then also waking the
	# other CPU's lead for nothing (Linux wakes every RECV waiter). Two
	# shell loops (each `[ -e ]` a trapped stat) keep one lead.
	MOAT_PROFILE=1 moat run -- /bin/sh -c 'l() { i=0; while [ $i -lt 8000 ]; do [ -e /etc/hostname ]; i=$((i + 1)); done; }
l & l; wait' >/dev/null 2>"$T_TMP/spread2.err"
	on=$(grep -o 'spread on [0-9]*' "$T_TMP/spread2.err" | awk '{print $3}')
	if [ "$on" = 0 ]; then ok separate_processes_one_lead
	else fail separate_processes_one_lead "spread on ${on:-?} (want 0)"; fi
else
	skip parallel_fast_calls "one CPU"
	skip separate_processes_one_lead "one CPU"
fi

# --kill-after: a guest that ignores the forwarded SIGTERM (here stuck in a
# FIFO open the sentry answers only when a writer comes, or never) is
# SIGKILLed once the grace is over, or at a second SIGTERM, or at once with
# --kill-after 0: moat exits, nothing of the sandbox is left (no process, no
# cgroup), stderr and --result say why. Before: moat waited until SIGKILLed.
# result_field FILE KEY: a value of the --result JSON ("" when missing)
result_field() {
	"$PY" -c 'import json, sys
v = json.load(open(sys.argv[1])).get(sys.argv[2])
print("" if v is None else v)' "$1" "$2" 2>/dev/null
}
# kill_after NAME SIGNALS MAX_S EXPECTED_STDERR MOAT-OPTIONS...: the guest
# ignores TERM and blocks; each of SIGNALS (comma-separated) goes to moat half
# a second apart; moat must exit within MAX_S seconds of the first.
kill_after() {
	local name=$1 sigs=$2 max=$3 want=$4 id left t0 t1 s
	shift 4
	rm -f "$T_TMP/ka.json"
	# (a per-run name: natively, the fake, it is the host's /tmp, where the
	# self-check runs scripts side by side; removed at exit)
	local fifo=/tmp/kafifo.$$
	guest_tmp "$fifo"
	moat_bg run --result "$T_TMP/ka.json" "$@" -- /bin/sh -c "trap '' TERM; mkfifo $fifo; echo ready; : $T_MARK; read x <$fifo; while :; do sleep 0.1; done" \
		>"$T_TMP/ka.out" 2>"$T_TMP/ka.err"
	pid=$!
	for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/ka.out" 2>/dev/null && break; sleep 0.1; done
	sleep 0.3
	t0=$(date +%s%N)
	for s in ${sigs//,/ }; do kill -"$s" $pid; sleep 0.5; done
	wait_max $pid $((max + 5))
	t1=$(date +%s%N)
	local ms=$(((t1 - t0) / 1000000))
	if [ "$rc" -eq 137 ] && [ "$ms" -le $((max * 1000)) ]; then ok "${name}_moat_exits"
	else fail "${name}_moat_exits" "exit $rc after $ms ms (want 137 within ${max}s)"; fi
	if grep -qF "$want" "$T_TMP/ka.err"; then ok "${name}_stderr"
	else fail "${name}_stderr" "[$(cat "$T_TMP/ka.err")] (want [$want])"; fi
	expect_eq "${name}_result" "$(result_field "$T_TMP/ka.json" reason) $(result_field "$T_TMP/ka.json" signal) $(result_field "$T_TMP/ka.json" forwarded_signal)" "kill-after 9 15"
	SANITY=1 check "${name}_no_process_left" gone "$T_MARK" 2
	id=$(result_field "$T_TMP/ka.json" sandbox)
	left=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "moat-$id" 2>/dev/null)
	if [ -n "$id" ] && [ -z "$left" ]; then ok "${name}_no_cgroup_left"
	else fail "${name}_no_cgroup_left" "sandbox [$id] left [$left]"; fi
}
kill_after kill_after_grace TERM 3 "moat: killed: still running --kill-after 1s after SIGTERM" --kill-after 1s
kill_after kill_after_second_term TERM,TERM 2 "moat: killed: a second SIGTERM during the --kill-after grace"
kill_after kill_after_zero TERM 2 "moat: killed: SIGTERM forwarded, --kill-after 0" --kill-after 0

# One SIGTERM sent twice is one request: timeout(1) sends its SIGTERM to moat
# and then to its own process group (moat included) microseconds apart; the
# second, counted, SIGKILLed a sandbox whose program would have ended by the
# first (rc 137, CI's failure in stop 26). Here the two come 20 ms apart (a
# handler run between them, as on a loaded machine); the program's TERM trap
# ends it with 7.
rm -f "$T_TMP/dup.out"
moat_bg run -- /bin/sh -c "trap 'exit 7' TERM; echo ready; : $T_MARK; while :; do sleep 0.1; done" \
	>"$T_TMP/dup.out" 2>/dev/null
pid=$!
for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/dup.out" 2>/dev/null && break; sleep 0.1; done
"$PY" -c 'import os, signal, sys, time
p = int(sys.argv[1]); os.kill(p, signal.SIGTERM); time.sleep(0.02); os.kill(p, signal.SIGTERM)' $pid
wait_max $pid 15
SANITY=1 expect_eq duplicate_sigterm_one_request "$rc" 7
SANITY=1 check duplicate_sigterm_no_process_left gone "$T_MARK" 2

# The sentry's teardown starts no workers: once every guest task is gone,
# RECV fails for good, and each ending worker used to start another
# (lead_pass), which failed and started the next until the sentry exited
# (15-45 thread creations in a `python3 -c pass`, competing with the
# reaping for the CPUs). MOAT_PROFILE counts the threads started.
n=0 worst=0
for prog in /bin/true "/bin/sh -c :" "/bin/sh -c 'ls / >/dev/null; cat /etc/hostname >/dev/null'"; do
	w=$(MOAT_PROFILE=1 moat run -- /bin/sh -c "exec $prog" 2>&1 >/dev/null | sed -n 's/^moat profile: workers started \([0-9][0-9]*\).*/\1/p')
	n=$((n + 1))
	case $w in "" | *[!0-9]*) worst=missing ;; *) [ "$worst" != missing ] && [ "$w" -gt "$worst" ] && worst=$w ;; esac
done
if [ "$worst" != missing ] && [ "$worst" -le 8 ]; then ok teardown_starts_no_workers
else fail teardown_starts_no_workers "workers started: at most $worst in $n runs (want <= 8)"; fi

# The cow exports' roots (the sentry's detached clones of the gofer's
# overlays) are dropped by a thread of the sentry's once the program has
# exited (its init killed, the gofer shut down: nothing the dying tasks ask
# of the files is answered from then on either way), beside the init's end
# and the gofer's, instead of one RCU grace period after another in the
# sentry's exit_group: never before the program's exit, and every one of
# them (as many as the gofer's cow exports; the mark names the exports'
# detached box apart, sentryfs37).
out=$(MOAT_DEBUG=1 moat run -- /bin/sh -c 'cat /usr/bin/sh /etc/hostname >/dev/null & wait' 2>&1 >/dev/null </dev/null)
ncow=$(printf '%s\n' "$out" | grep -c 'gofer: export [0-9]* (.*, cow) attached')
order=$(printf '%s\n' "$out" | sed -n 's/^moat: [0-9.]* ms: \(program exited\|guest gone\|export roots releasing\|done\).*/\1/p' | tr '\n' ,)
rel=$(printf '%s\n' "$out" | sed -n 's/^moat: [0-9.]* ms: export roots releasing: \([0-9]*\).*/\1/p')
if [ "$ncow" -ge 1 ] && [ "$rel" = "$ncow" ] &&
   [ "$order" = "program exited,export roots releasing,guest gone,done," ]; then
	ok cow_roots_released_after_program
else
	fail cow_roots_released_after_program "cow exports $ncow, released [$rel], marks [$order]"
fi

# (the cases below run moat under a child subreaper: subreaper.py)
HERE_INT=$(cd "$(dirname "$0")" && pwd)
SUBREAPER='import os, sys; sys.path.insert(0, sys.argv[1]); import subreaper as s
'
# moat reaps every helper it starts: run under a child subreaper that never
# reaps on its own, whatever moat left (a zombie included: it would pile up
# under a container's pid 1 that reaps nothing) is reparented to it. Before
# stop 21's fix moat-reopen (root-run) stayed a zombie for the host's init.
out=$(MOAT="$MOAT" "$PY" -c "$SUBREAPER"'
s.become()
rc, left = s.run([os.environ["MOAT"], "run", "--", "true"])
print("left", left or "none")
' "$HERE_INT" 2>&1)
SANITY=1 expect_eq helpers_reaped "$out" "left none"

# A start-up at the caller's process limit (RLIMIT_NPROC, rootless): each
# fork, clone or thread moat cannot make ends it with one line naming the
# limit, exit 1, nothing left. Before red team 58's leftovers were fixed it
# ended with "the guest's IPC namespace: No such file or directory" (the
# init's fork of the program had failed), "moat-reopen: clone: Resource
# temporarily unavailable", exit 127 with no line, or waited until killed
# (the sentry's first worker thread not made: nothing answered the guest's
# first trapped call). ulimit -u from the caller's task count + 2 upward,
# until a start succeeds: every start-up site that meets the limit on the
# way. (Root is exempt from RLIMIT_NPROC.)
if [ "$(id -u)" = 0 ]; then
	skip nproc_limit_one_line "root-run: RLIMIT_NPROC does not bind root"
else
	out=$(MOAT="$MOAT" "$PY" -c "$SUBREAPER"'
import os, re, tempfile
s.become()
uid = os.getuid()
def tasks():
    n = 0
    for d in os.listdir("/proc"):
        try:
            st = open("/proc/%s/status" % d).read()
        except (OSError, ValueError):
            continue
        m = re.search(r"^Uid:\s+(\d+)", st, re.M)
        t = re.search(r"^Threads:\s+(\d+)", st, re.M)
        if m and t and int(m.group(1)) == uid:
            n += int(t.group(1))
    return n
line = re.compile(r"moat: cannot create the sandbox.s processes \([^)]+\): the caller.s process limit \(ulimit -u (\d+)\) is reached\n\Z")
err = tempfile.NamedTemporaryFile(prefix="moat-nproc")
bad, fails, n = [], 0, tasks() + 2
for n in range(n, n + 120, 2):
    rc, left = s.run(["timeout", "-k", "5", "20", "bash", "-c", "ulimit -u $1 && exec \"$2\" run -- /bin/true 2>\"$3\"", "-", str(n), os.environ["MOAT"], err.name])
    text = open(err.name).read()
    if rc == 0 and not left:
        break
    fails += 1
    m = line.match(text)
    if rc != 1 or left or not m or m.group(1) != str(n):
        bad.append("ulimit -u %d: rc %s, left %s: %r" % (n, rc, left or "none", text))
print("failed starts", "some" if fails else "none", "bad", bad or "none")
' "$HERE_INT" 2>&1)
	expect_eq nproc_limit_one_line "$out" "failed starts some bad none"
fi

# The same with moat-netd (--net allow=), moat-broker (--secret) and
# moat-publish (--publish): before red team 15 the three were left zombies
# ("left moat-broker:Z moat-netd:Z moat-publish:Z"); PDEATHSIG ended them,
# nothing reaped them. Nothing leaves the machine (192.0.2.1 is TEST-NET-1,
# never connected to).
out=$(MOAT="$MOAT" RT15_TOKEN=abcdefghijklmnopqrstuvwx "$PY" -c "$SUBREAPER"'
s.become()
_, hp = s.free_port()
rc, left = s.run([os.environ["MOAT"], "run", "--net", "allow=192.0.2.1:9", "--secret", "RT15_TOKEN@192.0.2.1:9",
                  "--publish", "%d:80" % hp, "--", "true"])
print("rc", rc, "left", left or "none")
' "$HERE_INT" 2>&1)
SANITY=1 expect_eq helpers_reaped_net "$out" "rc 0 left none"

# --export's deadline page (gofer/setup.c, a MAP_SHARED word the sentry
# writes and the gofer reads) is the gofer's and the sentry's only: before
# review 37 moat-netd and moat-broker, forked later, held it writable (one
# compromised could give the export up, or set a deadline where --timeout
# set none). Nothing leaves the machine (TEST-NET-1, never connected to).
out=$(RT15_TOKEN=abcdefghijklmnopqrstuvwx "$PY" - "$MOAT" "$HERE_INT" <<'PYEOF' 2>&1
import os, subprocess, sys, time
sys.path.insert(0, sys.argv[2])
from subreaper import kids
p = subprocess.Popen([sys.argv[1], "run", "--net", "allow=192.0.2.1:9", "--secret", "RT15_TOKEN@192.0.2.1:9",
                      "--", "sleep", "3"], stdin=subprocess.DEVNULL)
seen = {}
t = time.time()
while time.time() - t < 2.5 and len(seen) < 2:
    for c in kids(p.pid):
        try:
            comm = open("/proc/%d/comm" % c).read().strip()
            if comm in ("moat-netd", "moat-broker"):
                try:
                    seen[comm] = [l for l in open("/proc/%d/maps" % c) if " rw-s " in l and "/dev/zero" in l]
                except PermissionError:
                    seen[comm] = None  # (not dumpable: rootless, its maps are not ours to read)
        except OSError:
            pass
    time.sleep(0.05)
p.wait()
print(" ".join("%s:%s" % (k, "unreadable" if v is None else "shared" if v else "none") for k, v in sorted(seen.items())))
PYEOF
)
case $out in
*unreadable*) skip export_deadline_page_not_in_helpers "the helpers' maps are not readable here: $out" ;;
*) expect_eq export_deadline_page_not_in_helpers "$out" "moat-broker:none moat-netd:none" ;;
esac

# moat-init's idle pages of moat's rodata: text_trim (common/util.c) drops
# the moat text and rodata the init's set-up mapped, and nothing the idle
# init runs reads rodata again. Since initrows2 the init's filter was built
# from a rodata row table after the trim: one 64 KiB rodata folio (and a
# text folio) stayed mapped for good, only in the init (its PSS 265 -> 345
# KiB in the bench's measure; pss38). Counted: moat's r--p mappings but its
# RELRO (the one right before its rw-p data, relocated private copies).
out=$("$PY" - "$MOAT" "$HERE_INT" <<'PYEOF' 2>&1
import os, subprocess, sys, time
sys.path.insert(0, sys.argv[2])
from subreaper import kids
exe = os.path.realpath(sys.argv[1])
p = subprocess.Popen([sys.argv[1], "run", "--", "sleep", "4"], stdin=subprocess.DEVNULL)
time.sleep(1.5)
res = "no moat-init"
for c in kids(p.pid):
    try:
        if open("/proc/%d/comm" % c).read().strip() != "moat-init":
            continue
        maps, cur = [], None
        for l in open("/proc/%d/smaps" % c):
            f = l.split()
            if "-" in f[0] and len(f) >= 5 and not f[0].endswith(":"):
                cur = [f[1], f[-1] if len(f) >= 6 else "", 0]
                maps.append(cur)
            elif f[0] == "Rss:" and cur:
                cur[2] = int(f[1])
        kb = sum(m[2] for i, m in enumerate(maps) if m[1] == exe and m[0] == "r--p" and
                 not (i + 1 < len(maps) and maps[i + 1][1] == exe and maps[i + 1][0] == "rw-p"))
        res = "rodata %d KiB" % kb
    except PermissionError:
        res = "unreadable"
    except OSError:
        pass
p.wait()
print(res)
PYEOF
)
case $out in
unreadable) skip init_rodata_trimmed "moat-init's smaps is not readable here" ;;
*) expect_eq init_rodata_trimmed "$out" "rodata 0 KiB" ;;
esac

# moat's static TLS (PT_TLS's memory size): every thread of every moat
# process (the sentry's workers, the gofer's connection threads, the init's
# act thread) zeroes its whole block at its start, dirty pages each. Two 4
# KiB thread-local buffers made it 8.4 KiB (3 pages a thread, ~85 KiB of an
# idle sandbox's PSS; pss38): under a page now.
out=$("$PY" - "$MOAT" <<'PYEOF' 2>&1
import struct, sys
with open(sys.argv[1], "rb") as f:
    h = f.read(64)
    if h[:4] != b"\x7fELF" or h[4] != 2:
        print("not a 64-bit ELF")
        sys.exit()
    phoff, = struct.unpack_from("<Q", h, 32)
    phentsize, phnum = struct.unpack_from("<HH", h, 54)
    f.seek(phoff)
    ph = f.read(phentsize * phnum)
tls = [struct.unpack_from("<IIQQQQQQ", ph, i * phentsize)[6] for i in range(phnum)
       if struct.unpack_from("<I", ph, i * phentsize)[0] == 7]
print("tls %s" % ("under a page" if not tls or tls[0] < 4096 else "%d B" % tls[0]))
PYEOF
)
expect_eq static_tls_small "$out" "tls under a page"

# A set-up step that fails after the helpers, the gofer and the guest's init
# exist (here --publish of a port already in use, the last step before the
# program runs): moat's die() exited with them still its children, PDEATHSIG
# ended them and nobody reaped them (red team 16, on main: 'rc 2 left
# moat-broker:Z moat-gofer:Z moat-init:Z moat-netd:Z', moat-reopen too
# root-run, moat-cgroup with --memory). Nothing leaves the machine.
out=$(MOAT="$MOAT" RT16_TOKEN=abcdefghijklmnopqrstuvwx "$PY" -c "$SUBREAPER"'
s.become()
b, bp = s.free_port(listen=True)
res = []
for extra in ([], ["--memory", "256M"]):
    rc, left = s.run([os.environ["MOAT"], "run", "--net", "allow=192.0.2.1:9", "--secret", "RT16_TOKEN@192.0.2.1:9"] +
                     extra + ["--publish", "%d:80" % bp, "--", "true"], quiet=True)
    res.append("rc %d left %s" % (rc, left or "none"))
print("; ".join(res))
' "$HERE_INT" 2>&1)
expect_eq die_after_helpers_reaped "$out" "rc 2 left none; rc 2 left none"

# A crash of the sentry (MOAT_TEST_CRASH: a fault right after the guest's
# listener arrives) ends and reaps the same set (crash.c calls
# run_die_cleanup): before red team 16 every one was left a zombie ('rc 139
# left moat-broker:Z moat-gofer:Z moat-init:Z moat-netd:Z moat-publish:Z
# moat-reopen:Z', moat-cgroup:Z with --memory).
out=$(MOAT="$MOAT" MOAT_TEST_CRASH=1 RT16_TOKEN=abcdefghijklmnopqrstuvwx "$PY" -c "$SUBREAPER"'
s.become()
_, hp = s.free_port()
res = []
for extra in ([], ["--memory", "256M"]):
    rc, left = s.run([os.environ["MOAT"], "run", "--net", "allow=192.0.2.1:9", "--secret", "RT16_TOKEN@192.0.2.1:9",
                      "--publish", "%d:80" % hp] + extra + ["--", "true"], quiet=True)
    res.append("rc %d left %s" % (rc, left or "none"))
print("; ".join(res))
' "$HERE_INT" 2>&1)
expect_eq crash_reaps_children "$out" "rc 139 left none; rc 139 left none"

# A SIGTERM for moat in its first milliseconds, during set-up (before it
# forwards signals to the program): moat ends by it, and what it started is
# ended and reaped first. Before red team 16 it left moat-gofer, moat-broker,
# moat-netd, moat-reopen and the init as zombies ('... left moat-broker:Z
# moat-gofer:Z moat-init:Z moat-netd:Z moat-reopen:Z'). Several delays:
# set-up's length varies with the load. (A sanity case: a moat that starts
# nothing leaves nothing either.)
out=$(MOAT="$MOAT" RT16_TOKEN=abcdefghijklmnopqrstuvwx "$PY" -c "$SUBREAPER"'
s.become()
_, hp = s.free_port()
bad = []
for d in (0.002, 0.004, 0.006, 0.008, 0.010, 0.012):
    rc, left = s.run([os.environ["MOAT"], "run", "--kill-after", "1", "--net", "allow=192.0.2.1:9",
                      "--secret", "RT16_TOKEN@192.0.2.1:9", "--publish", "%d:80" % hp, "--", "sleep", "3"],
                     term_after=d, quiet=True)
    if left:
        bad.append("%g s: rc %d left %s" % (d, rc, left))
print("; ".join(bad) or "left none")
' "$HERE_INT" 2>&1)
SANITY=1 expect_eq setup_signal_reaps "$out" "left none"

# A sandbox's cgroup directories are made before moat-cgroup, which removes
# them at the end, is forked: moat killed in between left them for good
# (red team 85: 4 of 200 SIGKILLs 0-50 ms into start-up left empty
# moat-<id> directories in the v1 pids and cpu hierarchies). The next
# start sweeps its parent: an empty moat-<16 hex> older than a minute goes
# (rmdir only); a young one (a start-up in progress) and an old one with a
# process in it stay.
"$MOAT" run --memory 256M --result "$T_TMP/cg.json" -- /bin/true </dev/null >/dev/null 2>&1
cgp=$(result_field "$T_TMP/cg.json" cgroup)
if [ -z "$cgp" ] || [ ! -d "$(dirname "$cgp")" ]; then
	skip stale_cgroups_swept "no cgroup here (rootless without a delegated one)"
else
	cgd=$(dirname "$cgp")
	old=$cgd/moat-$(printf '%016x' $((S * 7919 + 1))) young=$cgd/moat-$(printf '%016x' $((S * 7919 + 2)))
	busy=$cgd/moat-$(printf '%016x' $((S * 7919 + 3)))
	at_exit "rmdir $old $young $busy 2>/dev/null"
	if mkdir "$old" "$young" "$busy" && touch -d '-5 min' "$old" "$busy"; then
		sleep $S.9 </dev/null >/dev/null 2>&1 &
		sp=$!
		at_exit "kill -9 $sp 2>/dev/null"
		echo $sp >"$busy/cgroup.procs"
		touch -d '-5 min' "$busy"
		"$MOAT" run --memory 256M -- /bin/true </dev/null >/dev/null 2>&1
		st="old $([ -d "$old" ] && echo kept || echo removed) young $([ -d "$young" ] && echo kept || echo removed)"
		st="$st busy $([ -d "$busy" ] && echo kept || echo removed)"
		kill -9 $sp 2>/dev/null; wait $sp 2>/dev/null
		for _ in $(seq 20); do rmdir "$busy" 2>/dev/null && break; sleep 0.1; done
		rmdir "$old" "$young" 2>/dev/null
		expect_eq stale_cgroups_swept "$st" "old removed young kept busy kept"
	else
		skip stale_cgroups_swept "cannot make cgroups in $cgd"
	fi
fi

# A SIGTERM forwarded to the program before the tracer has its seccomp
# listener: the program stopped for the signal while the tracer waited on
# the sync socket for the listener, and both stayed so until --kill-after
# (1-2 runs in 100 with a SIGTERM 5-30 ms after start). The program now
# starts with every signal blocked until the tracer has the listener; the
# test knob widens that window to 400 ms, the signal comes inside it.
s0=$(date +%s%N)
MOAT_TEST_LISTENER_DELAY_MS=400 "$MOAT" run --kill-after 6 -- sleep 10 </dev/null >/dev/null 2>&1 &
tp=$!
sleep 0.2
kill -TERM $tp 2>/dev/null
wait $tp
trc=$?
tms=$(( ($(date +%s%N) - s0) / 1000000 ))
[ $tms -lt 3000 ] && tw=prompt || tw="after $tms ms"
SANITY=1 expect_eq term_before_listener "$tw rc $trc" "prompt rc 143"

# The program's first stop reported before the init's fork event (a loaded
# machine's order; the test knob makes the tracer's first round take them
# so): the tracer released the program there without taking its seccomp
# listener, and its first trapped call waited for ever (--kill-after). It
# now goes through the same first-stop path as in the usual order.
out=$(MOAT_TEST_MAIN_STOP_FIRST=1 timeout 20 "$MOAT" run --kill-after 5 -- sh -c 'cat /etc/hostname; echo ok' </dev/null 2>/dev/null; echo "rc $?")
expect_eq main_stop_before_fork_event "$out" "moat
ok
rc 0"

# The init does not keep moat's set-up signal handler (setup_signal): with
# it, the guest's kill -TERM 1 ran that handler under the init's filter and
# ended the whole sandbox (rc 137); pid 1 drops them, as in a container.
# Only moat-init is signalled (natively pid 1 is the shield's or the host's
# init: the case says so and fails there; it was a sanity case that sent
# them to the host's init at every self-check).
out=$(mrun sh -c '[ "$(cat /proc/1/comm)" = moat-init ] || { echo "not in moat: pid 1 is $(cat /proc/1/comm)"; exit 0; }
kill -TERM 1; kill -INT 1; kill -HUP 1; kill -QUIT 1; sleep 0.2; echo alive' 2>/dev/null; echo "rc $?")
expect_eq init_ignores_guest_signals "$out" "alive
rc 0"

# The program starts with the caller's blocked and ignored signals, as a
# native exec would (nohup; a shell's background job ignores SIGINT and
# SIGQUIT): before, moat reset them all, and `nohup moat run ...` let a
# hang-up end the program.
sigs() { "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_IGN); signal.signal(signal.SIGQUIT, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
os.execvp(sys.argv[1], sys.argv[1:])' "$@"; }
want=$(sigs grep -E '^Sig(Blk|Ign)' /proc/self/status)
out=$(timeout -k 5 "${MOAT_TIMEOUT:-120}" "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_IGN); signal.signal(signal.SIGQUIT, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
os.execvp(sys.argv[1], sys.argv[1:])' "$MOAT" run -- grep -E '^Sig(Blk|Ign)' /proc/self/status 2>&1 </dev/null)
SANITY=1 expect_eq caller_signal_dispositions "$out" "$want"

# moat's own signal state is not the caller's (red team 40): the caller's
# blocked and ignored signals are the program's (above), but a caller that
# ignored SIGCHLD made the kernel reap moat's children itself, and moat's
# wait for one helper then waited for all of them: with --export the
# sentry waited for the gofer, which waited for the sentry (hung until
# killed); a caller that blocked SIGALRM held --kill-after's timer, so a
# program that ignores SIGTERM kept moat running after the SIGTERM until a
# second one. moat clears both for itself at start.
rm -rf "$T_TMP/sigexp"
timeout -k 2 20 "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$MOAT" run --export "$T_TMP/sigexp" -- /bin/sh -c "echo x >/etc/rt40-$T_MARK" </dev/null >/dev/null 2>&1
rc=$?
n=$(grep -c "rt40-$T_MARK" "$T_TMP/sigexp/root/manifest.json" 2>/dev/null)
expect_eq caller_sigchld_ignored_export "rc $rc exported ${n:-0}" "rc 0 exported 1"
"$PY" -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM, signal.SIGRTMIN + 2, signal.SIGWINCH])
os.execv(sys.argv[1], sys.argv[1:])' "$MOAT" run --kill-after 1s -- /bin/sh -c "trap '' TERM; echo ready; : $T_MARK; while :; do sleep 0.1; done" \
	</dev/null >"$T_TMP/sigalrm.out" 2>/dev/null &
pid=$!
for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/sigalrm.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
t0=$(date +%s%N)
kill -TERM $pid
wait_max $pid 6
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -le 3500 ] && ms=prompt || ms="after $ms ms"
expect_eq caller_sigalrm_blocked_kill_after "$rc $ms" "137 prompt"
SANITY=1 check caller_sigalrm_blocked_no_process_left gone "$T_MARK" 2

finish
