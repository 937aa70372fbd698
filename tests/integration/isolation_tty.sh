#!/bin/bash
# isolation_tty: the guest's terminals are its own. Its /dev/pts is a devpts
# instance of the sandbox (a host pty held open during the run is neither
# listed nor openable inside), TIOCSTI and TIOCLINUX stay denied even on the
# guest's own pty, and TIOCSCTTY on a host tty the guest inherited (one that
# is no session's controlling terminal, which Linux would hand over) is EPERM.
. "$(dirname "$0")/lib.sh"

# A host pty, held open by a helper for the whole test: its slave has no
# session (opened O_NOCTTY by a process that never takes it).
"$PY" - "$T_TMP/hostpty" <<'EOF' &
import os, sys, time
m, s = os.openpty()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(os.ttyname(s))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(300)
EOF
holder=$!
at_exit "kill $holder"
for _ in $(seq 100); do [ -s "$T_TMP/hostpty" ] && break; sleep 0.05; done
hostpty=$(cat "$T_TMP/hostpty" 2>/dev/null)
[ -n "$hostpty" ] || { fail setup "no host pty"; finish; }

# 1. the host's ptys are not in the guest's /dev/pts
out=$(moat run -- "$PY" -c '
import os, sys
names = sorted(os.listdir("/dev/pts"))
try:
    os.close(os.open(sys.argv[1], os.O_RDWR | os.O_NOCTTY)); opened = "opened"
except OSError as e:
    opened = "refused"
print(" ".join(names), opened)
' "$hostpty" </dev/null 2>&1)
expect_eq host_pts_not_listed "$out" "ptmx refused"

# 2. the guest's first pty is its own /dev/pts/0, whatever the host has
out=$(moat run -- "$PY" -c '
import os
m, s = os.openpty()
st = os.fstat(s)
print(os.ttyname(s), os.major(st.st_rdev) >= 136, os.stat("/dev/pts").st_dev == st.st_dev)
' </dev/null 2>&1)
expect_eq guest_pty_own_instance "$out" "/dev/pts/0 True True"

# 3. TIOCSTI and TIOCLINUX: EPERM on the guest's own pty (natively root may
# type into its own pty; TIOCLINUX on a pty is EINVAL natively)
out=$(moat run -- "$PY" -c '
import os, fcntl, termios, errno
m, s = os.openpty()
r = []
for name, req, arg in (("sti", termios.TIOCSTI, b"x"), ("linux", 0x541C, b"\x0b")):
    try:
        fcntl.ioctl(s, req, arg); r.append(name + "=ok")
    except OSError as e:
        r.append(name + "=" + errno.errorcode[e.errno])
print(" ".join(r))
' </dev/null 2>&1)
expect_eq tiocsti_tioclinux_denied "$out" "sti=EPERM linux=EPERM"

# 4. TIOCSCTTY on an inherited host tty: a new session of the guest may not
# take it (natively it would: the tty belongs to no session)
out=$(moat run -- "$PY" -c '
import os, fcntl, termios, errno
pid = os.fork()
if pid == 0:
    os.setsid()
    try:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0); print("taken", flush=True)
    except OSError as e:
        print(errno.errorcode[e.errno], flush=True)
    os._exit(0)
os.waitpid(pid, 0)
' <"$hostpty" 2>&1)
expect_eq tiocsctty_host_tty_refused "$out" "EPERM"

# 4b. the serial line's controls on an inherited host tty: denied whatever
# the fd (red team 62: on a caller's serial terminal TIOCMBIC of DTR hangs the
# line up and TIOCSBRK holds a break, past the run; natively a pty takes the
# break and has no modem lines, ENOTTY)
out=$(moat run -- "$PY" -c '
import fcntl, struct, errno
r = []
for name, req in (("sbrk", 0x5427), ("cbrk", 0x5428), ("mbic", 0x5417), ("mset", 0x5418)):
    try:
        fcntl.ioctl(0, req, struct.pack("i", 6)); r.append(name + "=ok")
    except OSError as e:
        r.append(name + "=" + errno.errorcode[e.errno])
print(" ".join(r))
' <"$hostpty" 2>&1)
expect_eq serial_line_controls_denied "$out" "sbrk=EPERM cbrk=EPERM mbic=EPERM mset=EPERM"

# 5. ... while on its own pty it works (forkpty, login_tty)
out=$(moat run -- "$PY" -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    print("ctty", os.ttyname(0), os.tcgetpgrp(0) == os.getpid(), flush=True); os._exit(0)
data = b""
while True:
    try:
        b = os.read(fd, 100)
    except OSError:
        break
    if not b: break
    data += b
os.waitpid(pid, 0)
print(data.decode().strip())
' </dev/null 2>&1)
SANITY=1 expect_eq own_pty_ctty "$out" "ctty /dev/pts/0 True"

# 5b. -t with the caller's input at its end before the run: script(1) with
# its own stdin /dev/null types the end of file (VEOF) into its pty at once,
# while the terminal is still canonical. Made raw by -t, the line discipline
# handed its end-of-line marker to moat's relay as a NUL byte: the guest's
# pty echoed "^@" and a reading program never saw its input end (cat hung).
# Natively cat gets the end of file: a sanity case.
if command -v script >/dev/null; then
	out=$(timeout -k 2 8 script -qec "$MOAT run -t -- /bin/sh -c 'cat; echo end'" /dev/null </dev/null 2>&1 | tr -d '\r')
	SANITY=1 expect_eq tty_relay_caller_eof "$out" "end"
fi

# 5b'. the same with a partial line ended by the end of file ("abc^D":
# script types its input, then VEOF): a canonical read gives "abc" without
# the key, and a native reader gets it at once; passed on without the key,
# the guest's pty held "abc" as an unfinished line and head waited for good
# (review 35). Natively head ends: a sanity case.
if command -v script >/dev/null; then
	out=$(printf abc | timeout -k 2 8 script -qec "$MOAT run -t -- /bin/sh -c 'head -c 3 >/dev/null; echo end'" /dev/null 2>&1 | tr -d '\r' | tail -c 4)
	SANITY=1 expect_eq tty_relay_caller_partial_line_eof "$out" "end"
fi

# 5c. -t: moat returns once the guest is gone, even while the sentry still
# holds the guest's terminal (red team 62: the file of a flock or fcntl lock
# on it, kept until the sandbox is freed; the relay waited for the master's
# EIO, which never came, and moat hung with the caller's terminal raw).
# Natively the program ends: a sanity case.
if command -v script >/dev/null; then
	out=$(timeout -k 2 8 script -qec "$MOAT run -t -- $PY -c 'import fcntl; fcntl.flock(0, fcntl.LOCK_EX); fcntl.lockf(1, fcntl.LOCK_EX); print(\"locked\")'" /dev/null </dev/null 2>&1 | tr -d '\r')
	SANITY=1 expect_eq tty_relay_ends_with_guest "$out" "locked"
fi

# 5d. -t: the relay never blocks on the guest's input (red team 71). A
# program that does not read its stdin while the caller types, pastes or
# pipes more than its pty takes (~12 KB): the relay's write to the master
# blocked, so the guest's output was no longer read, the guest blocked at
# its next write and moat hung for good (the caller's terminal raw, the exit
# status lost). Natively the program prints and ends: a sanity case.
out=$( { yes | timeout -k 2 8 "$MOAT" run -t -- /bin/sh -c 'sleep 1; echo guest-done; exit 7' 2>&1 |
	grep -ao guest-done; echo "rc=${PIPESTATUS[1]}"; } )
SANITY=1 expect_eq tty_relay_unread_input_no_hang "$(echo $out)" "guest-done rc=7"

# 6. --user: the program's own ptys are its own (opened by name after
# posix_openpt, as expect and older programs do)
if [ "$(id -u)" = 0 ]; then
	out=$(moat run --user 1000 -- "$PY" -c '
import os, fcntl, struct
m = os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
fcntl.ioctl(m, 0x40045431, struct.pack("i", 0))  # TIOCSPTLCK: unlock
n = struct.unpack("I", fcntl.ioctl(m, 0x80045430, bytes(4)))[0]  # TIOCGPTN
s = os.open("/dev/pts/%d" % n, os.O_RDWR | os.O_NOCTTY)
print("opened", os.stat("/dev/pts/%d" % n).st_uid == os.getuid())
' </dev/null 2>&1)
	SANITY=1 expect_eq user_opens_own_pty_by_name "$out" "opened True"
fi

# 7. without -t the caller's terminal is the guest's stdio: what the guest
# sets on it must not outlive the sandbox (red team round 11: echo,
# canonical mode and ISIG stayed off, O_NONBLOCK stayed on the shell's own
# open file description, and a tcflow(TCOOFF) stopped the
# terminal's output for good: the caller's shell hung at its next write, and
# moat itself in its "killed: --timeout" line, the sandbox gone). Run under
# script(1): its pty is the caller's terminal.
if command -v script >/dev/null; then
	cat >"$T_TMP/ttyset.py" <<'EOF'
import os, sys, termios
fd = 1
a = termios.tcgetattr(fd)
a[0] &= ~termios.IXON
a[1] &= ~termios.OPOST
a[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG)
termios.tcsetattr(fd, termios.TCSANOW, a)
import fcntl
for f in (0, 1, 2):
    fcntl.fcntl(f, fcntl.F_SETFL, fcntl.fcntl(f, fcntl.F_GETFL) | os.O_NONBLOCK)
termios.tcflow(fd, termios.TCOOFF)
if len(sys.argv) > 1:
    import time; time.sleep(60)
EOF
	cat >"$T_TMP/caller.sh" <<EOF
flags() { stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(echo|icanon|isig|ixon|opost)' | tr '\n' ' '; "$PY" -c 'import fcntl, os; print("nonblock" if fcntl.fcntl(0, fcntl.F_GETFL) & os.O_NONBLOCK else "block")'; }
echo "before: \$(flags)" >>"$T_TMP/caller.out"
"$MOAT" run --bind "$T_TMP:/t:ro" -- "$PY" /t/ttyset.py
echo "after: \$(flags)" >>"$T_TMP/caller.out"
s=\$(date +%s)
"$MOAT" run --timeout 1s --bind "$T_TMP:/t:ro" -- "$PY" /t/ttyset.py sleep
echo "timeout: rc=\$? \$(( \$(date +%s) - s ))s \$(flags)" >>"$T_TMP/caller.out"
echo written
EOF
	SHELL=/bin/bash timeout -k 5 40 script -qec "/bin/bash $T_TMP/caller.sh" /dev/null </dev/null >"$T_TMP/script.out" 2>&1
	rc=$?
	before=$(sed -n 's/^before: //p' "$T_TMP/caller.out")
	after=$(sed -n 's/^after: //p' "$T_TMP/caller.out")
	expect_eq caller_tty_settings_kept "$after|$rc" "$before|0"
	t=$(sed -n 's/^timeout: //p' "$T_TMP/caller.out")
	case $t in
	"rc=143 "[1-9]"s $before" | "rc=143 1"[0-5]"s $before") ok caller_tty_stopped_timeout_ends ;;
	*) fail caller_tty_stopped_timeout_ends "[$t] want rc=143 within 15s, settings [$before]" ;;
	esac
	case $(cat "$T_TMP/script.out") in *written*) ok caller_tty_output_not_stopped ;; *) fail caller_tty_output_not_stopped "the caller's last write never came out" ;; esac
else
	skip caller_tty_settings_kept "no script(1)"
fi

# 8. without -t, moat run ... & (a background job of an interactive shell)
# with the caller's terminal as stdin: the guest is in a session of its own,
# so no SIGTTIN ever stopped it, and it read what the user typed to the
# foreground program (red team round 11: the password of a `read -s`).
# Natively the background job is stopped instead: a sanity case.
if command -v script >/dev/null; then
	mkdir -m 777 "$T_TMP/bg"
	# bg_case NAME PREFIX GUESTCMD: PREFIX moat run sh -c GUESTCMD as a
	# background job of an interactive shell (script(1)), whose foreground
	# read gets the "secret" typed; GUESTCMD must not read it to /bg/stolen
	bg_case() {
		rm -f "$T_TMP/bg/stolen" "$T_TMP/bg/fg"
		cat >"$T_TMP/bg.sh" <<EOF
set -m
$2"$MOAT" run --bind "$T_TMP/bg:/bg:rw" -- /bin/sh -c '$3' &
sleep 1.5
read -r -t 5 pw
echo "[\$pw]" >"$T_TMP/bg/fg"
kill %1 2>/dev/null
EOF
		(sleep 3; printf 'secret\n') | SHELL=/bin/bash timeout -k 5 30 script -qec "/bin/bash $T_TMP/bg.sh" /dev/null >/dev/null 2>&1
		SANITY=1 expect_eq "$1" "$(cat "$T_TMP/bg/fg" 2>/dev/null) [$(cat "$T_TMP/bg/stolen" 2>/dev/null)]" "[secret] []"
	}
	bg_case background_job_reads_no_keystrokes "" 'test -t 0 && echo tty >/bg/was; dd bs=1 count=7 of=/bg/stolen 2>/dev/null'
	# the same through stdout: a shell's terminal is one read-write open
	# file description on fds 0-2 (stdin a pipe here)
	bg_case background_job_reads_no_keystrokes_stdout "echo | " 'dd bs=1 count=7 of=/bg/stolen <&1 2>/dev/null'
fi

# seen_or_gone SCRIPT PATTERN FILE: FILE has a line PATTERN matches, or no
# process runs $T_TMP/SCRIPT any more (a feeder of keys stops waiting)
seen_or_gone() { grep -qs -- "$2" "$3" || ! pgrep -f -- "$T_TMP/$1" >/dev/null; }

# 9. ^Z of a sandbox without -t: moat stopped, the guest (a session of its
# own) ran on and read what the user typed at the shell's prompt (red team
# round 11). Now the guest stops with moat and goes on at fg. Sanity: the
# whole job stops natively.
if command -v script >/dev/null; then
	mkdir -m 777 "$T_TMP/z"
	cat >"$T_TMP/z.sh" <<EOF
set -m
"$MOAT" run --bind "$T_TMP/z:/z:rw" -- /bin/sh -c ': >"\$1"; dd bs=1 count=8 of="\$2" 2>/dev/null' sh /z/up /z/got
echo "stop=\$?" >"$T_TMP/z/out"
read -r -t 5 pw
echo "shell=[\$pw]" >>"$T_TMP/z/out"
fg %1 >/dev/null
echo "fg=\$?" >>"$T_TMP/z/out"
EOF
	# (each key once the step before it is seen done, in place of fixed
	# sleeps of 2, 1, 1 and 3 s; the guest's reader may be on its way
	# when ^Z comes: stopped then, it reads at fg all the same)
	(wait_for 10 test -e "$T_TMP/z/up"; sleep 0.3; printf '\032'
	 wait_for 5 grep -qs stop= "$T_TMP/z/out"; printf 'secret\n'
	 wait_for 7 grep -qs shell= "$T_TMP/z/out"; sleep 0.2; printf 'guestin\n'
	 wait_for 10 grep -qs fg= "$T_TMP/z/out") |
		SHELL=/bin/bash timeout -k 5 30 script -qec "/bin/bash $T_TMP/z.sh" /dev/null >/dev/null 2>&1
	SANITY=1 expect_eq ctrl_z_stops_guest "$(tr '\n' ' ' <"$T_TMP/z/out" 2>/dev/null)[$(cat "$T_TMP/z/got" 2>/dev/null)]" "stop=147 shell=[secret] fg=0 [guestin]"
fi

# 9c. the caller's stdio descriptions keep their SIGIO signal and owner
# (red team 47): a caller that owns its terminal stdin's SIGIO (F_SETOWN,
# O_ASYNC) runs the sandbox; the guest's F_SETSIG SIGKILL on the shared
# description killed the caller at the next line typed (during the run or
# after it). Natively the child's F_SETSIG kills it too: not a sanity case.
if command -v script >/dev/null && command -v python3 >/dev/null; then
	cat >"$T_TMP/sigio_caller.py" <<'EOF'
import fcntl, os, select, signal, subprocess, sys, time
out = open(sys.argv[1], "w", buffering=1)
signal.signal(signal.SIGIO, lambda *a: None)
fcntl.fcntl(0, fcntl.F_SETOWN, os.getpid())
fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_ASYNC)
subprocess.run(sys.argv[2:])
out.write("sig=%d\n" % fcntl.fcntl(0, 11))  # F_GETSIG
select.select([0], [], [], 5)  # a line is typed now (its signal comes first)
time.sleep(0.1)
out.write("alive\n")
EOF
	rm -f "$T_TMP/sigio.out"
	# (the line typed once the run is over, in place of sleeps of 3 and 3 s)
	(wait_for 15 grep -qs sig= "$T_TMP/sigio.out"; printf 'x\n'; wait_for 5 seen_or_gone sigio_caller.py alive "$T_TMP/sigio.out") |
		SHELL=/bin/bash timeout -k 5 30 script -qec \
		"python3 $T_TMP/sigio_caller.py $T_TMP/sigio.out $MOAT run -- python3 -c 'import fcntl; fcntl.fcntl(0, 10, 9)'" /dev/null >/dev/null 2>&1
	expect_eq caller_stdin_sigio_kept "$(tr '\n' ' ' <"$T_TMP/sigio.out" 2>/dev/null)" "sig=0 alive "
fi

# 9d. the guest's stdio is a fresh open file description of the caller's
# terminal or pipe (sentry/tty.c tty_stdio_fresh): its F_SETFL reached the
# caller's own description (a guest that left O_NONBLOCK on the shell's
# terminal made the shell's next program read EAGAIN; node does). The
# caller reads its flags while the guest runs and after it; natively the
# child shares the caller's description: not a sanity case.
if command -v script >/dev/null && command -v python3 >/dev/null; then
	mkdir -m 777 "$T_TMP/fl"
	cat >"$T_TMP/fl_caller.py" <<'EOF'
import fcntl, os, subprocess, sys, time
mode, out, d, cmd = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
if mode == "pipe":
    r, w = os.pipe()
    r2, w2 = os.pipe()
    fds = (r, w2)
    p = subprocess.Popen(cmd, stdin=r, stdout=w2)
else:
    fds = (0, 1)
    p = subprocess.Popen(cmd)
def fl():
    return " ".join(("N" if fcntl.fcntl(f, fcntl.F_GETFL) & os.O_NONBLOCK else "-") +
                    ("A" if fcntl.fcntl(f, fcntl.F_GETFL) & 0o20000 else "-") for f in fds)
for _ in range(300):
    if os.path.exists(d + "/set"):
        break
    time.sleep(0.05)
during = fl()
open(d + "/go", "w").close()
p.wait()
open(out, "w").write("during=%s after=%s\n" % (during, fl()))
EOF
	cat >"$T_TMP/fl/guest.py" <<'EOF'
import fcntl, os, time
for f in (0, 1):
    fcntl.fcntl(f, fcntl.F_SETFL, fcntl.fcntl(f, fcntl.F_GETFL) | os.O_NONBLOCK | os.O_ASYNC)
open("/fl/set", "w").close()
for _ in range(200):
    if os.path.exists("/fl/go"):
        break
    time.sleep(0.05)
EOF
	for m in tty pipe; do
		rm -f "$T_TMP/fl/set" "$T_TMP/fl/go" "$T_TMP/fl.out"
		c="python3 $T_TMP/fl_caller.py $m $T_TMP/fl.out $T_TMP/fl $MOAT run --bind $T_TMP/fl:/fl:rw,shared -- python3 /fl/guest.py"
		if [ $m = tty ]; then
			SHELL=/bin/bash timeout -k 5 40 script -qec "$c" /dev/null </dev/null >/dev/null 2>&1
		else
			timeout -k 5 40 $c </dev/null >/dev/null 2>&1
		fi
		expect_eq caller_${m}_flags_own_description "$(cat "$T_TMP/fl.out" 2>/dev/null)" "during=-- -- after=-- --"
	done
fi

# 9e. the F_SETOWN check-then-run race (a native F_SETOWN, checked on the
# pinned file, while a second thread swaps the fd number for a dup of
# stdin: dup2(0, fd)) made a guest task the owner of the caller's terminal
# stdin description, whose SIGIO the caller owned. The guest's stdin is a
# description of its own now. The window widened by
# MOAT_TEST_PIDCALL_DELAY_MS. Natively the child shares it: not a sanity case.
if command -v script >/dev/null && command -v python3 >/dev/null; then
	cat >"$T_TMP/own_caller.py" <<'EOF'
import fcntl, os, signal, subprocess, sys
signal.signal(signal.SIGIO, lambda *a: None)
fcntl.fcntl(0, fcntl.F_SETOWN, os.getpid())
fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_ASYNC)
subprocess.run(sys.argv[2:])
o = fcntl.fcntl(0, fcntl.F_GETOWN)
open(sys.argv[1], "w").write("owner=%s\n" % ("caller" if o == os.getpid() else o))
EOF
	cat >"$T_TMP/fl/race.py" <<'EOF'
import fcntl, os, threading, time
kid = os.fork()
if kid == 0:
    time.sleep(30)
    os._exit(0)
nul = os.open("/dev/null", os.O_RDONLY)
os.dup2(nul, 5)
stop = time.time() + 2
def swap():
    while time.time() < stop:
        os.dup2(0, 5); time.sleep(0.002); os.dup2(nul, 5); time.sleep(0.002)
t = threading.Thread(target=swap); t.start()
while time.time() < stop:
    os.dup2(nul, 5)
    try:
        fcntl.fcntl(5, fcntl.F_SETOWN, kid)
    except OSError:
        pass
t.join()
os.kill(kid, 9)
EOF
	rm -f "$T_TMP/own.out"
	SHELL=/bin/bash MOAT_TEST_PIDCALL_DELAY_MS=3 timeout -k 5 40 script -qec \
		"python3 $T_TMP/own_caller.py $T_TMP/own.out $MOAT run --bind $T_TMP/fl:/fl:ro -- python3 /fl/race.py" /dev/null </dev/null >/dev/null 2>&1
	expect_eq caller_stdin_owner_not_raced "$(cat "$T_TMP/own.out" 2>/dev/null)" "owner=caller"
fi

# 9e'. the same race on a socket stdin (inetd-style), which cannot be
# reopened and stays the caller's description: a native F_SETOWN is made
# on the pinned file instead while the guest shares one (caller_shared).
if command -v python3 >/dev/null; then
	cat >"$T_TMP/own_sock.py" <<'EOF'
import fcntl, os, signal, socket, subprocess, sys
signal.signal(signal.SIGIO, lambda *a: None)
a, b = socket.socketpair()
fcntl.fcntl(a.fileno(), fcntl.F_SETOWN, os.getpid())
fcntl.fcntl(a.fileno(), fcntl.F_SETFL, fcntl.fcntl(a.fileno(), fcntl.F_GETFL) | os.O_ASYNC)
subprocess.run(sys.argv[2:], stdin=a.fileno())
o = fcntl.fcntl(a.fileno(), fcntl.F_GETOWN)
open(sys.argv[1], "w").write("owner=%s\n" % ("caller" if o == os.getpid() else o))
EOF
	rm -f "$T_TMP/own_sock.out"
	MOAT_TEST_PIDCALL_DELAY_MS=3 timeout -k 5 40 python3 "$T_TMP/own_sock.py" "$T_TMP/own_sock.out" \
		"$MOAT" run --bind "$T_TMP/fl:/fl:ro" -- python3 /fl/race.py >/dev/null 2>&1
	expect_eq caller_socket_owner_not_raced "$(cat "$T_TMP/own_sock.out" 2>/dev/null)" "owner=caller"
fi

# 9f'. a caller that owns its socket stdio's SIGIO/SIGURG (F_SETOWN to
# itself, O_ASYNC off: SIGURG only, as an inetd-style server) hands it to
# moat: a guest's O_ASYNC on that description (F_SETFL or FIOASYNC; a
# socket cannot be reopened, so it is the caller's own) sent the caller
# SIGIO at its next byte, whose default action ended it (red team 82,
# root-run and rootless). Refused (EPERM) on the caller's own descriptions
# and on any file whose owner is no guest task (sigio_setfl_fcntl).
if command -v python3 >/dev/null; then
	cat >"$T_TMP/own_async.py" <<'EOF'
import fcntl, os, socket, subprocess, sys, time
a, b = socket.socketpair()
fcntl.fcntl(a.fileno(), fcntl.F_SETOWN, os.getpid())
p = subprocess.Popen(sys.argv[2:] + ["python3", "-c", """
import fcntl, os, struct, time
r = []
try:
    fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_ASYNC); r.append("setfl=ok")
except OSError as e:
    r.append("setfl=%s" % ("EPERM" if e.errno == 1 else e))
try:
    fcntl.ioctl(0, 0x5452, struct.pack("i", 1)); r.append("fioasync=ok")
except OSError as e:
    r.append("fioasync=%s" % ("EPERM" if e.errno == 1 else e))
print(" ".join(r), flush=True)
time.sleep(1.5)  # not reading: a reader's wait takes the data without a SIGIO
"""], stdin=a.fileno(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
line = p.stdout.readline().strip()
b.send(b"x")
time.sleep(0.5)
p.wait(timeout=20)
async_on = bool(fcntl.fcntl(a.fileno(), fcntl.F_GETFL) & os.O_ASYNC)
open(sys.argv[1], "w").write("%s caller=alive async=%d\n" % (line, async_on))
EOF
	rm -f "$T_TMP/own_async.out"
	timeout -k 5 40 python3 "$T_TMP/own_async.py" "$T_TMP/own_async.out" "$MOAT" run -- >/dev/null 2>&1
	expect_eq caller_socket_async_refused "$(cat "$T_TMP/own_async.out" 2>/dev/null || echo 'no output: the caller was killed')" \
		"setfl=EPERM fioasync=EPERM caller=alive async=0"
fi

# 9h. a pty master the caller gives as stdio (a relay or logger run on the
# other side of a terminal: `moat run prog <&master`, `>&master`) is the
# guest's as natively: what it writes to a stdout master is the slave's
# input, what it reads from a stdin master is the slave's output. Before,
# a master stdin became /dev/null (tcgetpgrp answers the slave's foreground
# group there: moat took itself for a background job) and a stdout master
# was reopened through /proc/self/fd/1 (ptmx: a new pair) and relayed there,
# output nobody read (red team 82's "output lost"). The master's own
# requests reach the caller's terminal (TIOCSIG signals the slave's
# foreground group, TIOCPKT changes how the caller reads, TIOCSPTLCK locks
# the slave, TIOCGPTPEER opens it: its keystrokes): EPERM on a master not of
# the sandbox's devpts (sys_ioctl), as TIOCSCTTY.
if command -v python3 >/dev/null; then
	cat >"$T_TMP/master_stdio.py" <<'EOF'
import os, select, subprocess, sys, tty
m, s = os.openpty()
tty.setraw(s)
guest = r"""
import errno, fcntl, os, struct, sys
r = []
for name, req, arg in (("sig", 0x40045436, 2), ("pkt", 0x5420, 0), ("ptlck", 0x40045431, 0), ("peer", 0x5441, os.O_RDWR | os.O_NOCTTY)):
    try:
        fcntl.ioctl(int(sys.argv[1]), req, arg if name == "peer" else struct.pack("i", arg)); r.append(name + "=ok")
    except OSError as e:
        r.append(name + "=" + errno.errorcode[e.errno])
if sys.argv[1] == "0":
    print(os.read(0, 11).decode().strip(), " ".join(r), flush=True)
else:
    os.write(1, ("from-guest " + " ".join(r) + "\n").encode())
"""
os.write(s, b"from-slave\n")
p = subprocess.run(sys.argv[2:] + ["python3", "-c", guest, "0"], stdin=m, stdout=subprocess.PIPE,
                   stderr=subprocess.DEVNULL, text=True, timeout=30)
got = "in: " + p.stdout.strip()
p = subprocess.run(sys.argv[2:] + ["python3", "-c", guest, "1"], stdin=subprocess.DEVNULL, stdout=m,
                   stderr=subprocess.DEVNULL, timeout=30)
out = b""
while select.select([s], [], [], 1)[0]:
    b = os.read(s, 200)
    if not b:
        break
    out += b
got += " out: " + (out.decode(errors="replace").strip() or "nothing")
open(sys.argv[1], "w").write(got + "\n")
EOF
	rm -f "$T_TMP/master_stdio.out"
	timeout -k 5 80 python3 "$T_TMP/master_stdio.py" "$T_TMP/master_stdio.out" "$MOAT" run -- >/dev/null 2>&1
	expect_eq stdio_pty_master_is_the_callers "$(cat "$T_TMP/master_stdio.out" 2>/dev/null)" \
		"in: from-slave sig=EPERM pkt=EPERM ptlck=EPERM peer=EPERM out: from-guest sig=EPERM pkt=EPERM ptlck=EPERM peer=EPERM"
fi

# 9g. a terminal's F_SETFL O_ASYNC makes the tty's foreground group the
# owner of a description that has none (the kernel's tty_fasync): moat's
# job, never the guest (a session of its own). On main a guest's O_ASYNC
# on its terminal stdin killed moat with SIGIO at the next key typed,
# before its terminal guard ran; with F_SETSIG on its own description it
# would be SIGKILL. The fresh description's owner is a task that is gone
# (tty_stdio_fresh; and of the read-only one tty_relay_plan makes when
# stdout is no terminal, here a pipe: with stdout the terminal, stdin is the
# guest's own pty, whose O_ASYNC signals the guest itself). Natively the
# program is the foreground group and gets the signal itself: not a sanity
# case.
if command -v script >/dev/null && command -v python3 >/dev/null; then
	# (the key typed once the guest says it set O_ASYNC, the guest gone a
	# moment after the key came, in place of sleeps of 1.5 and 3 s)
	cat >"$T_TMP/async.sh" <<EOF
"$MOAT" run -- python3 -c '
import fcntl, os, select, time
try:
    fcntl.fcntl(0, 10, 9)
except OSError:
    pass
fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_ASYNC)
print("armed", flush=True)
select.select([0], [], [], 5)
time.sleep(0.2)
' | cat
echo "rc=\${PIPESTATUS[0]}" >"$T_TMP/async.out"
EOF
	rm -f "$T_TMP/async.out"
	(wait_for 15 grep -qs armed "$T_TMP/async.term"; printf 'x\n'; wait_for 5 seen_or_gone async.sh rc= "$T_TMP/async.out") |
		SHELL=/bin/bash timeout -k 5 30 script -qec "/bin/bash $T_TMP/async.sh" /dev/null >"$T_TMP/async.term" 2>&1
	expect_eq guest_async_tty_spares_moat "$(cat "$T_TMP/async.out" 2>/dev/null)" "rc=0"
fi

# 9g'. the same after the guest cleared its description's owner: F_SETOWN
# 0, F_SETOWN_EX with pid 0 (a process's or a group's), then O_ASYNC by
# F_SETFL or FIOASYNC, with F_SETSIG SIGKILL. On main no owner was the
# kernel's answer, and tty_fasync made the terminal's foreground group,
# moat's job, the owner with the guest's ids: moat was SIGKILLed at the
# next key typed (root-run and rootless; rootless its whole job of the
# caller's uid too where the Landlock signal scope is missing). A task that
# is gone is the owner now (sigio_set, red team 82). A sibling in moat's
# job lives on. stdout is a file, so that stdin is the read-only
# description of the caller's terminal (with stdout the terminal, stdin is
# the guest's own pty, ttyout38, whose O_ASYNC signals the guest itself).
# Natively the program is the foreground group and kills itself: not a
# sanity case.
if command -v script >/dev/null && command -v python3 >/dev/null; then
	cat >"$T_TMP/async0.sh" <<EOF
for how in setown0 setown_ex0 setown_ex0_pgrp fioasync; do
	sleep 20 &
	sib=\$!
	"$MOAT" run -- python3 -c '
import fcntl, os, select, struct, sys, time
how = sys.argv[1]
fcntl.fcntl(0, 10, 9)  # F_SETSIG SIGKILL
if how == "setown_ex0":
    fcntl.fcntl(0, 15, struct.pack("ii", 1, 0))  # F_SETOWN_EX F_OWNER_PID 0
elif how == "setown_ex0_pgrp":
    fcntl.fcntl(0, 15, struct.pack("ii", 2, 0))  # F_OWNER_PGRP 0
else:
    fcntl.fcntl(0, fcntl.F_SETOWN, 0)
if how == "fioasync":
    fcntl.ioctl(0, 0x5452, struct.pack("i", 1))  # FIOASYNC
else:
    fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_ASYNC)
print("armed", how, flush=True)
select.select([0], [], [], 5)
time.sleep(0.2)
os.read(0, 100)
' \$how >"$T_TMP/async0.prog"
	echo "\$how rc=\$? sibling=\$(kill -0 \$sib 2>/dev/null && echo alive || echo gone)" >>"$T_TMP/async0.out"
	kill \$sib 2>/dev/null
done
EOF
	rm -f "$T_TMP/async0.out"
	# a key typed in each of the four runs once the guest says it set
	# O_ASYNC (the guest gone a moment after the key came, and the line
	# read: in place of a key every 0.3 s while each run slept 1.5 s)
	(for how in setown0 setown_ex0 setown_ex0_pgrp fioasync; do
		wait_for 15 seen_or_gone async0.sh "armed $how" "$T_TMP/async0.prog" && printf 'x\n'
		wait_for 5 seen_or_gone async0.sh "^$how " "$T_TMP/async0.out"
	 done) | SHELL=/bin/bash timeout -k 5 60 script -qec "/bin/sh $T_TMP/async0.sh" /dev/null >"$T_TMP/async0.term" 2>&1
	expect_eq guest_async_tty_owner_cleared_spares_moat "$(tr '\n' ' ' <"$T_TMP/async0.out" 2>/dev/null)" \
		"setown0 rc=0 sibling=alive setown_ex0 rc=0 sibling=alive setown_ex0_pgrp rc=0 sibling=alive fioasync rc=0 sibling=alive "
fi

# 9g. without -t the guest's stdio is the caller's terminal, and a window
# size set there is the terminal's: it outlived the run (red team 62) until
# the terminal emulator next reported a size, and the caller's foreground
# job got SIGWINCH. TIOCSWINSZ is the sentry's now: made on a terminal of the
# sandbox's own devpts only (tests/syscalls/pty.c), EPERM on the caller's.
if command -v script >/dev/null; then
	cat >"$T_TMP/winsz.sh" <<EOF
stty rows 24 cols 80
"$MOAT" run -- "$PY" -c '
import fcntl, struct, termios, errno
try:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 7, 9, 0, 0)); print("guest=set", end=" ")
except OSError as e:
    print("guest=" + errno.errorcode[e.errno], end=" ")
' >"$T_TMP/winsz.out" 2>&1
echo "after=\$(stty size)" >>"$T_TMP/winsz.out"
EOF
	timeout -k 5 30 script -qec "/bin/bash $T_TMP/winsz.sh" /dev/null </dev/null >/dev/null 2>&1
	expect_eq caller_tty_winsize_kept "$(cat "$T_TMP/winsz.out" 2>/dev/null)" "guest=EPERM after=24 80"
fi

# 9f. a regular file stays the caller's own description: its offset is
# shared, so output after the run follows the program's (a reopen would
# write over it). Natively the same: a sanity case.
(moat run -- echo a; echo b) >"$T_TMP/append.out" 2>/dev/null </dev/null
SANITY=1 expect_eq caller_file_offset_shared "$(tr '\n' ' ' <"$T_TMP/append.out")" "a b "

# 9b. a sandbox that ends in the background must not put back the terminal
# settings the foreground program set meanwhile (red team 36: `moat run --
# sleep 2 &`, then the foreground turned echo off, as read -s or sudo do,
# and the sandbox's end turned it back on under it; the guest picks that
# moment by exiting). Natively a background job leaves the terminal alone.
if command -v script >/dev/null; then
	cat >"$T_TMP/bgend.sh" <<EOF
set -m
"$MOAT" run -- /bin/sleep 2 &
sleep 1; stty -echo
sleep 3
echo "after: \$(stty -a | tr ' ;' '\n\n' | grep -xE -- '-?echo')" >"$T_TMP/bgend.out"
stty echo
EOF
	SHELL=/bin/bash timeout -k 5 30 script -qec "/bin/bash $T_TMP/bgend.sh" /dev/null </dev/null >/dev/null 2>&1
	# (natively a background job leaves the terminal alone: sanity)
	SANITY=1 expect_eq background_end_keeps_foreground_tty "$(cat "$T_TMP/bgend.out" 2>/dev/null)" "after: -echo"
fi

# 9b'. nor one in the foreground what its pipeline's pager set (red team 89:
# `moat run prog | less`: less made the terminal raw, and prog's end, moat's
# restore of the settings it had kept at its start, gave echo and canonical
# mode back under less, still running; the guest never set them). The
# guest waits until its sibling made the terminal raw; the sibling looks
# once moat is gone. Natively the same: a sanity case.
if command -v script >/dev/null; then
	cat >"$T_TMP/pager.py" <<'EOF'
import os, sys, termios, tty
fd = os.open("/dev/tty", os.O_RDWR)
old = termios.tcgetattr(fd)
tty.setraw(fd)
sys.stdin.read()
a = termios.tcgetattr(fd)
termios.tcsetattr(fd, termios.TCSANOW, old)
open(sys.argv[1], "w").write(("echo" if a[3] & termios.ECHO else "-echo") + " " +
                             ("icanon" if a[3] & termios.ICANON else "-icanon"))
EOF
	cat >"$T_TMP/pager.sh" <<EOF
{ "$MOAT" run -- "$PY" -c '
import termios, time
end = time.time() + 10
while termios.tcgetattr(0)[3] & termios.ICANON and time.time() < end: time.sleep(0.02)
print("seen raw")'; echo moat-done; } | "$PY" "$T_TMP/pager.py" "$T_TMP/pager.out"
EOF
	timeout -k 5 30 script -qec "/bin/bash $T_TMP/pager.sh" /dev/null </dev/null >/dev/null 2>&1
	SANITY=1 expect_eq pipeline_pager_tty_mode_kept "$(cat "$T_TMP/pager.out" 2>/dev/null)" "-echo -icanon"
fi

# 10. kernel.pty.max is one count for the host: every devpts instance but
# the host's own shares max - reserve (3072 of 4096). A guest that opens
# all the ptys it can must leave another sandbox some (red team 23: it
# took 3071, and the other sandbox's openpty was ENOSPC; the gofer's devpts
# now has max= a sixteenth of that, gofer/setup.c pty_share).
mkdir -m 777 "$T_TMP/ptyfill"
moat run --bind "$T_TMP/ptyfill:/p:rw,shared" -- "$PY" -c '
import os, resource, sys, time
h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (min(h, 8192), h))
n = 0
try:
    while True:
        os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY); n += 1
except OSError:
    pass
open("/p/n.tmp", "w").write(str(n)); os.rename("/p/n.tmp", "/p/n")
for _ in range(100):
    if os.path.exists("/p/release"):
        break
    time.sleep(0.1)
' </dev/null >/dev/null 2>&1 &
fpid=$!
at_exit "kill -9 $fpid"
for _ in $(seq 100); do [ -e "$T_TMP/ptyfill/n" ] && break; sleep 0.05; done
other=$(moat run -- "$PY" -c '
import os
try:
    os.openpty(); print("openpty ok")
except OSError as e:
    print("openpty", e.strerror)
' </dev/null 2>&1)
SANITY=1 expect_eq other_sandbox_keeps_ptys "$other (the first held $(cat "$T_TMP/ptyfill/n" 2>/dev/null))" "openpty ok (the first held $(cat "$T_TMP/ptyfill/n" 2>/dev/null))"
touch "$T_TMP/ptyfill/release"
wait "$fpid" 2>/dev/null

# 12. -t's output reaches the caller's terminal through the terminal-controls
# filter (--tty-controls=screen, the default): what draws passes, what makes
# the terminal emulator act beyond its screen does not. Before, every byte
# went on: an OSC 52 set the caller's clipboard (where the emulator allows
# it), and a query written last (DSR, a title report CSI 21 t, DECRQSS) was
# answered into the caller's shell's input after moat ended. The caller's
# side is script(1)'s typescript.
if command -v script >/dev/null; then
	tty_caller() { timeout -k 5 30 script -qec "$1" /dev/null </dev/null 2>&1; }
	# the bytes the caller's terminal saw, as Python's repr of the
	# sequences in them that are not allowed
	bad_seqs() { "$PY" -c '
import re, sys
b = sys.stdin.buffer.read()
bad = re.findall(rb"\x1b[\]P_^X]|\x1b\[[0-9;?>]*[cntx]|\x1b\[!p|\x1bc|[\x05\x9b\x9d\x90]|\xc2[\x80-\x9f]", b)
print("drew" if b"drew" in b and b"\x1b[1;31m" in b else "nothing drawn", bad)'; }
	out=$(tty_caller "$MOAT run -t -- printf 'dr\033]52;c;aGVsbG8=\007ew\033[1;31m\033]0;t\033[21t\033\\\\\033[20t\033P\$qm\033\\\\\033Ptmux;\033\033]52;c;eA==\007\033\\\\\033]8;;http://h/\033\\\\\033]1337;File=n=eA==:eA==\007\033]4;1;?\007\033]11;?\033\\\\\033c\033[!p\005\302\233\06521t\302\235\06552;c;eA==\007\033[c\033[>c\033[6n'" | bad_seqs)
	expect_eq tty_controls_queries_strings_dropped "$out" "drew []"
	# Latin-1: a raw 0x9b is CSI, 0x9d OSC (LANG not UTF-8: the filter
	# drops every 8-bit C1 byte)
	out=$(LC_ALL= LANG=en_US.ISO-8859-1 tty_caller "$MOAT run -t -- printf 'dr\233\06521t\235\06552;c;eA==\007ew\033[1;31m\233\0656n'" | bad_seqs)
	expect_eq tty_controls_c1_latin1_dropped "$out" "drew []"
	# the modes the guest turned on are undone at the end, also when
	# --timeout kills it: the alternate screen, mouse reporting, bracketed
	# paste, the hidden cursor, the scroll region (before, they stayed on:
	# the caller's shell drew on the alternate screen, every click typed
	# mouse reports into it, every paste came framed)
	out=$(tty_caller "$MOAT run -t --timeout 2 -- sh -c \"printf '\033[?1049h\033[?1000;1006h\033[?2004h\033[?25l\033[5;10rmodes'; sleep 30\"" | "$PY" -c '
import sys
b = sys.stdin.buffer.read()
tail = b[b.rfind(b"modes"):]
print(all(s in tail for s in (b"\x1b[?1049l", b"\x1b[?1000l", b"\x1b[?1006l", b"\x1b[?2004l", b"\x1b[?25h", b"\x1b[r")),
      b"timeout" in tail)')
	expect_eq tty_controls_modes_restored_on_timeout "$out" "True True"
	# ... and a mode the guest turned off again is left alone
	out=$(tty_caller "$MOAT run -t -- printf '\033[?1049h\033[?1049lmodes'" | "$PY" -c '
import sys
b = sys.stdin.buffer.read()
print(b[b.rfind(b"modes"):].count(b"\x1b[?1049"))')
	SANITY=1 expect_eq tty_controls_mode_turned_off_stays "$out" "0"
	# --tty-controls=all: every byte as before (the caller's choice)
	out=$(tty_caller "$MOAT run -t --tty-controls=all -- printf 'a\033]52;c;eA==\007b'" | od -An -c | tr -d ' \n')
	SANITY=1 expect_eq tty_controls_all_passes "$out" 'a033]52;c;eA==\ab'
	# 12b. ... and so does the default's, without -t: a stdout or stderr
	# that is the caller's terminal is a pty of the sandbox's, relayed
	# through the filter (tty_relay_plan), and a terminal stdin the guest
	# cannot write to (read-only when stdout is no terminal). Before, the
	# guest wrote to a description of the caller's terminal: every byte
	# above reached it as written (OSC 52, titles, queries answered into
	# the caller's shell after moat).
	seqs='dr\033]52;c;aGVsbG8=\007ew\033[1;31m\033]0;t\033[21t\033\\\\\033P\$qm\033\\\\\033]2;title\007\033]11;?\033\\\\\033c\005\302\233\06521t\033[c\033[>c\033[6n'
	out=$(tty_caller "$MOAT run -- printf '$seqs'" | bad_seqs)
	expect_eq notty_stdout_controls_dropped "$out" "drew []"
	out=$(tty_caller "$MOAT run -- sh -c \"printf '$seqs' >&2\" | cat >/dev/null" | bad_seqs)
	expect_eq notty_stderr_controls_dropped "$out" "drew []"
	out=$(tty_caller "$MOAT run -- sh -c \"printf '$seqs' >&0\" | cat >/dev/null" | bad_seqs)
	expect_eq notty_stdin_not_written "$out" "nothing drawn []"
	out=$(tty_caller "$MOAT run --output-limit 1M -- printf '$seqs'" | bad_seqs)
	expect_eq notty_output_limit_controls_dropped "$out" "drew []"
	out=$(tty_caller "$MOAT run --tty-controls=all -- printf 'a\033]52;c;eA==\007b'" | od -An -c | tr -d ' \n')
	SANITY=1 expect_eq notty_controls_all_passes "$out" 'a033]52;c;eA==\ab'
	# a terminal stdin the guest cannot write to still had one way out:
	# tcflow's TCIOFF/TCION send the STOP/START character, which the guest
	# sets, to the terminal's other side (the caller's emulator), a byte a
	# call: EPERM whatever the fd (sys_ioctl)
	out=$(tty_caller "$MOAT run -- $PY -c '
import termios
a = termios.tcgetattr(0); a[6][termios.VSTOP] = 126; a[6][termios.VSTART] = 126
termios.tcsetattr(0, termios.TCSANOW, a)
r = []
for n, v in ((\"tcioff\", termios.TCIOFF), (\"tcion\", termios.TCION)):
    try:
        termios.tcflow(0, v); r.append(n + \"=ok\")
    except termios.error as e:
        r.append(n + \"=\" + e.args[1])
print(\"flow\", *r)
' | cat" | tr -d '\r' | "$PY" -c 'import sys; b = sys.stdin.read(); print(b.count("~"), [l for l in b.split("\n") if l.startswith("flow")])')
	expect_eq notty_tcion_refused "$out" "0 ['flow tcioff=Operation not permitted tcion=Operation not permitted']"
	# the guest still sees a terminal on 0-2, reads a typed line and the
	# terminal's size
	out=$( (sleep 1.5; printf 'abc\n') | timeout -k 5 30 script -qec "stty rows 31 cols 97; $MOAT run -- sh -c 'test -t 0 && test -t 1 && test -t 2 && echo tty; stty size; read x; echo got:\$x'" /dev/null 2>&1 | tr -d '\r' | grep -E '^(tty|got:|[0-9]+ [0-9]+$)' | tr '\n' ' ')
	SANITY=1 expect_eq notty_stdio_terminal_reads "$out" "tty 31 97 got:abc "
else
	skip tty_controls "no script(1)"
fi

# 13. Without -t the guest's stdio may be the caller's terminal itself (here
# script(1)'s pty, the controlling terminal of moat's session): what reaches
# beyond the guest is refused. TIOCSTI (typing into the caller's shell),
# TIOCLINUX, TIOCCONS (the console's output), TIOCSETD (a line discipline),
# TIOCVHANGUP and vhangup (hanging the caller's terminal up), TIOCEXCL (no
# open of it after), TIOCSCTTY from a new session: EPERM; tcsetpgrp on the
# caller's job: ENOTTY (the guest's session has no controlling terminal).
# TCSETS and TIOCSWINSZ: caller_tty_settings_kept, caller_tty_winsize_kept.
if command -v script >/dev/null; then
	mkdir -p "$T_TMP/ttyprobe"
	cat >"$T_TMP/ttyprobe/probe.py" <<'EOF2'
import ctypes, errno, fcntl, os, struct, sys, termios
r = []
def t(name, fn):
    try:
        fn(); r.append(name + "=ok")
    except OSError as e:
        r.append(name + "=" + errno.errorcode[e.errno])
libc = ctypes.CDLL(None, use_errno=True)
def vhangup():
    if libc.vhangup() != 0:
        raise OSError(ctypes.get_errno(), "vhangup")
def sctty():
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        try:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0); e = 0
        except OSError as x:
            e = x.errno
        os.write(wr, struct.pack("i", e)); os._exit(0)
    os.waitpid(pid, 0)
    e = struct.unpack("i", os.read(rd, 4))[0]
    if e:
        raise OSError(e, "sctty")
t("sti", lambda: fcntl.ioctl(0, termios.TIOCSTI, b"#"))
t("linux", lambda: fcntl.ioctl(0, 0x541C, b"\x0b"))
t("cons", lambda: fcntl.ioctl(0, termios.TIOCCONS))
t("setd", lambda: fcntl.ioctl(0, termios.TIOCSETD, struct.pack("i", 0)))
t("excl", lambda: fcntl.ioctl(0, termios.TIOCEXCL))
t("sctty", sctty)
t("spgrp", lambda: os.tcsetpgrp(0, os.getpgrp()))
t("tiocvhangup", lambda: fcntl.ioctl(0, 0x5437))
t("vhangup", vhangup)
print("probe", os.isatty(0), " ".join(r))
EOF2
	out=$(timeout -k 5 30 script -qec "$MOAT run --bind $T_TMP/ttyprobe:/t:ro -- $PY /t/probe.py | cat" /dev/null </dev/null 2>&1 | tr -d '\r' | grep -o 'probe .*')
	expect_eq caller_tty_controls_refused "$out" "probe True sti=EPERM linux=EPERM cons=EPERM setd=EPERM excl=EPERM sctty=EPERM spgrp=ENOTTY tiocvhangup=EPERM vhangup=EPERM"
fi

# 13b. a caller's terminal in exclusive mode (TIOCEXCL: no other open of it
# but by a privileged one) stays so: the guest's TIOCNXCL, on the read-only
# stdin it shares with the caller, is EPERM as TIOCEXCL is (red team 89: it
# cleared the mode for good). On main moat did not even start there: the
# gofer could not open /dev/tty to let the terminal go (EBUSY), and its
# fallback, setsid after setpgid, is EPERM ("leaving the caller's
# terminal: Operation not permitted"). Nor may the guest write to it: its
# stdin is a read-only description, or (rootless: the read-only reopen of
# an exclusive terminal is EBUSY, as it is EACCES for a terminal the caller
# may not open, su from another user's) /dev/null, where before moat warned
# and gave the program the caller's writable description (red team 89: an
# OSC 52 written to fd 0 reached the terminal past the filter).
if command -v script >/dev/null; then
	cat >"$T_TMP/excl.sh" <<EOF
excl() { "$PY" -c 'import fcntl, struct; print(struct.unpack("i", fcntl.ioctl(0, 0x80045440, bytes(4)))[0])'; }
"$PY" -c 'import fcntl; fcntl.ioctl(0, 0x540C)'
echo "before=\$(excl)" >"$T_TMP/excl.out"
"$MOAT" run -- "$PY" -c '
import errno, fcntl, os
try:
    fcntl.ioctl(0, 0x540D); print("guest=ok")
except OSError as e:
    print("guest=" + ("refused" if e.errno in (errno.EPERM, errno.ENOTTY) else errno.errorcode[e.errno]))
try:
    os.write(0, b"\a"); print("write=ok")
except OSError as e:
    print("write=" + errno.errorcode[e.errno])
' 2>"$T_TMP/excl.err" | cat >>"$T_TMP/excl.out"
echo "after=\$(excl)" >>"$T_TMP/excl.out"
"$PY" -c 'import fcntl; fcntl.ioctl(0, 0x540D)'
EOF
	timeout -k 5 30 script -qec "/bin/bash $T_TMP/excl.sh" /dev/null </dev/null >/dev/null 2>&1
	expect_eq caller_tty_exclusive_kept "$(tr '\n' ' ' <"$T_TMP/excl.out" 2>/dev/null)$(grep -v '^moat: stdin is /dev/null' "$T_TMP/excl.err" 2>/dev/null)" \
		"before=1 guest=refused write=EBADF after=1 "
fi

# 14. moat's gofer (and the helpers it forks) is out of the caller's terminal:
# run from a terminal (moat its session's leader, as under a login shell), the
# gofer has no controlling terminal (its tty_nr is 0: /dev/tty is ENXIO there,
# never the user's terminal) and is not in moat's process group, the one the
# terminal's ^C, ^Z and hang-up reach. Since start40 not by setsid (a new
# autogroup on the start-up's critical path): its own group and TIOCNOTTY.
# out_of_terminal NAMES ARGS...: moat run ARGS in a new pty; each helper of
# moat's named in NAMES (comma-separated), and what it forked, neither in the
# terminal nor holding it as a fd among 0-2 (where /proc shows them: root)
out_of_terminal() {
	timeout -k 5 30 "$PY" - "$MOAT" "$@" <<'EOF' 2>&1
import os, pty, select, sys, time
moat, names, args = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(moat, [moat, "run"] + args + ["--", "/bin/sh", "-c", "echo ready; read x; echo bye"])
buf, end = b"", time.time() + 15
def more():
    global buf
    if select.select([fd], [], [], 0.2)[0]:
        try: buf += os.read(fd, 1024)
        except OSError: return False
    return time.time() < end
while b"ready" not in buf and more(): pass
def stat(p):
    s = open("/proc/%d/stat" % p).read()
    f = s[s.rindex(")") + 2:].split()
    return s[s.index("(") + 1:s.rindex(")")], int(f[1]), int(f[2]), int(f[4])
kids = {}
for d in filter(str.isdigit, os.listdir("/proc")):
    try: kids.setdefault(stat(int(d))[1], []).append(int(d))
    except (OSError, ValueError): pass
def desc(p):
    for c in kids.get(p, []):
        yield c; yield from desc(c)
def holds(p):
    n = 0
    for i in range(3):
        try: n += os.stat("/proc/%d/fd/%d" % (p, i)).st_rdev == slave
        except OSError: pass
    return n
_, _, mgrp, mtty = stat(pid)
slave = os.stat("/proc/%d/fd/0" % pid).st_rdev
found = [c for c in kids.get(pid, []) if stat(c)[0] in names]
bad = ["%s tty %d group %s fds %d" % (stat(c)[0], stat(c)[3], "moat's" if stat(c)[2] == mgrp else "own", holds(c))
       for g in found for c in [g] + list(desc(g)) if stat(c)[3] != 0 or stat(c)[2] == mgrp or holds(c)]
found = ",".join(sorted(stat(c)[0] for c in found))
os.write(fd, b"x\n")
while b"bye" not in buf and more(): pass
_, st = os.waitpid(pid, 0)
print("moat tty", "yes" if mtty else "none", "helpers", found,
      "in the terminal", bad or "none", "exit", os.waitstatus_to_exitcode(st))
EOF
}
expect_eq gofer_out_of_callers_terminal "$(out_of_terminal moat-gofer)" "moat tty yes helpers moat-gofer in the terminal none exit 0"

# 14b. the same for the helpers the guest talks to, which parse or relay its
# bytes: moat-netd (--net rules), moat-broker (--secret), moat-publish
# (--publish). Red team 89: they held the caller's terminal as fds 1-2,
# read-write, in moat's group with the terminal as theirs, and their filters
# allow read, write and fcntl on any fd: a compromised one wrote past the
# terminal-controls filter (a query the terminal answers into the caller's
# shell after the run) or read the caller's keys.
pport=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
expect_eq net_helpers_out_of_callers_terminal \
	"$(MOAT_RT89_TOKEN=moat-rt89-not-a-secret-value out_of_terminal moat-netd,moat-broker,moat-publish \
		--net allow=127.0.0.1:9 --secret MOAT_RT89_TOKEN@127.0.0.1:9 --publish "$pport:80")" \
	"moat tty yes helpers moat-broker,moat-netd,moat-publish in the terminal none exit 0"

# 14c. and moat-reopen (the guest's reopens of objects whose mode denies
# their owner, sentry/reopen.c), forked by the sentry: red team 91, it was in
# moat's process group (the terminal's foreground one) with the caller's
# terminal its controlling one and as its fd 2.
expect_eq reopen_helper_out_of_callers_terminal "$(out_of_terminal moat-reopen)" \
	"moat tty yes helpers moat-reopen in the terminal none exit 0"

finish
