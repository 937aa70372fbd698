#!/bin/bash
# Limits (--memory, --pids, --cpus, --timeout, --idle-timeout, --output-limit)
# and --result: each bomb ends inside the sandbox with the right reason in
# --result, and afterwards no guest process (its argv carries $T_MARK) and no
# cgroup of the sandbox is left on the host. Every case runs only under moat,
# with --timeout as a backstop and lib.sh's timeout around moat. The bombs are
# bounded (300 forks, 1G) even so; this file is not in the fake-moat selfcheck
# on purpose (there they would run natively).
. "$(dirname "$0")/lib.sh"

at_exit 'for p in $(pgrep -f -- "$T_MARK"); do kill -9 $p; done'
R=$T_TMP/result.json

# field FILE KEY[.KEY]: a value of the --result JSON ("" when missing)
field() {
	"$PY" -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else str(v).lower() if isinstance(v, bool) else v)' "$1" "$2" 2>/dev/null
}
# no_leftovers NAME: no guest process and no cgroup of the last sandbox remain.
no_leftovers() {
	local i id left=""
	for ((i = 0; i < 100; i++)); do
		left=$(pgrep -af -- "$T_MARK" | grep -v pgrep)
		[ -z "$left" ] && break
		sleep 0.1
	done
	if [ -n "$left" ]; then fail "$1_no_process_left" "$left"; else ok "$1_no_process_left"; fi
	id=$(field "$R" sandbox)
	if [ -z "$id" ]; then fail "$1_no_cgroup_left" "no sandbox id in the result"; return; fi
	left=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "moat-$id" 2>/dev/null)
	if [ -n "$left" ]; then fail "$1_no_cgroup_left" "$left"; else ok "$1_no_cgroup_left"; fi
}
# run_limited NAME MOAT-OPTIONS... -- PROGRAM...: sets out, err, rc; the result in $R
run_limited() {
	shift
	rm -f "$R"
	out=$(moat run --result "$R" "$@" 2>"$T_TMP/err" </dev/null); rc=$?
	err=$(cat "$T_TMP/err")
}

# --- a normal exit, and a death by signal ---
run_limited plain -- /bin/sh -c 'echo hi; exit 3'
expect_eq result_exit "$rc $(field "$R" reason) $(field "$R" exit_code) $(field "$R" signal)" "3 exited 3 "
expect_eq result_exit_quiet "$err" ""
n=$(field "$R" syscalls.trapped)
if [ "${n:-0}" -gt 0 ]; then ok result_counts_trapped; else fail result_counts_trapped "trapped [$n]"; fi
run_limited signal -- /bin/sh -c 'kill -9 $$'
expect_eq result_signal "$rc $(field "$R" reason) $(field "$R" signal)" "137 killed-by-signal 9"

# a crash of the sentry still writes the result (and the guest dies with it)
rm -f "$R"
MOAT_TEST_CRASH=1 moat run --result "$R" -- /bin/sh -c 'sleep 300; echo "$0"' "$T_MARK" </dev/null >/dev/null 2>&1
expect_eq result_sentry_crash "$(field "$R" reason)" sentry-error
no_leftovers crash

# --- a fork bomb under --pids 64 (bounded: forks until the first failure) ---
run_limited pids --pids 64 --timeout 60s -- "$PY" -c '
import os, sys, time, errno
n = 0
try:
    while n < 300:
        pid = os.fork()
        if pid == 0:
            time.sleep(120); os._exit(0)
        n += 1
except OSError as e:
    print("forks", n, errno.errorcode[e.errno])
' "$T_MARK"
set -- $out
if [ "${1:-}" = forks ] && [ "${2:-999}" -le 63 ] && [ "${3:-}" = EAGAIN ]; then ok pids_fork_fails_eagain
else fail pids_fork_fails_eagain "rc $rc out [$out] err [$err]"; fi
expect_eq pids_reason "$(field "$R" reason)" pids
p=$(field "$R" pids_peak)
if [ -n "$p" ] && [ "$p" -le 64 ] && [ "$p" -ge 60 ]; then ok pids_peak_reported; else fail pids_peak_reported "pids_peak [$p]"; fi
case $err in *"--pids 64 reached"*) ok pids_stderr_line ;; *) fail pids_stderr_line "[$err]" ;; esac
no_leftovers pids
# the host still forks
check host_forks_after_bomb /bin/true

# --- allocating past --memory 256M ---
run_limited memory --memory 256M --timeout 60s -- "$PY" -c '
b = bytearray()
try:
    while len(b) < (1 << 30):
        b += bytearray(16 << 20)
    print("allocated", len(b) >> 20)
except MemoryError:
    print("MemoryError")
' "$T_MARK"
by=$(field "$R" limits.memory_by)
if [ "$by" = cgroup ]; then
	expect_eq memory_reason "$(field "$R" reason) $(field "$R" signal)" "memory 9"
	case $err in *"killed: --memory 256M reached"*) ok memory_stderr_line ;; *) fail memory_stderr_line "[$err]" ;; esac
	p=$(field "$R" peak_memory_bytes)
	if [ -n "$p" ] && [ "$p" -le $((256 << 20)) ] && [ "$p" -ge $((128 << 20)) ]; then ok memory_peak
	else fail memory_peak "peak [$p]"; fi
else
	# no memory controller we may use: RLIMIT_DATA fails the allocation
	expect_eq memory_rlimit_fails_allocation "$out" MemoryError
	skip memory_reason "no memory cgroup ($(id -un)): one process meets RLIMIT_DATA (MemoryError) before a PSS sample; the tree case holds the total"
fi
no_leftovers memory

# --- a tree of four processes of 100M each under --memory 256M: the total counts ---
run_limited memory_tree --memory 256M --timeout 60s -- "$PY" -c '
import os, time
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        b = bytearray(100 << 20)
        for j in range(0, len(b), 4096): b[j] = 1
        time.sleep(120); os._exit(0)
    kids.append(pid)
for k in kids: os.waitpid(k, 0)
print("all allocated")
' "$T_MARK"
expect_eq memory_tree_reason "$(field "$R" reason)" memory
case $err in *"killed: --memory 256M reached"*) ok memory_tree_stderr_line ;; *) fail memory_tree_stderr_line "[$err]" ;; esac
no_leftovers memory_tree

# The OOM killer's order in the sandbox's memory cgroup, which the sentry
# joins too (red team 17): the guest (1000), then the gofer, never the sentry
# first (it writes --result and removes the cgroup). Before: sentry and gofer
# both 0 where root lacks CAP_SYS_RESOURCE (this VM), and a 96M copy-up under
# --memory 32M once killed the sentry (memory_copyup_refused, no result).
if [ "$(id -u)" = 0 ]; then
	"$MOAT" run --memory 64M -- /bin/sleep 2 </dev/null >/dev/null 2>&1 &
	mpid=$!
	g="" s=""
	# (until the gofer is there or moat has ended, 30 s at most: a loaded
	# CPU may take the guest's 2 s to start it)
	for ((i = 0; i < 600; i++)); do
		g=$(ps -eo pid=,ppid=,comm= | awk -v p="$mpid" '$2 == p && $3 == "moat-gofer" {print $1}')
		[ -n "$g" ] && break
		kill -0 "$mpid" 2>/dev/null || break
		sleep 0.05
	done
	ga=$(cat "/proc/$g/oom_score_adj" 2>/dev/null) sa=$(cat "/proc/$mpid/oom_score_adj" 2>/dev/null)
	wait "$mpid"
	if [ -n "$ga" ] && [ -n "$sa" ] && { [ "$sa" = -1000 ] || [ "$ga" -gt "$sa" ]; }; then ok oom_order_gofer_before_sentry
	else fail oom_order_gofer_before_sentry "gofer [$ga] sentry [$sa]"; fi
fi

# --- memory the gofer holds for the guest counts too: a copy-up of a 96M
# lower file in a cow bind, and 20,000 long symlinks in /tmp (a page of
# tmpfs each), under --memory 32M. Root-run the gofer is in the memory
# cgroup; without one the in-memory layers are a pool of --memory bytes
# whose use the watchdog adds to the tree's PSS. Before: both "exited". ---
mkdir -p "$T_TMP/cowsrc"
head -c $((96 << 20)) /dev/zero >"$T_TMP/cowsrc/big"
run_limited memory_copyup --memory 32M --timeout 60s --bind "$T_TMP/cowsrc:/c:cow" -- /bin/sh -c '
: >>/c/big && echo copied; sleep 3; echo "$0"' "$T_MARK"
if [ "$(field "$R" limits.memory_by)" = cgroup ]; then
	expect_eq memory_copyup_reason "$(field "$R" reason)" memory
else
	# the pool of 32M refuses the copy-up (ENOSPC), or the watchdog saw it
	# full first (reason memory); the copy never completes
	case $out$err in *copied*) fail memory_copyup_refused "a 96M copy-up under --memory 32M: [$out] [$err]" ;;
	*"No space left"* | *"killed: --memory 32M reached"*) ok memory_copyup_refused ;;
	*) fail memory_copyup_refused "[$out] [$err]" ;; esac
fi
no_leftovers memory_copyup
rm -f "$T_TMP/cowsrc/big"
run_limited memory_symlinks --memory 32M --timeout 60s -- "$PY" -c '
import os, sys, time
t = "x" * 3000
for i in range(20000):
    try: os.symlink(t, "/tmp/l%d" % i)
    except OSError as e: print("symlink", i, e.strerror); break
time.sleep(3); print("made them", sys.argv[1])' "$T_MARK"
expect_eq memory_symlinks_reason "$(field "$R" reason)" memory
no_leftovers memory_symlinks
# a file written natively in /tmp through the fd the gofer gave
run_limited memory_tmpfile --memory 32M --timeout 60s -- /bin/sh -c '
dd if=/dev/zero of=/tmp/big bs=1M count=96 2>/dev/null; sleep 3; echo "$0"' "$T_MARK"
expect_eq memory_tmpfile_reason "$(field "$R" reason)" memory
no_leftovers memory_tmpfile

# --- an --export the gofer cannot finish (red team 18): the guest fills the
# root overlay's in-memory layer with 12M, then writes an 8M file whose diff
# the gofer reads at export time, under --memory 32M: the gofer (in the
# memory cgroup, no CAP_SYS_RESOURCE to leave the OOM killer's list) is
# killed while it writes the patch. Before: exit 0 and a changes.patch cut
# at a 4096-byte flush (sized right, at a file boundary: git apply took the
# first files alone); a death before the patch kept the last run's. ---
moat run --export "$T_TMP/exp" -- /bin/sh -c 'echo old >/usr/prev' </dev/null >/dev/null 2>&1
run_limited export_oom --memory 32M --timeout 60s --export "$T_TMP/exp" -- /bin/sh -c '
echo a >/usr/a1; head -c 8M /dev/urandom >/usr/m_big
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do head -c 1M /dev/urandom >/usr/z$i; done; echo "$0"' "$T_MARK"
if [ "$(field "$R" limits.memory_by)" != cgroup ]; then
	skip export_oom_no_partial_patch "no memory cgroup: the gofer is not in one"
	skip export_oom_no_part_files "no memory cgroup: the gofer is not in one"
elif [ ! -e "$T_TMP/exp/root/changes.patch" ] && [ "$rc" -ne 0 ]; then
	ok export_oom_no_partial_patch
	# nothing of it at all: no ".part" file left for the caller (stop 24:
	# the outputs are unnamed until complete)
	left=$(ls -A "$T_TMP/exp/root" 2>/dev/null)
	if [ -z "$left" ]; then ok export_oom_no_part_files; else fail export_oom_no_part_files "[$left]"; fi
else
	fail export_oom_no_partial_patch "rc $rc, $(ls -la "$T_TMP/exp/root" | tr '\n' ' ') [$err]"
fi
no_leftovers export_oom

# --- --timeout bounds the export too (red team 68): the guest rewrites 16
# files of a cow bind in shuffled order (each line diff runs to its bound,
# seconds of gofer work in all), then sleeps past --timeout 1s. Before: moat
# ran ~8 s and left the patch; now the export is given up 2 s past the
# timeout (killed a second later at most) and no patch is left. A previous
# export's patch is gone too (the group is cleared first). ~3.5 s. ---
mkdir -p "$T_TMP/tsrc" "$T_TMP/texp/w"
"$PY" -c '
import sys
for i in range(16):
    open(sys.argv[1] + "/f%02d" % i, "w").write("".join("line %d of %d\n" % (k, i) for k in range(10000)))
' "$T_TMP/tsrc"
echo stale >"$T_TMP/texp/w/changes.patch"
t0=$(date +%s%N)
run_limited export_timeout --timeout 1s --bind "$T_TMP/tsrc:/w:cow" --export "$T_TMP/texp" -- "$PY" -c '
import os, random, sys, time
for n in sorted(os.listdir("/w")):
    l = open("/w/" + n).read().splitlines(True)
    random.shuffle(l)
    open("/w/" + n, "w").writelines(l)
print("written", flush=True)
time.sleep(60)
' "$T_MARK"
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$out" != written ]; then
	skip export_timeout_bounded "the guest did not write its files within 1 s (a loaded machine): [$out]"
else
	# 1 s + 2 s grace + 1 s before the kill, + start-up and slack
	if [ "$ms" -le 5500 ] && [ "$rc" -ne 0 ]; then ok export_timeout_bounded
	else fail export_timeout_bounded "rc $rc after $ms ms [$err]"; fi
	case $err in
	*"--export $T_TMP/texp: not written: --timeout 1s reached during the export"*) ok export_timeout_said ;;
	*) fail export_timeout_said "[$err]" ;;
	esac
	left=$(ls -A "$T_TMP/texp/w" 2>/dev/null)
	if [ -z "$left" ]; then ok export_timeout_nothing_left; else fail export_timeout_nothing_left "[$left]"; fi
fi
expect_eq export_timeout_reason "$(field "$R" reason)" timeout
no_leftovers export_timeout
# an export well within --timeout is written as ever
run_limited export_in_time --timeout 60s --bind "$T_TMP/tsrc:/w:cow" --export "$T_TMP/texp" -- /bin/sh -c 'echo new >>/w/f00'
if [ "$rc" -eq 0 ] && grep -q '^+new$' "$T_TMP/texp/w/changes.patch" 2>/dev/null; then ok export_in_time_written
else fail export_in_time_written "rc $rc [$err] $(ls -A "$T_TMP/texp/w" 2>&1)"; fi

# Python that defines vma_bomb(poke): one untouched PROT_NONE reservation
# split into N (60,000) VMAs by an mprotect of every other page; poke() (if
# any) every 500 (a guest that stays busy meanwhile)
VMA_BOMB='import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
N = 60000
def vma_bomb(poke=None):
    base = libc.mmap(None, 2 * N * 4096, 0, 0x22, -1, 0)
    for i in range(N):
        if libc.mprotect(base + 2 * i * 4096, 4096, 1):
            break
        if poke and i % 500 == 0:
            poke()
'

# --- kernel memory outside any PSS (red team 68): 4 processes each split one
# untouched PROT_NONE reservation into 60,000 VMAs (mprotect of every other
# page: ~13 MB of host slab each, no page, no page table). Rootless without a
# cgroup the sample now counts maps lines x 256 B; before: peak 9.8 MB, the
# run went on to its timeout. A memory cgroup charges the slab anyway. Bounded
# by the kernel's max_map_count per process and 4 processes. ~1 s. ---
run_limited vma_bomb --memory 32M --pids 16 --timeout 20s -- "$PY" -c "$VMA_BOMB"'
for k in range(4):
    if os.fork() == 0:
        vma_bomb()
        time.sleep(30)
        os._exit(0)
os.wait()
' "$T_MARK"
expect_eq vma_bomb_reason "$(field "$R" reason)" memory
no_leftovers vma_bomb
# --- the memory sample's own cost (red team 78): rootless without a cgroup
# the watchdog reads each guest process's smaps_rollup, which walks its
# mappings (~6 ms at 60,000 VMAs), every 50 ms. Eight guest processes that
# only sleep with 60,000 VMAs each kept 0.64 of a CPU busy in the sentry,
# outside any cgroup, for as long as they slept. Now a sample comes at most
# as often as its cost allows a fifth of a CPU (measured 0.09). Measured
# from outside: the sentry's (moat's own) CPU over 2 s once all are ready.
# ~3 s, rootless only (a memory cgroup needs no sample). ---
if [ "$(field "$R" limits.memory_by)" = cgroup ]; then
	skip memory_sample_cost_bounded "a memory cgroup: no PSS sample"
else
	t=$("$PY" - "$MOAT" "$T_MARK" 8 "$VMA_BOMB" <<'PYEOF'
import os, subprocess, sys, time
moat, mark, nproc = sys.argv[1], sys.argv[2], int(sys.argv[3])
g = sys.argv[4] + r'''
P = int(sys.argv[1])
r, w = os.pipe()
for k in range(P):
    if os.fork() == 0:
        vma_bomb()
        os.write(w, b"r")
        time.sleep(30)
        os._exit(0)
n = 0
while n < P:
    n += len(os.read(r, P))
print("ready", flush=True)
time.sleep(30)
'''
p = subprocess.Popen([moat, "run", "--memory", "1G", "--pids", "16", "--timeout", "15s", "--", "/usr/bin/python3", "-c", g, str(nproc), mark],
                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def cpu():
    t = 0
    for d in os.listdir("/proc/%d/task" % p.pid):
        with open("/proc/%d/task/%s/stat" % (p.pid, d)) as f:
            v = f.read().rsplit(")", 1)[1].split()
        t += int(v[11]) + int(v[12])
    return t / os.sysconf("SC_CLK_TCK")
line = p.stdout.readline()
if line.strip() != b"ready":
    print("noready %r" % line); p.kill(); p.wait(); sys.exit(0)
time.sleep(0.3)
c0, t0 = cpu(), time.time()
time.sleep(2)
c1, t1 = cpu(), time.time()
p.terminate()
p.wait()
print("%.2f" % ((c1 - c0) / (t1 - t0)))
PYEOF
)
	if "$PY" -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 0.35 else 1)" "$t" 2>/dev/null; then
		ok memory_sample_cost_bounded
	else
		fail memory_sample_cost_bounded "the sentry used [$t] of a CPU while 8 guest processes with 60,000 VMAs each slept"
	fi
fi

# --- a sample cut short at --idle-timeout (review 37): the cut was at a
# deadline taken when the sample began, so a guest that stayed busy had
# every sample costlier than --idle-timeout cut, and its processes past the
# cut (higher pids) never counted: 3 x 200 MB held under --memory 512M
# --idle-timeout 60ms for 6 s (peak_memory_bytes 14 MB). Now a cut is at
# the latest activity and ends the run (idle). Rootless only (~3 s). ---
if [ "$(field "$R" limits.memory_by)" = cgroup ]; then
	skip memory_sample_cut_counted "a memory cgroup: no PSS sample"
else
	run_limited memory_sample_cut --memory 512M --pids 24 --idle-timeout 60ms --timeout 20s -- "$PY" -c "$VMA_BOMB"'
P = 12
def busy():
    while True:
        os.uname()
        time.sleep(0.005)
r, w = os.pipe()
for k in range(P):
    if os.fork() == 0:
        vma_bomb(os.uname)
        os.write(w, b"r")
        busy()
n = 0
os.set_blocking(r, False)
while n < P:
    try:
        n += len(os.read(r, P))
    except BlockingIOError:
        os.uname()
        time.sleep(0.005)
for k in range(3):
    if os.fork() == 0:
        b = bytearray(200 << 20)
        for i in range(0, len(b), 4096):
            b[i] = 1
        busy()
t = time.time()
while time.time() - t < 6:
    os.uname()
    time.sleep(0.005)
print("survived", flush=True)
os._exit(0)
' "$T_MARK"
	expect_eq memory_sample_cut_counted "$(field "$R" reason) $out" "memory "
	no_leftovers memory_sample_cut
fi

# --- the sentry killed (SIGKILL, as an OOM kill in the --memory cgroup it
# has been in since red team 17 would): the cgroup helper says so in one
# line and removes the rest. Before (red team 18): 137 and not a word. ---
run_limited cg_probe --memory 256M -- /bin/true
if [ "$(field "$R" limits.memory_by)" != cgroup ]; then
	skip sentry_killed_one_line "no memory cgroup: no cleanup helper outlives the sentry"
else
"$MOAT" run --memory 256M -- /bin/sh -c 'sleep 30; echo "$0"' "$T_MARK" </dev/null >/dev/null 2>"$T_TMP/killed.err" &
kpid=$!
# (the guest's sh: its argv starts with /bin/sh, moat's with moat's path)
for ((i = 0; i < 600; i++)); do pgrep -f -- "^/bin/sh -c sleep 30; echo .* $T_MARK" >/dev/null && break; sleep 0.05; done
kill -9 $kpid
wait $kpid 2>/dev/null
for ((i = 0; i < 300; i++)); do grep -q "sentry was killed" "$T_TMP/killed.err" && break; sleep 0.05; done
case $(cat "$T_TMP/killed.err") in
*"moat: the sandbox ended: moat's sentry was killed; its processes and cgroup are removed"*) ok sentry_killed_one_line ;;
*) fail sentry_killed_one_line "[$(cat "$T_TMP/killed.err")]" ;;
esac
fi
left=""
for ((i = 0; i < 150; i++)); do left=$(pgrep -af -- "$T_MARK" | grep -v pgrep); [ -z "$left" ] && break; sleep 0.1; done
if [ -n "$left" ]; then fail sentry_killed_no_process_left "$left"; else ok sentry_killed_no_process_left; fi

# --- while true under --timeout 2s ---
start=$(date +%s%N)
run_limited timeout --timeout 2s -- /bin/sh -c 'while :; do :; done' "$T_MARK"
ms=$((($(date +%s%N) - start) / 1000000))
expect_eq timeout_reason "$(field "$R" reason)" timeout
if [ "$ms" -ge 1900 ] && [ "$ms" -le 8000 ]; then ok timeout_on_time; else fail timeout_on_time "${ms} ms"; fi
expect_eq timeout_stderr_line "$err" "moat: killed: --timeout 2s reached"
no_leftovers timeout

# --- a guest that exits 0 at the SIGTERM round: the run did not complete,
# moat's status is not 0 (red team 21: it was the program's 0, a timed-out
# run looked like a success to a caller checking $?) ---
run_limited timeout_exit0 --timeout 1s -- /bin/sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done' "$T_MARK"
expect_eq timeout_not_success "$rc $(field "$R" reason) $(field "$R" status) $(field "$R" exit_code)" "143 timeout 143 0"
no_leftovers timeout_exit0

# --- a guest that ignores SIGTERM (and its child, in a session of its own) ---
run_limited ignore_term --timeout 1s -- /bin/bash -c 'trap "" TERM HUP INT
setsid /bin/bash -c "trap \"\" TERM HUP INT; while :; do sleep 0.1; done" "$0" &
while :; do :; done' "$T_MARK"
expect_eq ignore_term_reason "$(field "$R" reason) $(field "$R" signal)" "timeout 9"
no_leftovers ignore_term

# --- yes under --output-limit 1M ---
rm -f "$R"
n=$(moat run --result "$R" --output-limit 1M --timeout 60s -- /usr/bin/yes "$T_MARK" 2>"$T_TMP/err" </dev/null | wc -c)
expect_eq output_capped_at_1M "$n" 1048576
# (a caller that ignores SIGPIPE, a nohup-like runner: tests/ci-env.sh, passes
# that on as exec does, and yes ends on EPIPE, not of the signal, natively too)
sig=13
[ $((0x$(sed -n 's/^SigIgn:\t//p' /proc/$$/status) >> 12 & 1)) = 1 ] && sig=
expect_eq output_reason "$(field "$R" reason) $(field "$R" output_cut) $(field "$R" signal)" "output-limit true $sig"
case $(cat "$T_TMP/err") in *"--output-limit 1M reached"*) ok output_stderr_line ;; *) fail output_stderr_line "[$(cat "$T_TMP/err")]" ;; esac
no_leftovers output
# under the cap nothing changes: both streams, in full
run_limited output_small --output-limit 1K -- /bin/sh -c 'echo out; echo err >&2'
expect_eq output_under_cap "$out|$err|$(field "$R" reason)" "out|err|exited"

# --- a stdout nobody reads (red team 28): the relay's write to the caller's
# fd blocks, as the program's would natively; --timeout, or a SIGTERM to
# moat, must still end moat (before, it ran until the reader died, and
# ignored SIGTERM). The FIFO is held open for reading by this shell (fd 8)
# and never read.
mkfifo "$T_TMP/stuck"
exec 8<>"$T_TMP/stuck"
at_exit 'exec 8>&-'
rm -f "$R"
t0=$(date +%s%N)
MOAT_TIMEOUT=30 moat run --result "$R" --output-limit 1G --timeout 2s -- /usr/bin/yes "$T_MARK" \
	>"$T_TMP/stuck" 2>"$T_TMP/err" </dev/null; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$ms" -lt 10000 ]; then ok stuck_reader_timeout_ends; else fail stuck_reader_timeout_ends "moat ran ${ms} ms under --timeout 2s"; fi
expect_eq stuck_reader_timeout_reason "$rc $(field "$R" reason) $(field "$R" output_cut)" "143 timeout true"
no_leftovers stuck_reader
rm -f "$R"
t0=$(date +%s%N)
timeout --foreground -k 20 30 "$MOAT" run --result "$R" --output-limit 1G -- /bin/sh -c 'head -c 400000 /dev/zero; echo "$0"' "$T_MARK" \
	>"$T_TMP/stuck" 2>"$T_TMP/err" </dev/null &
mp=$!
at_exit "kill -9 $mp"
sleep 1
# one SIGTERM, as a caller sends it (timeout without --foreground also sends
# it to its process group, moat included: a second SIGTERM, which --kill-after
# answers with SIGKILL, rc 137: CI's failure of stop 26)
kill -TERM $mp
wait $mp; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$ms" -lt 8000 ]; then ok stuck_reader_sigterm_ends; else fail stuck_reader_sigterm_ends "moat ran ${ms} ms after SIGTERM (rc $rc)"; fi
expect_eq stuck_reader_sigterm_result "$rc $(field "$R" output_cut)" "143 true"
case $(cat "$T_TMP/err") in *"output was dropped"*) ok stuck_reader_stderr_line ;; *) fail stuck_reader_stderr_line "[$(cat "$T_TMP/err")]" ;; esac
# moat's own stderr nobody reads: --trace lines (written by the sentry's
# workers) and moat's last line must not keep moat past --timeout either
for c in "trace|--trace|while :; do cat /etc/hostname >/dev/null; done" "stderr||yes >&2"; do
	IFS='|' read -r n o p <<<"$c"
	rm -f "$R"
	t0=$(date +%s%N)
	MOAT_TIMEOUT=30 moat run --result "$R" $o --timeout 2s -- /bin/sh -c "$p" "$T_MARK" \
		2>"$T_TMP/stuck" >/dev/null </dev/null; rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$ms" -lt 10000 ]; then ok "stuck_${n}_timeout_ends"; else fail "stuck_${n}_timeout_ends" "moat ran ${ms} ms under --timeout 2s"; fi
	expect_eq "stuck_${n}_timeout_reason" "$rc $(field "$R" reason)" "143 timeout"
done
exec 8>&-

# -t: the pty relay applies the cap (the guest's output is dropped past it and the sandbox ends)
if command -v script >/dev/null; then
	rm -f "$R"
	n=$(SHELL=/bin/bash timeout 60 script -qc "$(printf '%q ' "$MOAT" run -t --result "$R" --output-limit 1K --timeout 30s -- /usr/bin/yes "$T_MARK")" /dev/null </dev/null 2>/dev/null | wc -c)
	expect_eq tty_output_reason "$(field "$R" reason) $(field "$R" stdout_bytes)" "output-limit 1024"
	if [ "$n" -ge 1024 ] && [ "$n" -le 1400 ]; then ok tty_output_capped; else fail tty_output_capped "$n bytes"; fi
	no_leftovers tty_output
else
	skip tty_output_capped "no script(1)"
fi

# without -t, the caller's terminal as stdin (read-write, as a shell's is):
# writes to fd 0, a dup of it and a /proc/self/fd/0 reopen must not go past
# --output-limit (red team round 10: 3 MB of 'Z' reached the terminal
# through fd 0 under a 1K cap). The terminal stays the program's stdin.
if command -v script >/dev/null; then
	n=$(SHELL=/bin/bash timeout 60 script -qc "$(printf '%q ' "$MOAT" run --output-limit 1K --timeout 30s -- /bin/sh -c 'test -t 0 && echo STDIN_TTY; python3 -c "import os
n = 0
def w(fd):
    global n
    try:
        for _ in range(100): n += os.write(fd, b\"Z\" * 10000)
    except OSError: pass
w(0); w(os.dup(0))
try: w(os.open(\"/proc/self/fd/0\", os.O_WRONLY))
except OSError: pass"')" /dev/null </dev/null 2>/dev/null)
	case $n in *STDIN_TTY*) ok stdin_tty_kept ;; *) fail stdin_tty_kept "${n:0:200}" ;; esac
	z=$(printf '%s' "$n" | tr -cd Z | wc -c)
	if [ "$z" -le 1024 ]; then ok stdin_tty_output_capped; else fail stdin_tty_output_capped "$z bytes through stdin"; fi
	no_leftovers stdin_tty_output
else
	skip stdin_tty_output_capped "no script(1)"
fi

# --- --idle-timeout: output, then silence ---
run_limited idle --idle-timeout 1s --timeout 60s -- /bin/sh -c 'echo a; sleep 0.4; echo b; sleep 30; echo never' "$T_MARK"
expect_eq idle_reason "$(echo $out) $(field "$R" reason)" "a b idle-timeout"
no_leftovers idle

# --- a daemon that double-forks and calls setsid is gone when moat exits ---
run_limited daemon -- /bin/sh -c '(setsid /bin/sh -c "sleep 300; : $0" </dev/null >/dev/null 2>&1 &); echo started' "$T_MARK"
expect_eq daemon_started "$out" started
no_leftovers daemon

# --- moat killed with SIGKILL: the helper still removes the cgroup, the guest dies ---
"$MOAT" run --memory 512M -- /bin/sh -c 'sleep 300; echo "$0"' "$T_MARK" </dev/null >/dev/null 2>&1 &
mpid=$!
# the guest's cgroup, whichever hierarchy holds it (a path ending in
# /moat-<id>). The sentry moves moat-init into it before it lets the init go
# on (spawn.c: attach, then "G"), so the program the init forks is in it from
# its birth: one look once the guest's shell runs. (Before: up to 300 looks
# at every "sleep 300; echo" process, moat's own included, 0.1 s apart, all
# of them in vain where no cgroup is made: 30-230 s of the rootless tier.)
gp=""
for ((i = 0; i < 300; i++)); do
	gp=$(pgrep -f -- "^/bin/sh -c sleep 300; echo .* $T_MARK" | head -1)
	[ -n "$gp" ] && break
	sleep 0.1
done
cg=""
[ -n "$gp" ] && cg=$(sed -n 's/^[0-9]*:[^:]*:\(.*\/moat-[0-9a-f]*\)$/\1/p' "/proc/$gp/cgroup" 2>/dev/null | head -1)
kill -9 "$mpid"; { wait "$mpid"; } 2>/dev/null
left=""
for ((i = 0; i < 150; i++)); do left=$(pgrep -af -- "$T_MARK" | grep -v pgrep); [ -z "$left" ] && break; sleep 0.1; done
expect_eq kill9_no_process_left "$left" ""
if [ -n "$cg" ]; then
	dirs=""
	for ((i = 0; i < 150; i++)); do
		dirs=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "$(basename "$cg")" 2>/dev/null)
		[ -z "$dirs" ] && break
		sleep 0.1
	done
	expect_eq kill9_no_cgroup_left "$dirs" ""
else
	skip kill9_no_cgroup_left "no cgroup for this sandbox ($(id -un))"
fi

# --- the sentry keeps no root-opened cgroup.procs fd (it could move host processes) ---
"$MOAT" run --memory 512M --pids 100 -- /bin/sh -c 'sleep 300; echo "$0"' "$T_MARK" </dev/null >/dev/null 2>&1 &
mpid=$!
# the guest's shell runs: the sentry's set-up (its cgroup fds) is done (the
# pattern "sleep 300; echo" alone matched moat's own command line at once)
for ((i = 0; i < 300; i++)); do pgrep -f -- "^/bin/sh -c sleep 300; echo .* $T_MARK" >/dev/null && break; sleep 0.1; done
fds=$(ls -l "/proc/$mpid/fd" 2>/dev/null)
# (and, red team 17, the sentry is in the sandbox's memory cgroup: its
# workers' memory for the guest counts against --memory)
memcg=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' "/proc/$mpid/cgroup" 2>/dev/null || grep '^0::' "/proc/$mpid/cgroup" 2>/dev/null)
procs=$(printf '%s\n' "$fds" | grep -c 'moat-[0-9a-f]*/\(cgroup\.procs\|tasks\)$')
counters=$(printf '%s\n' "$fds" | grep -c 'moat-[0-9a-f]*/[a-z]')
kill -9 "$mpid"; { wait "$mpid"; } 2>/dev/null
if [ -z "$fds" ]; then skip sentry_no_cgroup_procs_fd "cannot read /proc/$mpid/fd ($(id -un))"
elif [ "$counters" -eq 0 ]; then skip sentry_no_cgroup_procs_fd "no cgroup for this sandbox ($(id -un))"
else
	expect_eq sentry_no_cgroup_procs_fd "$procs" 0
	case $memcg in */moat-*) ok sentry_in_memory_cgroup ;; *) fail sentry_in_memory_cgroup "$memcg" ;; esac
fi

# --- guest tasks asleep in trapped waits cost the sentry little CPU (red
#     team 65): each waiting worker looks for its task's signals (a /proc
#     status read) every 20 ms whatever their number; 1000 guest threads in
#     FIFO opens or flock waits kept the sentry at 1.1-1.3 CPUs while the
#     guest used none. Now all waiters together look ~2000 times a second
#     (wait_poll_ms). Counted: the sentry's read calls in one second
#     (/proc/PID/io syscr, ~15,000 before with 300 waiters). ---
rm -f "$T_TMP/waiters.out"
"$MOAT" run --timeout 30s -- "$PY" -c '
import os, sys, threading, time
threading.stack_size(32768)
os.mkfifo("/tmp/ff")
for i in range(300):
    threading.Thread(target=lambda: open("/tmp/ff"), daemon=True).start()
print("ready", flush=True); time.sleep(30); print(sys.argv[1])' "$T_MARK" </dev/null >"$T_TMP/waiters.out" 2>&1 &
mpid=$!
for ((i = 0; i < 100; i++)); do grep -q ready "$T_TMP/waiters.out" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
r0=$(awk '/^syscr/{print $2}' "/proc/$mpid/io" 2>/dev/null)
sleep 1
r1=$(awk '/^syscr/{print $2}' "/proc/$mpid/io" 2>/dev/null)
kill -TERM "$mpid"; { wait "$mpid"; } 2>/dev/null
if [ -z "$r0" ] || [ -z "$r1" ]; then
	skip waiters_poll_bounded "cannot read /proc/$mpid/io ($(id -un)) [$(cat "$T_TMP/waiters.out")]"
elif [ $((r1 - r0)) -lt 5000 ]; then
	ok waiters_poll_bounded
else
	fail waiters_poll_bounded "the sentry made $((r1 - r0)) reads in 1 s with 300 guest threads asleep in FIFO opens"
fi

# --- a change of one file's locks wakes only the waiters of files in its
#     bucket (red team 65): every flock, unlock or lease change woke every
#     lock waiter of the sandbox, so 600 threads waiting on /tmp/a made
#     another thread's flock/unlock pairs on /tmp/b run at 0.7-4.6% of
#     their rate with no waiter (1000 waiters: ~45 a second, the sentry at
#     0.4-1 CPU); now 23-45% (the rate with none first: the case compares the
#     two, so a loaded machine slows both; the best of up to eight quarter
#     seconds once they wait, as the sentry's 300 waiting workers start). ---
out=$(moat run --timeout 20s -- "$PY" -c '
import fcntl, os, sys, threading, time
threading.stack_size(32768)
b = os.open("/tmp/b", os.O_RDWR | os.O_CREAT, 0o644)
def pairs(d):
    n, t0 = 0, time.monotonic()
    while time.monotonic() - t0 < d:
        fcntl.flock(b, fcntl.LOCK_EX); fcntl.flock(b, fcntl.LOCK_UN); n += 1
    return n / d
alone = pairs(0.3)
a = os.open("/tmp/a", os.O_RDWR | os.O_CREAT, 0o644); fcntl.flock(a, fcntl.LOCK_EX)
def w():
    fcntl.flock(os.open("/tmp/a", os.O_RDWR), fcntl.LOCK_EX)
for i in range(600):
    threading.Thread(target=w, daemon=True).start()
time.sleep(0.5)
best = 0
for i in range(8):  # the waiters settle (600 workers started) under load
    best = max(best, pairs(0.25))
    if best * 8 >= alone:
        break
print(int(alone), int(best), flush=True)
os._exit(0)' "$T_MARK" 2>&1 </dev/null)
read -r alone busy <<<"$out"
if [ "${busy:-0}" -gt 0 ] 2>/dev/null && [ $((busy * 8)) -ge "${alone:-1}" ]; then ok lock_waiters_woken_by_file
else fail lock_waiters_woken_by_file "flock/unlock pairs a second on /tmp/b: $alone alone, $busy with 600 threads waiting on /tmp/a (want at least an eighth; 0.7-4.6% before) [$out]"; fi

# --- without a memory cgroup (rootless) moat's own processes count in the
# watchdog's sample too (red team 20: it summed the guest's procfs alone;
# 500 guest threads waiting in FIFO opens held 38 MB of sentry workers and
# 12 MB of gofer threads under --memory 32M, peak_memory_bytes 4.4 MB). 150
# waiters cost ~16 MB of moat's (~110 KiB each), the guest ~8 MB. ---
run_limited memory_own --memory 16M --timeout 20s -- "$PY" -c '
import os, sys, threading, time
threading.stack_size(32768)
os.mkfifo("/tmp/ff")
for i in range(150):
    threading.Thread(target=lambda: open("/tmp/ff"), daemon=True).start()
time.sleep(1); print("survived", sys.argv[1])' "$T_MARK"
if [ "$(field "$R" limits.memory_by)" = cgroup ]; then
	skip memory_own_processes_counted "a memory cgroup holds the sentry (sentry_in_memory_cgroup)"
else
	expect_eq memory_own_processes_counted "$(field "$R" reason) $out" "memory "
fi
no_leftovers memory_own

# --- ... and so do their page tables (red team 68): one memfd page mapped
#     read-only at 20,000 addresses 2 MiB apart is ~80 MB of page tables,
#     kernel memory in no PSS and outside RLIMIT_DATA (rootless, 32,000
#     such mappings held 128 MiB per process under --memory 32M, exit 0,
#     peak_memory_bytes 2.9 MB); a memory cgroup charges them anyway ---
run_limited memory_pte --memory 32M --timeout 20s -- "$PY" -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.memfd_create("p"); os.ftruncate(fd, 4096)
n = 20000
base = libc.mmap(None, n << 21, 0, 0x22 | 0x4000, -1, 0)  # PROT_NONE, MAP_PRIVATE|ANONYMOUS|NORESERVE
for i in range(n):
    a = libc.mmap(base + (i << 21), 4096, 1, 0x01 | 0x10, fd, 0)  # PROT_READ, MAP_SHARED|FIXED
    ctypes.c_char.from_address(a).value  # the page table page is made at the first touch
time.sleep(2); print("survived", sys.argv[1])' "$T_MARK"
expect_eq memory_page_tables_counted "$(field "$R" reason) $out" "memory "
no_leftovers memory_pte

# --- TCP buffers under --memory (red team 23): on cgroup v1 a socket's
#     buffer memory is charged to the memory cgroup only once its
#     kmem.tcp limit is set; unset, a guest under --memory 64M queued 422 MB
#     on 40 loopback connections (peak_memory_bytes 5.8 MB, exit 0), and
#     the host's one tcp_mem budget is every TCP socket's on the host.
#     Now limits.c sets it to --memory (v2 charges sockets to memory.max
#     anyway): what can be queued stays below twice the limit. ---
run_limited tcpbuf --memory 64M --timeout 20s -- "$PY" -c '
import socket, sys
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(64)
keep, tot, buf = [], 0, b"x" * 65536
for i in range(40):
    c = socket.socket(); c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
    c.connect(srv.getsockname()); a, _ = srv.accept()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 30)
    c.settimeout(0.05)
    try:
        while True:
            tot += c.send(buf)
    except OSError:
        pass
    keep += [c, a]
print(tot >> 20)' "$T_MARK"
if [ "$(field "$R" limits.memory_by)" = cgroup ]; then
	if [ -n "$out" ] && [ "$out" -lt 128 ]; then ok tcp_buffers_in_memory_limit
	else fail tcp_buffers_in_memory_limit "queued [$out] MB on loopback TCP under --memory 64M (reason $(field "$R" reason)): $(echo "$err" | head -c 200)"; fi
else
	skip tcp_buffers_in_memory_limit "no memory cgroup ($(id -un)): socket buffers are not bounded (Known gaps)"
fi
no_leftovers tcpbuf

# --- --cpus 0.5: at most half a CPU ---
run_limited cpus --cpus 0.5 --timeout 2s -- /bin/sh -c 'while :; do :; done' "$T_MARK"
if [ "$(field "$R" limits.cpus_by)" = cgroup ]; then
	u=$(field "$R" user_ms); s=$(field "$R" sys_ms); w=$(field "$R" wall_ms)
	if "$PY" -c "import sys; sys.exit(0 if float('$u') + float('$s') <= 0.5 * float('$w') * 1.2 else 1)"; then ok cpus_half
	else fail cpus_half "user $u sys $s wall $w"; fi
else
	skip cpus_half "no cpu controller we may use ($(id -un)): --cpus is not held"
fi
# ... and a --cpus that is not held is said, one line (red team 40: rootless
# without a delegated cgroup it changed nothing, and only --result said so)
warned=$(printf '%s\n' "$err" | grep -c '^moat: --cpus 0.5 is not held: ')
[ "$(field "$R" limits.cpus_by)" = cgroup ] && want=0 || want=1
expect_eq cpus_not_held_said "$warned" "$want"
no_leftovers cpus

# --- --cpus holds the sentry's work for the guest too (red team 17: the
#     sentry stayed in moat's own cgroup, and under --cpus 0.1 four guest
#     processes stat()ing a 4000-byte path of "/bin/.." took 0.97 of a CPU
#     in it, the guest itself 0.03: the whole tree's CPU, moat's rusage of
#     its children, against the quota) ---
if [ "$(field "$R" limits.cpus_by)" = cgroup ]; then
	t=$("$PY" - "$MOAT" "$T_MARK" <<'PYEOF'
import resource, subprocess, sys, time
g = "import os, time\np = '/usr' + '/bin/..' * 570\nos.fork(); os.fork()\nt = time.time()\nwhile time.time() - t < 1.2:\n    os.stat(p)\n"
t0 = time.time()
subprocess.run([sys.argv[1], "run", "--cpus", "0.2", "--timeout", "3s", "--", "/usr/bin/python3", "-c", g, sys.argv[2]],
               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
w = time.time() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f %.2f" % (ru.ru_utime + ru.ru_stime, w))
PYEOF
)
	cpu=${t% *}; wall=${t#* }
	# 0.2 of the wall, 30% over for the period's rounding, 0.3 s of set-up outside the cgroup
	if "$PY" -c "import sys; sys.exit(0 if $cpu <= 0.2 * $wall * 1.3 + 0.3 else 1)"; then ok cpus_hold_the_sentry
	else fail cpus_hold_the_sentry "cpu $cpu s in $wall s under --cpus 0.2"; fi
else
	skip cpus_hold_the_sentry "no cpu controller we may use ($(id -un)): --cpus is not held"
fi
# (and moat-netd, which relays the guest's UDP, joins with it)
if [ "$(field "$R" limits.cpus_by)" = cgroup ]; then
	# (the guest lives until the host has looked, 30 s at most: a second's
	# sleep could be over before a loaded CPU had started moat-netd)
	mkdir -p "$T_TMP/nd" && chmod 777 "$T_TMP/nd" && rm -f "$T_TMP/nd/go"
	"$MOAT" run --cpus 0.5 --net allow=192.0.2.1:9 --bind "$T_TMP/nd:/nd:rw,shared" -- /bin/sh -c \
		'i=0; while [ ! -e /nd/go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo "$0"' "$T_MARK" </dev/null >/dev/null 2>&1 &
	mpid=$!
	netd="" reopen="" end=$((SECONDS + 30))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$mpid" 2>/dev/null; do
		netd=$(ps -eo pid=,ppid=,comm= | awk -v p="$mpid" '$2 == p && $3 == "moat-netd" {print $1}')
		reopen=$(ps -eo pid=,ppid=,comm= | awk -v p="$mpid" '$2 == p && $3 == "moat-reopen" {print $1}')
		[ -n "$netd" ] && { [ "$(id -u)" != 0 ] || [ -n "$reopen" ]; } && break
		sleep 0.05
	done
	cgof() { grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' "/proc/$1/cgroup" 2>/dev/null || grep '^0::' "/proc/$1/cgroup" 2>/dev/null; }
	# (each joins the cgroup once made: on one loaded CPU a moment after it
	# appears; looked at until then, 10 s at most)
	end=$((SECONDS + 10))
	while [ "$SECONDS" -lt "$end" ]; do
		cg=$(cgof "$netd") rcg=$(cgof "$reopen")
		case $cg in */moat-*) case $rcg in */moat-*|"") break ;; esac ;; esac
		sleep 0.02
	done
	: >"$T_TMP/nd/go"
	wait "$mpid"
	case $cg in */moat-*) ok cpus_hold_netd ;; *) fail cpus_hold_netd "moat-netd [$netd]: $cg" ;; esac
	# moat-reopen (root-run): its opens are the guest's work too
	if [ "$(id -u)" = 0 ]; then
		case $rcg in */moat-*) ok cpus_hold_reopen ;; *) fail cpus_hold_reopen "moat-reopen [$reopen]: $rcg" ;; esac
	fi
fi

# kill(-1, SIGKILL) and kill(0, SIGKILL) from the guest reach only the
# sandbox: a host process of the caller's survives and moat reports the
# program's own death. (Here, not in an isolation_*.sh file: the self-check
# runs those without isolation, where kill(-1) would hit the whole machine.)
# --- moat's own warnings about the guest's actions are not unbounded output ---
# (red team 54) Each exec-only exec under a guest filter that fakes close()
# is killed with a line on moat's stderr, which --output-limit does not
# cover: 7,600 lines (2.1 MB) in 10 s under --output-limit 1K before. Now at
# most 20 such lines and one saying the rest are not shown; the kills stay.
if [ -n "$SYSCALL_BIN" ] && [ -x "$SYSCALL_BIN/probe_warnflood" ]; then
	out=$(moat run --output-limit 1K --timeout 60s --bind "$SYSCALL_BIN:/t:ro" -- /t/probe_warnflood 300 </dev/null 2>"$T_TMP/err")
	n=$(grep -c "the loader's fd" "$T_TMP/err")
	if [ "$out" = "killed 300 of 300" ] && [ "$n" -le 20 ] && grep -q 'not shown' "$T_TMP/err"; then
		ok guest_warnings_capped
	else
		fail guest_warnings_capped "[$out] $n loader lines, $(wc -c <"$T_TMP/err") bytes of stderr"
	fi
else
	fail guest_warnings_capped "no $SYSCALL_BIN/probe_warnflood"
fi

sleep 300 &
hostcanary=$!
at_exit "kill -9 $hostcanary"
moat run -- /bin/sh -c 'sleep 30 & kill -KILL -1; sleep 1; echo survived-own-kill' </dev/null >"$T_TMP/killall.out" 2>&1
st=$?
if kill -0 "$hostcanary" 2>/dev/null && [ "$(ps -o stat= -p "$hostcanary" | cut -c1)" != Z ]; then
	ok kill_minus1_stays_inside
else
	fail kill_minus1_stays_inside "a host process died (moat exit $st)"
fi
moat run -- /bin/sh -c 'kill -KILL 0' </dev/null >/dev/null 2>&1
expect_eq kill0_kills_only_the_sandbox_group "$?" 137
kill -0 "$hostcanary" 2>/dev/null && ok kill0_host_canary_alive || fail kill0_host_canary_alive "a host process died"

finish
