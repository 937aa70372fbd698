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

finish
