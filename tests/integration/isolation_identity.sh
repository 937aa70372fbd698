#!/bin/bash
# NEGATIVE tests, identity: nothing of the host's names shows inside (host
# name, kernel release and build string); the guest's ids are virtual (--user;
# root inside may drop to any uid, a dropped process cannot get root back and
# loses root's file access); /etc/hosts resolves the sandbox's own host name;
# sethostname inside never reaches the host; /proc/sysvipc shows the
# sandbox's IPC objects, not the host's.
# Harmless natively: it only reads the host's names and writes in its temp dir.
. "$(dirname "$0")/lib.sh"

ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1
HOST_NAME=$(hostname)
HOST_REL=$(uname -r)
HOST_VER=$(uname -v)

# ---- 1. uts names: the sandbox's, never the host's ----
out=$(mrun hostname)
expect_eq default_hostname "$out" moat
out=$(moat run --hostname box7 -- hostname </dev/null)
expect_eq hostname_flag "$out" box7
out=$(mrun uname -r)
expect_eq default_release "$out" "$(printf %s "$HOST_REL" | sed -E 's/^([0-9]+\.[0-9]+).*/\1.0-moat/')"
out=$(moat run --kernel-release 5.4.0-test -- uname -r </dev/null)
expect_eq release_flag "$out" 5.4.0-test
out=$(mrun sh -c 'uname -a; cat /proc/version /proc/sys/kernel/osrelease /proc/sys/kernel/hostname /etc/hostname')
case $out in
*"$HOST_REL"* | *"$HOST_VER"*) fail no_host_kernel_string "host release/build string inside: $out" ;;
*) ok no_host_kernel_string ;;
esac
if [ "$HOST_NAME" != moat ] && printf '%s' "$out" | grep -qw -- "$HOST_NAME"; then
	fail no_host_name "host name inside: $out"
else
	ok no_host_name
fi

# ---- 1b. SysV IPC: /proc/sysvipc lists the sandbox's IPC namespace only ----
# (the sentry reads it in the guest's namespace; the host's segment made here
# must not show, the guest's own must; the guest removes its own, which
# natively, the fake, is the host's too)
hid=$(ipcmk -M 4096 2>/dev/null | awk '{print $NF}')
[ -n "$hid" ] && at_exit "ipcrm -m '$hid'"
out=$(mrun sh -c 'cat /proc/sysvipc/shm | wc -l; g=$(ipcmk -M 4096 | awk "{print \$NF}"); cat /proc/sysvipc/shm | wc -l; ipcrm -m "$g"')
[ -n "$hid" ] && ipcrm -m "$hid" 2>/dev/null
expect_eq sysvipc_guest_namespace_only "$(echo $out)" "1 2"

# ---- 2. /etc/hosts resolves the sandbox's own name ----
out=$(moat run --hostname box7 -- getent hosts box7 </dev/null)
expect_eq getent_hosts_own_name "$(echo $out)" "127.0.1.1 box7"
out=$(mrun "$PY" -c 'import socket; print(socket.gethostbyname(socket.gethostname()))')
expect_eq python_resolves_hostname "$out" 127.0.1.1
out=$(mrun sh -c 'grep -c "$(hostname)" /etc/hosts; grep -c localhost /etc/hosts')
expect_eq etc_hosts_lines "$(echo $out)" "1 2"

# ---- 3. sethostname inside: the sandbox's name only ----
# Natively (fake-moat) as root this would rename the host: the guest program
# checks first that it is in a sandbox (its uname is not the host's), and the
# host's name is put back at exit whatever happens.
[ $ROOT = 1 ] && at_exit "[ \"\$(hostname)\" = '$HOST_NAME' ] || hostname '$HOST_NAME'"
out=$(moat run --user 0:0 -- sh -c '[ "$(uname -r)" != "$1" ] || exit 9
	hostname inner1 && hostname && uname -n && getent hosts inner1' sh "$HOST_REL" </dev/null)
expect_eq sethostname_inside "$(echo $out)" "inner1 inner1 127.0.1.1 inner1"
SANITY=1 expect_eq host_name_unchanged "$(hostname)" "$HOST_NAME"

# ---- 4. ids: --user, drops, no way back ----
if [ $ROOT = 1 ]; then
	out=$(mrun id)
	SANITY=1 expect_eq id_root "$out" "uid=0(root) gid=0(root) groups=0(root)"
	out=$(mrun setpriv --reuid=65534 --regid=65534 --clear-groups id)
	SANITY=1 expect_eq setpriv_drop "$out" "uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)"
	out=$(mrun setpriv --reuid=65534 --regid=65534 --clear-groups setpriv --reuid=0 id 2>&1)
	case $out in *"uid=0"*) fail setpriv_no_way_back "$out" ;; *) ok_sanity setpriv_no_way_back ;; esac
else
	out=$(mrun id -u)
	expect_eq id_rootless_caller "$out" "$(id -u)"
fi
out=$(moat run --user 1000:1000 -- sh -c 'id -u; id -g; id -G; grep -E "^(Uid|Gid|CapEff)" /proc/self/status' </dev/null)
expect_eq user_flag "$(echo $out)" "1000 1000 1000 Uid: 1000 1000 1000 1000 Gid: 1000 1000 1000 1000 CapEff: 0000000000000000"
if [ $ROOT = 1 ]; then
	# new files belong to their creator (private /tmp)
	guest_tmp /tmp/f /tmp/d
	out=$(moat run --user 1000:1000 -- sh -c 'cd /tmp && touch f && mkdir d && stat -c "%u:%g" f d' </dev/null 2>&1)
	expect_eq user_flag_owns_new_files "$(echo $out)" "1000:1000 1000:1000"
	out=$(moat run --user 1000:1000 -- sh -c 'touch "$HOME/x" && stat -c "%u:%g" "$HOME" "$HOME/x"' </dev/null 2>&1)
	expect_eq user_flag_owns_home "$(echo $out)" "1000:1000 1000:1000"
fi
out=$(moat run --user 1000:1000 -- "$PY" -c '
import os
try:
    os.setuid(0); print("became root")
except PermissionError: print("EPERM")' </dev/null)
expect_eq user_flag_cannot_setuid "$out" EPERM

# root inside (--user 0:0, also rootless) drops to nobody: a 0600 file root
# made in the private /tmp is no longer readable or writable, root is not
# regained, and the capabilities are gone
guest_tmp /tmp/secret
out=$(moat run --user 0:0 -- "$PY" -c '
import os, ctypes
p = "/tmp/secret"
with open(p, "w") as f: f.write("x")
os.chmod(p, 0o600)
os.setgroups([]); os.setgid(65534); os.setuid(65534)
r = []
for mode in ("r", "a"):
    try:
        open(p, mode); r.append("open-" + mode)
    except PermissionError: r.append("EACCES")
for f in (lambda: os.setuid(0), lambda: os.seteuid(0), lambda: os.setresuid(0, 0, 0), lambda: os.setgroups([0])):
    try:
        f(); r.append("regained")
    except PermissionError: r.append("EPERM")
try:
    os.chown(p, 65534, 65534); r.append("chown")
except PermissionError: r.append("EPERM")
r.append(os.getresuid() == (65534, 65534, 65534))
r.append([l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])
print(*r)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_root_stays_dropped "$out" "EACCES EACCES EPERM EPERM EPERM EPERM EPERM True 0000000000000000"

# root inside has the sandbox's capability set (kernel/cred.h), never e.g.
# CAP_SYS_ADMIN (21), CAP_SYS_MODULE (16), CAP_SYS_RAWIO (17), CAP_DAC_READ_SEARCH (2)
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
PR_CAPBSET_READ = 23
eff = int([l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0], 16)
print([libc.prctl(PR_CAPBSET_READ, c) for c in (2, 16, 17, 21)], [bool(eff >> c & 1) for c in (2, 16, 17, 21)],
      bool(eff >> 7 & 1), libc.prctl(PR_CAPBSET_READ, 7))' </dev/null 2>&1)
expect_eq root_lacks_admin_caps "$out" "[0, 0, 0, 0] [False, False, False, False] True 1"

# a dropped process cannot rename the sandbox either
out=$(moat run --user 0:0 -- "$PY" -c '
import os, socket
os.setuid(65534)
try:
    socket.sethostname("x"); print("renamed")
except PermissionError: print("EPERM")' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_sethostname "$out" EPERM

# a dropped process cannot act on root's processes by pid: rlimits, nice,
# scheduler, affinity, I/O priority, its robust list head (an address of its
# memory: get_robust_list) (red-team round 5: every guest task is
# one host uid, so the kernel allowed all of them; /tmp/redteam5/xuid.c set
# a root process's RLIMIT_NOFILE to 0), nor renice a process group holding
# one. Its own process stays its own.
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, resource, signal, time
libc = ctypes.CDLL(None, use_errno=True)
root = os.fork()
if root == 0:
    time.sleep(60); os._exit(0)
os.setpgid(0, 0)
os.setpgid(root, 0)
me = os.fork()
if me == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    def t(f):
        try: f(); return "ok"
        except PermissionError: return "EPERM"
        except OSError as e: return e.strerror
    r = [t(lambda: resource.prlimit(root, resource.RLIMIT_NOFILE, (0, 0))),
         t(lambda: os.setpriority(os.PRIO_PROCESS, root, 19)),
         t(lambda: os.sched_setaffinity(root, {0})),
         t(lambda: os.sched_setscheduler(root, os.SCHED_IDLE, os.sched_param(0))),
         "ok" if libc.syscall(251, 1, root, (3 << 13)) == 0 else ("EPERM" if ctypes.get_errno() == 1 else os.strerror(ctypes.get_errno())),
         t(lambda: os.setpriority(os.PRIO_PGRP, 0, 19)),
         "ok" if libc.syscall(274, root, ctypes.byref(ctypes.c_void_p()), ctypes.byref(ctypes.c_size_t())) == 0 else ("EPERM" if ctypes.get_errno() == 1 else os.strerror(ctypes.get_errno())),
         t(lambda: resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE, (64, 64)))]
    print(*r, flush=True); os._exit(0)
os.waitpid(me, 0)
print(resource.prlimit(root, resource.RLIMIT_NOFILE)[0] > 0, os.getpriority(os.PRIO_PROCESS, root), os.sched_getscheduler(root) == os.SCHED_OTHER)
os.kill(root, signal.SIGKILL)' </dev/null 2>&1)
# (a guest process keeps the nice and class the caller started with: a
# runner's 19 or SCHED_IDLE stays where no runner could normalise it)
other=$(chrt -p $$ 2>/dev/null | grep -q SCHED_IDLE && echo False || echo True)
SANITY=1 expect_eq dropped_cannot_touch_root_by_pid "$out" "$(printf 'EPERM EPERM EPERM EPERM EPERM EPERM EPERM ok\nTrue %s %s' "$(nice)" "$other")"

# moat-init (the guest's pid 1, and its act thread, which makes the
# sentry's calls on guest tasks) is moat's, not the guest's: its root set
# moat-init's RLIMIT_NOFILE to 16, nice 19, SCHED_IDLE, one CPU and the
# idle I/O class, natively (red team 82, left as a container's root may its
# init's), starving the reaper and every setpriority, prlimit and exec pin
# the act thread makes. EPERM now, by either number (owner_check,
# task_is_init), and a process group's nice (moat-init's group is the
# program's at first) reaches the guest's members only; reads stay.
out=$(moat run -- "$PY" -c '
import ctypes, errno, os, resource
libc = ctypes.CDLL(None, use_errno=True)
def t(f):
    try:
        f(); return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
def ioprio(who):
    if libc.syscall(251, 1, who, 3 << 13) != 0:
        raise OSError(ctypes.get_errno(), "ioprio_set")
if open("/proc/1/comm").read().strip() != "moat-init":
    raise SystemExit("not in moat: pid 1 is not moat-init")  # never the host init
r = []
for tid in sorted(int(x) for x in os.listdir("/proc/1/task")):
    r += [t(lambda: resource.prlimit(tid, resource.RLIMIT_NOFILE, (16, 16))),
          t(lambda: os.setpriority(os.PRIO_PROCESS, tid, 19)),
          t(lambda: os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))),
          t(lambda: os.sched_setaffinity(tid, {0})), t(lambda: ioprio(tid))]
r.append(t(lambda: os.setpriority(os.PRIO_PGRP, 0, 5)))
try:
    nofile = str(resource.prlimit(1, resource.RLIMIT_NOFILE)[0] > 16)
except OSError as e:
    nofile = errno.errorcode[e.errno]  # (rootless: EPERM, a read as on main)
print(len(r), " ".join(sorted(set(r[:-1]))), r[-1], "kept" if nofile in ("True", "EPERM") else nofile,
      os.getpriority(os.PRIO_PROCESS, 1), os.sched_getscheduler(1), os.getpriority(os.PRIO_PROCESS, 0))
' </dev/null 2>&1)
if why=$(sched_normal); then expect_eq init_nice_limits_class_kept "$out" "11 EPERM ok kept 0 0 5"
else skip init_nice_limits_class_kept "$why"; fi

# prctl(PR_SCHED_CORE, op, pid, type) acts on another task by pid (its
# core scheduling cookie: who may share an SMT core with it, the defence
# against sibling-thread side channels), after the kernel's ptrace check,
# which one host uid always passes (red team 31: native, the class red
# team 5 closed for prlimit/setpriority). Now the check on the virtual ids:
# EPERM for a dropped process on root's pid, on root's process group
# (PIDTYPE_PGID: each member checked) and from its own group holding root;
# its own pid runs natively (0, or EINVAL on a kernel without core
# scheduling, as this one may be). The command and type with bit 32 set
# (the kernel takes their low 32 bits; red team 55: "one task" here, native
# on the group) are the same EPERM.
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
def core(op, pid, typ):
    ck = ctypes.c_ulong(0)
    r = libc.prctl(62, ctypes.c_ulong(op), pid, ctypes.c_ulong(typ), ctypes.byref(ck) if op == 0 else None)
    return "ok" if r == 0 else {1: "EPERM", 22: "EINVAL", 3: "ESRCH"}.get(ctypes.get_errno(), str(ctypes.get_errno()))
root = os.fork()
if root == 0:
    os.setpgid(0, 0); time.sleep(60); os._exit(0)
time.sleep(0.3)
me = os.fork()
if me == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    own = core(1, os.getpid(), 0)
    print(core(0, root, 0), core(1, root, 0), core(3, root, 0), core(1, root, 2), core(1, 0, 2),
          core(1 | 1 << 32, 0, 2), core(1, 0, 2 | 1 << 32),
          "own", "ok" if own in ("ok", "EINVAL") else own, flush=True)
    os._exit(0)
os.waitpid(me, 0)
os.kill(root, signal.SIGKILL)' </dev/null 2>&1)
expect_eq dropped_cannot_touch_root_sched_core "$out" "EPERM EPERM EPERM EPERM EPERM EPERM EPERM own ok"

# The same check covers every thread Linux checks (red team 35): for
# PIDTYPE_TGID every thread of the named task's process, for PIDTYPE_PGID
# every thread of every process of its group (do_each_pid_thread), not the
# named task or each process's leader only. A root process whose leader
# alone dropped to 1000 (a raw setresuid: that thread only) and made itself
# dumpable again, another thread still root: the leader by itself is the
# dropped process's to act on (PIDTYPE_PID: native, ok or EINVAL), its
# process and its group are not (Linux: EPERM, the root thread). Before, the
# leader alone was checked: native, and on a kernel with core scheduling the
# root thread took the dropped process's cookie (SHARE_TO) or a new one.
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, signal, threading, time
libc = ctypes.CDLL(None, use_errno=True)
def core(op, pid, typ):
    r = libc.prctl(62, op, pid, typ, None)
    return "ok" if r == 0 else {1: "EPERM", 22: "EINVAL", 3: "ESRCH"}.get(ctypes.get_errno(), str(ctypes.get_errno()))
rd, wr = os.pipe()
root = os.fork()
if root == 0:
    os.setpgid(0, 0)
    threading.Thread(target=lambda: time.sleep(60), daemon=True).start()
    if libc.syscall(119, 1000, 1000, 1000) or libc.syscall(117, 1000, 1000, 1000) or libc.prctl(4, 1, 0, 0, 0):
        os._exit(1)
    os.write(wr, b"r"); time.sleep(60); os._exit(0)
os.read(rd, 1)
me = os.fork()
if me == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    pid = core(2, root, 0)
    print(core(2, root, 1), core(2, root, 2), core(1, root, 1), core(1, root, 2),
          "pid", "ok" if pid in ("ok", "EINVAL") else pid, flush=True)
    os._exit(0)
os.waitpid(me, 0)
os.kill(root, signal.SIGKILL)' </dev/null 2>&1)
expect_eq dropped_cannot_touch_mixed_thread_sched_core "$out" "EPERM EPERM EPERM EPERM pid ok"

# ioctl(pidfd, PIDFD_GET_INFO) (Linux 6.13) showed the native ids: root-run
# 0 for a process that dropped to 1000 (red team 31; what a peer check
# after SO_PEERPIDFD would trust). Now ENOTTY, as Linux before 6.13, at
# either size (the struct is extensible: the size is in the number); TCFLSH
# (0x540b, the same number, another type) still runs (ENOTTY on a pipe).
PIDINFO_PY='
import ctypes, errno, fcntl, os, struct
def info(pfd, req):
    try:
        b = fcntl.ioctl(pfd, req, struct.pack("Q", 0xffffffffffffffff) + bytes(0x48))
        return "uid%d" % struct.unpack_from("I", b, 28)[0]
    except OSError as e: return errno.errorcode.get(e.errno, str(e.errno))
os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
pfd = os.pidfd_open(os.getpid())
r, w = os.pipe()
try: fcntl.ioctl(r, 0x540b, 0); fl = "ok"
except OSError as e: fl = errno.errorcode.get(e.errno, str(e.errno))
print(info(pfd, 0xc050ff0b), info(pfd, 0xc040ff0b), "tcflsh", fl)'
nat=$("$PY" -c "$PIDINFO_PY" 2>&1)
case $nat in
uid1000*)
	out=$(moat run --user 0:0 -- "$PY" -c "$PIDINFO_PY" </dev/null 2>&1)
	expect_eq dropped_pidfd_info_not_native_ids "$out" "ENOTTY ENOTTY tcflsh ENOTTY" ;;
*) skip dropped_pidfd_info_not_native_ids "no PIDFD_GET_INFO here: $nat" ;;
esac
# ... and on no fd that holds a pidfd by the time the kernel looks (red
# team 70): a number that was no pidfd at the check ran natively, and a
# thread's dup2 of a pidfd onto it meanwhile gave the native ids within
# ~700 tries. Now ENOTTY on any open fd
case $nat in
uid1000*)
	out=$(moat run -- "$PY" -c '
import ctypes, os, struct, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
pf = os.pidfd_open(os.getpid()); nul = os.open("/dev/null", os.O_RDONLY)
os.dup2(nul, 50)
b = ctypes.create_string_buffer(struct.pack("Q", 0xff), 64)
stop = False
def sw():
    while not stop: os.dup2(pf, 50); os.dup2(nul, 50)
th = threading.Thread(target=sw); th.start()
t0, got = time.time(), "no info"
while time.time() - t0 < float(sys.argv[1]):
    if libc.ioctl(50, 0xc040ff0b, b) == 0: got = "native info"; break
stop = True; th.join()
print(got)' "$(awk -v s="${RACE_SECONDS:-1}" 'BEGIN { print (s < 1 ? s : 1) }')" </dev/null 2>&1)
	expect_eq pidfd_info_not_native_after_dup2 "$out" "no info" ;;
*) skip pidfd_info_not_native_after_dup2 "no PIDFD_GET_INFO here: $nat" ;;
esac

# pidfd_getfd is emulated (the sentry takes the fd): a process that dropped
# root cannot take a root process's fd (Linux's ptrace attach rule on the
# virtual ids), nobody takes the guest init's (moat-init), and its own
# child's it may.
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
def getfd(pid, fd):
    pfd = os.pidfd_open(pid)
    r = libc.syscall(438, pfd, fd, 0)
    e = ctypes.get_errno(); os.close(pfd)
    return "ok" if r >= 0 else os.strerror(e)
rd, wr = os.pipe()
root = os.fork()
if root == 0:
    f = os.open("/etc/hostname", os.O_RDONLY); os.dup2(f, 50); time.sleep(60); os._exit(0)
time.sleep(0.3)
me = os.fork()
if me == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    kid = os.fork()
    if kid == 0:
        libc.prctl(4, 1, 0, 0, 0) # PR_SET_DUMPABLE: fork kept the drop 0
        os.dup2(0, 51); time.sleep(60); os._exit(0)
    time.sleep(0.3)
    print(getfd(root, 50), getfd(1, 0), getfd(kid, 51), flush=True)
    os.kill(kid, signal.SIGKILL); os._exit(0)
os.waitpid(me, 0)
os.kill(root, signal.SIGKILL)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_take_root_fd "$out" "Operation not permitted Operation not permitted ok"

# a dropped process cannot read a root process's address space layout or
# where its links lead: /proc/<pid>/maps, environ and io, the cwd, root and
# exe links, and the code/stack/data addresses of its stat are Linux's
# ptrace access check (PTRACE_MODE_READ_FSCREDS) on the virtual ids
# (red-team round 7: the guest procfs answers every reader alike, one host
# uid; a dropped process read root's maps and stat addresses). Its own stay
# readable.
out=$(moat run --user 0:0 -- "$PY" -c '
import os, time
root = os.fork()
if root == 0:
    time.sleep(60); os._exit(0)
me = os.fork()
if me == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    def rd(p):
        try: open(p).read(); return "ok"
        except PermissionError: return "EACCES"
        except OSError as e: return e.strerror
    def rl(p):
        try: os.readlink(p); return "ok"
        except PermissionError: return "EACCES"
        except OSError as e: return e.strerror
    st = open("/proc/%d/stat" % root).read().rsplit(")", 1)[1].split()
    own = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    r = [rd("/proc/%d/maps" % root) + rd("/proc/%d/smaps" % root) + rd("/proc/%d/numa_maps" % root),
         rd("/proc/%d/task/%d/maps" % (root, root)), rd("/proc/%d/environ" % root),
         rl("/proc/%d/cwd" % root), rl("/proc/%d/root" % root), rl("/proc/%d/exe" % root),
         "hidden" if st[23:28] == ["1", "1", "0", "0", "0"] and st[42:49] == ["0"] * 7 else "shown", rd("/proc/self/maps"), rl("/proc/self/exe"),
         "hidden" if own[23:26] == ["1", "1", "0"] else "shown"]
    print(*r, flush=True); os._exit(0)
os.waitpid(me, 0)
os.kill(root, 9)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_read_root_proc "$out" "EACCESEACCESEACCES EACCES EACCES EACCES EACCES EACCES hidden ok ok shown"

# a dropped process cannot reach root's 0600 AF_UNIX socket by the abstract
# name moat binds it under in the guest's network namespace (abstract names
# run natively): the name's last part is a random secret per bind (red team
# round 7: it was a counter; the sandbox's prefix came from a native
# accept, which names the peer's abstract name, the dev and inode from stat,
# and connect reached the root-only socket past the path's EACCES).
guest_tmp /tmp/run /tmp/mine.l /tmp/mine.c
out=$(moat run --user 0:0 -- "$PY" -c '
import os, socket
os.makedirs("/tmp/run", exist_ok=True); os.chmod("/tmp/run", 0o755)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("/tmp/run/rootd.sock"); os.chmod("/tmp/run/rootd.sock", 0o600); s.listen(64)
me = os.fork()
if me == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    r = []
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try: c.connect("/tmp/run/rootd.sock"); r.append("ok")
    except PermissionError: r.append("EACCES")
    except OSError as e: r.append(e.strerror)
    os.umask(0)  # (rootless, its files show as owned by root: others need the bits)
    l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); l.bind("/tmp/mine.l"); l.listen(1)
    k = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); k.bind("/tmp/mine.c"); k.connect("/tmp/mine.l")
    a, peer = l.accept()
    peer = peer.decode(errors="replace") if isinstance(peer, bytes) else peer
    st = os.stat("/tmp/run/rootd.sock")
    reached = 0
    if peer.startswith("\0moat/"):
        pre = "/".join(peer.split("/")[:2]) + "/" + peer.split("/")[2].split(":")[0]
        for g in range(1, 65):
            for name in ("%s:%x:%x" % (pre, st.st_ino, g), "%s:%x:%016x" % (pre, st.st_ino, g)):
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try: c.connect(name); reached += 1
                except OSError: pass
                c.close()
    r.append("reached" if reached else "refused")
    print(*r, flush=True); os._exit(0)
os.waitpid(me, 0)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_reach_root_socket_by_abstract_name "$out" "EACCES refused"

# A program the caller may run but not read (root's 0711 copy): the process
# running it is not dumpable, so a process of the same ids reads neither its
# maps nor its memory (Linux's would_dump; red team 19: both were open, and
# process_vm_readv read the program's text; root inside, also rootless)
guest_tmp /tmp/xonly
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, shutil, time
shutil.copy("/bin/sleep", "/tmp/xonly"); os.chmod("/tmp/xonly", 0o711)
os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
pid = os.fork()
if pid == 0:
    os.execv("/tmp/xonly", ["xonly", "5"])
time.sleep(0.3)
r = []
try: open("/proc/%d/maps" % pid).read(); r.append("maps:read")
except OSError as e: r.append("maps:" + e.strerror)
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(16)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 16)
riov = (ctypes.c_void_p * 2)(0x1000, 16)
n = libc.process_vm_readv(pid, iov, 1, riov, 1, 0)
r.append("vm:" + (os.strerror(ctypes.get_errno()) if n < 0 else "read"))
os.kill(pid, 9); os.waitpid(pid, 0)
print(*r)' </dev/null 2>&1)
SANITY=1 expect_eq exec_only_program_not_dumpable "$out" "maps:Permission denied vm:Operation not permitted"

# The same program run with a seccomp filter of the caller's own that answers
# close() with 0 and closes nothing (RET_ERRNO(0); it outlives the exec and
# applies to the loader's calls): the loader's fd of the program must not
# reach the program, which could then read the whole file it may not read
# (red team 38: fd 3 was the program, its bytes past the segments read with
# pread; Linux's exec never puts the file in the fd table). Now the sentry
# checks the loader's table and kills the exec ("killed", status -9);
# natively the program runs and finds no such fd ("none"). "faked" says
# the filter did keep an fd open. Root inside drops to 1000, also rootless.
guest_tmp /tmp/xpy
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, shutil, struct, sys
shutil.copy(sys.executable, "/tmp/xpy"); os.chmod("/tmp/xpy", 0o711)
with open("/tmp/xpy", "ab") as f: f.write(b"XONLY-TAIL-MARK")
os.chmod("/tmp/xpy", 0o711)
ino = os.stat("/tmp/xpy").st_ino
os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
r = []
try: open("/tmp/xpy", "rb"); r.append("readable")
except OSError: pass
libc = ctypes.CDLL(None, use_errno=True)
ins = [(0x20, 0, 0, 0), (0x15, 0, 3, 3), (0x20, 0, 0, 16), (0x35, 0, 1, 3),
       (0x06, 0, 0, 0x00050000), (0x06, 0, 0, 0x7fff0000)]
code = b"".join(struct.pack("HBBI", *i) for i in ins)
buf = ctypes.create_string_buffer(code)
class Prog(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(len(ins), ctypes.cast(buf, ctypes.c_void_p))
pid = os.fork()
if pid == 0:
    libc.prctl(38, 1, 0, 0, 0)
    if libc.prctl(22, 2, ctypes.byref(prog), 0, 0): os._exit(3)
    fd = os.open("/dev/null", os.O_RDONLY); os.close(fd)
    try: os.fstat(fd); print("faked", flush=True)
    except OSError: pass
    os.execve("/tmp/xpy", ["xpy", "-S", "-c", """
import os
hit = "none"
for fd in range(3, 64):
    try: st = os.fstat(fd)
    except OSError: continue
    if st.st_ino == %d:
        hit = "leak" + ("-read" if b"XONLY-TAIL-MARK" in os.pread(fd, 64, st.st_size - 64) else "")
print(hit, flush=True)
""" % ino], {"PYTHONHOME": sys.prefix})
_, st = os.waitpid(pid, 0)
r.append("killed" if os.WIFSIGNALED(st) and os.WTERMSIG(st) == 9 else "exit")
print(*r)' </dev/null 2>&1 | grep -v "^moat: exec of")
case $(echo $out) in
"faked killed" | "faked none exit") ok_sanity exec_only_program_fd_not_left_by_guest_filter ;;
*) fail exec_only_program_fd_not_left_by_guest_filter "$(echo $out)" ;;
esac

# Linux's dumpable flag is the process's (its mm's): prctl(PR_SET_DUMPABLE, 0)
# from one thread (an agent guarding its keys from its own user's other
# processes) closes every thread's /proc files to them. Red team 38: procfs
# looked at the named thread's own flag only, and a thread that had not made
# the call (here: T1 makes it, T2 is named) gave the process's fds
# (task/T2/fd/N reopened: the key file read), maps and environ to a process
# of the same ids, and a process T2 forked (a copy of that memory; Linux's
# dup_mm copies the flag) was dumpable. One user, also rootless.
guest_tmp /tmp/agentkey
out=$(moat run --user "$(id -u):$(id -g)" -- "$PY" -W ignore -c '
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/tmp/agentkey", os.O_RDWR | os.O_CREAT, 0o600); os.write(fd, b"agent-key")
rd, wr = os.pipe()
pid = os.fork()
if pid == 0:
    ids = []
    made = threading.Event()
    def t2():
        ids.append(threading.get_native_id()); made.wait()
        h = os.fork()
        if h == 0: time.sleep(30); os._exit(0)
        ids.append(h); time.sleep(30)
    def t1():
        libc.prctl(4, 0, 0, 0, 0); made.set(); time.sleep(30)
    threading.Thread(target=t2, daemon=True).start()
    while len(ids) < 1: time.sleep(0.01)
    threading.Thread(target=t1, daemon=True).start()
    while len(ids) < 2: time.sleep(0.01)
    os.write(wr, b"%d %d" % (ids[0], ids[1])); time.sleep(30); os._exit(0)
os.close(wr)
t2, helper = map(int, os.read(rd, 64).split())
r = []
for p in ("/proc/%d/fd/%d" % (pid, fd), "/proc/%d/task/%d/fd/%d" % (pid, t2, fd), "/proc/%d/fd/%d" % (t2, fd),
          "/proc/%d/task/%d/maps" % (pid, t2), "/proc/%d/task/%d/environ" % (pid, t2), "/proc/%d/maps" % helper):
    try: r.append("read:" + open(p, "rb").read(9).decode(errors="replace"))
    except OSError as e: r.append(e.strerror)
os.kill(helper, 9); os.kill(pid, 9); os.waitpid(pid, 0)
print(",".join(r))' </dev/null 2>&1)
d="Permission denied"
if [ $ROOT = 1 ]; then
	expect_eq nondumpable_process_every_thread_closed "$out" "$d,$d,$d,$d,$d,$d"
else
	SANITY=1 expect_eq nondumpable_process_every_thread_closed "$out" "$d,$d,$d,$d,$d,$d"
fi
# ... and a change of one thread's ids makes the whole process non-dumpable:
# a root process's leader drops to 1000 alone (raw setresuid) and says
# PR_SET_DUMPABLE 1, then a thread still root changes its fsuid: Linux's
# mm is not dumpable again, so uid 1000 reads none of it (red team 38: the
# leader's own flag was 0 and its maps were read).
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
rd, wr = os.pipe()
pid = os.fork()
if pid == 0:
    go = threading.Event(); done = threading.Event()
    def t():
        go.wait(); libc.syscall(122, 1000); done.set(); time.sleep(30)
    threading.Thread(target=t, daemon=True).start()
    libc.syscall(119, 1000, 1000, 1000); libc.syscall(117, 1000, 1000, 1000)
    libc.prctl(4, 1, 0, 0, 0)
    go.set(); done.wait()
    os.write(wr, b"x"); time.sleep(30); os._exit(0)
os.close(wr); os.read(rd, 1)
cpid = os.fork()
if cpid == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    try: open("/proc/%d/maps" % pid).read(1); print("maps:read", flush=True)
    except OSError as e: print("maps:" + e.strerror, flush=True)
    os._exit(0)
os.waitpid(cpid, 0); os.kill(pid, 9); os.waitpid(pid, 0)' </dev/null 2>&1)
SANITY=1 expect_eq thread_id_change_makes_process_nondumpable "$out" "maps:Permission denied"

# /proc/<pid>/cmdline is anyone's to read (Linux checks nothing): the kernel
# shows the argv area it recorded at its exec of the loader, and a script's
# argv is rebuilt by the loader (interpreter, script, args) over it. With an
# argv[0] longer than what replaces it that area held the loader's own
# strings and vectors: AT_RANDOM's 16 bytes (the stack canary's seed), the
# auxv's and argv's addresses (red team 38: a uid-1000 reader got them from
# root's script process). Now the new argv starts where the old one did and
# the rest is zeros: only the script's argv shows.
guest_tmp /tmp/cmdl_script
out=$(moat run --user 0:0 -- "$PY" -c '
import os, time
open("/tmp/cmdl_script", "w").write("#!/bin/sh\nread x\n"); os.chmod("/tmp/cmdl_script", 0o755)
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.dup2(r, 0); os.execv("/tmp/cmdl_script", ["A" * 300, "arg1"])
time.sleep(0.5)
c = os.fork()
if c == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    d = open("/proc/%d/cmdline" % pid, "rb").read()
    print(" ".join(repr(a)[1:] for a in d.rstrip(b"\0").split(b"\0")), flush=True)
    os._exit(0)
os.waitpid(c, 0); os.write(w, b"\n"); os.waitpid(pid, 0)' </dev/null 2>&1)
SANITY=1 expect_eq script_cmdline_shows_only_argv "$out" "'/bin/sh' '/tmp/cmdl_script' 'arg1'"

# The same, when the target execs that program between the ptrace check and
# the access (vmexec): the check binds to the image it saw (Linux's
# mm_access takes the mm once), so a copy the exec overtook must not reach
# the new one. MOAT_TEST_PTRACE_CHECK_DELAY holds the sentry 1 s between its
# check and its copy while the child execs root's 0711 copy of the probe
# (50 ms after the call began: the exec has time on a loaded machine),
# whose image holds a secret at a fixed address. Before, the one-identity
# sandbox ran the checked call natively (CONTINUE) and the mixed one copied
# by pid: both read SECRET-OF-THE-EXEC-ONLY-IMAGE. Now the check and each
# chunk are made in the target's exec guard and a moved exec count is EPERM.
if [ -n "$SYSCALL_BIN" ] && [ -x "$SYSCALL_BIN/probe_vmexec" ]; then
	guest_tmp /tmp/vmexec
	for m in one mixed; do
		out=$(MOAT_TEST_PTRACE_CHECK_DELAY=1000 moat run --user 0:0 --bind "$SYSCALL_BIN:/t:ro" -- /t/probe_vmexec vm $m </dev/null 2>&1)
		expect_eq vm_copy_not_past_exec_$m "$out" "Operation not permitted Operation not permitted"
	done
	# /proc/<pid>/maps opened while the check's delay lets the child exec
	# the copy: the open binds to the image checked (maps of the new one
	# name its /vmexec-secret memfd: SECRET with the check and the open
	# outside one exec guard). /proc/<pid>/io opened before the exec and
	# read after: the kernel checks it at each read as the sentry's uid,
	# which passed (SECRET: the new image's wchar); now a copy made at the
	# open (Linux: EACCES at that read).
	# (an empty read is what Linux gives here, the old image gone by the
	# read, and what the self-check's fake gets: the case must not take
	# it. A sanitized moat on one loaded CPU gave it once in a CI-like run,
	# 0 of 3 again: one more try then, which the fake fails too)
	for _ in 1 2; do
		out=$(MOAT_TEST_PTRACE_CHECK_DELAY=1000 moat run --user 0:0 --bind "$SYSCALL_BIN:/t:ro" -- /t/probe_vmexec procrace maps </dev/null 2>&1)
		[ "$out" = empty ] || break
	done
	expect_eq proc_maps_open_not_past_exec "$out" "old-image"
	out=$(moat run --user 0:0 --bind "$SYSCALL_BIN:/t:ro" -- /t/probe_vmexec proc io </dev/null 2>&1)
	expect_eq proc_io_read_not_past_exec "$out" "old-image"
	# get_robust_list of a child that execs the copy after the check: the
	# new image's head (an address of it) came back natively (SECRET with
	# the old CONTINUE); now the sentry's call, in the exec guard
	out=$(MOAT_TEST_PTRACE_CHECK_DELAY=1000 moat run --user 0:0 --bind "$SYSCALL_BIN:/t:ro" -- /t/probe_vmexec robust </dev/null 2>&1)
	expect_eq robust_list_not_past_exec "$out" "Operation not permitted"
	# kcmp(KCMP_FILE) of an fd only the new image has (0: SECRET, EBADF
	# before the exec): natively after the check it compared the new
	# image's files; now the sentry's call, in the exec guards
	out=$(MOAT_TEST_PTRACE_CHECK_DELAY=1000 moat run --user 0:0 --bind "$SYSCALL_BIN:/t:ro" -- /t/probe_vmexec kcmp </dev/null 2>&1)
	expect_eq kcmp_not_past_exec "$out" "Operation not permitted"
	# pidfd_getfd of that fd: the check and the fetch in one exec guard
	# (the delay sits inside it: the exec waits, the fd is not there yet;
	# SECRET, the new image's fd, with the guard ended after the check)
	out=$(MOAT_TEST_PTRACE_CHECK_DELAY=1000 moat run --user 0:0 --bind "$SYSCALL_BIN:/t:ro" -- /t/probe_vmexec getfd </dev/null 2>&1)
	# (sanity: natively the kernel's own check and fetch are one step)
	SANITY=1 expect_eq pidfd_getfd_not_past_exec "$out" "old-image"
else
	skip vm_copy_not_past_exec "no \$SYSCALL_BIN/probe_vmexec"
fi

# Linux's dumpable flag (red-team round 8): a root process that opened a
# root-only file and then dropped to uid 1000 is not dumpable, nor is one
# that said PR_SET_DUMPABLE 0; another uid-1000 process takes neither's fds
# (pidfd_getfd) nor reads their memory (process_vm_readv) or their /proc
# environ. moat's ids are
# virtual, the host's flag never changed: the sentry took the fd.
guest_tmp /tmp/sec
out=$(moat run --user 0:0 -- "$PY" -c '
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
def getfd(pid, fd):
    pfd = os.pidfd_open(pid)
    r = libc.syscall(438, pfd, fd, 0)
    e = ctypes.get_errno(); os.close(pfd)
    return os.read(r, 20).decode().strip() if r >= 0 else os.strerror(e)
def vmread(pid):
    buf = ctypes.create_string_buffer(8)
    class iov(ctypes.Structure): _fields_ = [("b", ctypes.c_void_p), ("n", ctypes.c_size_t)]
    l = iov(ctypes.addressof(buf), 8); r = iov(ctypes.addressof(buf), 8)
    L = ctypes.c_long
    n = libc.syscall(L(310), L(pid), ctypes.byref(l), L(1), ctypes.byref(r), L(1), L(0))
    return "read" if n >= 0 or ctypes.get_errno() == 14 else os.strerror(ctypes.get_errno())
a = os.fork()
if a == 0:
    open("/tmp/sec", "w").write("SECRET\n"); os.chmod("/tmp/sec", 0o600)
    os.dup2(os.open("/tmp/sec", os.O_RDONLY), 50)
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    time.sleep(60); os._exit(0)
b = os.fork()
if b == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    libc.prctl(4, 1, 0, 0, 0); os.dup2(0, 51); libc.prctl(4, 0, 0, 0, 0)
    time.sleep(60); os._exit(0)
time.sleep(0.5)
me = os.fork()
if me == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    def environ(pid):
        try: return "read" if open("/proc/%d/environ" % pid, "rb").read() is not None else ""
        except OSError as e: return os.strerror(e.errno)
    print(getfd(a, 50), getfd(b, 51), vmread(a), vmread(b), libc.prctl(3, 0, 0, 0, 0), environ(a), environ(b), flush=True)
    os._exit(0)
os.waitpid(me, 0)
os.kill(a, 9); os.kill(b, 9)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_take_nondumpable_fd "$out" "Operation not permitted Operation not permitted Operation not permitted Operation not permitted 0 Permission denied Permission denied"

# Red team 13: a root process made a memfd (mode 0777) and a directory fd,
# then dropped to uid 1000 (non-dumpable): another uid-1000 process read the
# memfd through /proc/<pid>/fd/N, listed the fd directory and read the links
# (the fd directory was owned by the dropped euid, and following fd/N checked
# the object's mode only). Linux: the directory is root's (task_dump_owner)
# and following, reading a link or fdinfo is a ptrace read check. The
# process itself still lists and reopens its own fds.
out=$(moat run --user 0:0 -- "$PY" -c '
import os, time
r, w = os.pipe()
a = os.fork()
if a == 0:
    fd = os.memfd_create("rootsecret"); os.write(fd, b"ROOTSECRET")
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    own = len(os.listdir("/proc/self/fd")) > 3 and os.readlink("/proc/self/fd/%d" % fd).startswith("/memfd:")
    os.write(w, b"%d %d" % (fd, own)); time.sleep(30); os._exit(0)
fd, own = map(int, os.read(r, 32).split())
b = os.fork()
if b == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    res = []
    for f in (lambda: open("/proc/%d/fd/%d" % (a, fd), "rb").read(), lambda: os.listdir("/proc/%d/fd" % a),
              lambda: os.readlink("/proc/%d/fd/%d" % (a, fd)), lambda: open("/proc/%d/fdinfo/%d" % (a, fd)).read()):
        try: res.append(repr(f())[:20])
        except OSError as e: res.append(e.strerror)
    print(own, " ".join(res), flush=True); os._exit(0)
os.waitpid(b, 0); os.kill(a, 9); os.waitpid(a, 0)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_reopen_nondumpable_fd "$out" "1 Permission denied Permission denied Permission denied Permission denied"

# Red team 13: an O_PATH open of a directory its opener may read is a real
# read-only directory fd (ADDFD takes no O_PATH file); root opened its 0700
# directory so, dropped to uid 1000, and listed it through the fd (Linux:
# getdents on an O_PATH fd is EBADF). The fd is marked and never listed.
guest_tmp /tmp/priv
out=$(moat run --user 0:0 -- "$PY" -c '
import os
os.mkdir("/tmp/priv", 0o700); open("/tmp/priv/secretname", "w").close()
fd = os.open("/tmp/priv", os.O_PATH)
if os.fork() == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    try: print(os.listdir(fd), flush=True)
    except OSError as e: print(e.strerror, flush=True)
    os._exit(0)
os.wait()
try: print(os.listdir(fd), flush=True)
except OSError as e: print(e.strerror, flush=True)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_list_opath_dir "$(echo $out)" "Bad file descriptor Bad file descriptor"

# Red team 13: linkat(fd, "", AT_EMPTY_PATH) of an O_TMPFILE file skipped
# protected_hardlinks: a process that dropped root named root's 0600
# anonymous file it had inherited (Linux: ENOENT without
# CAP_DAC_READ_SEARCH; through /proc/self/fd, EPERM). Its own still links.
guest_tmp /tmp/named /tmp/named2 /tmp/mine
out=$(moat run --user 0:0 -- "$PY" -c '
import os, ctypes
libc = ctypes.CDLL(None, use_errno=True)
t = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600); os.write(t, b"root")
if os.fork() == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    r = libc.linkat(t, b"", -100, b"/tmp/named", 0x1000)
    r2 = libc.linkat(-100, b"/proc/self/fd/%d" % t, -100, b"/tmp/named2", 0x400)
    own = os.open("/tmp", os.O_TMPFILE | os.O_RDWR, 0o600)
    r3 = libc.linkat(own, b"", -100, b"/tmp/mine", 0x1000)
    print("linked" if r == 0 else "refused", "linked" if r2 == 0 else "refused", "linked" if r3 == 0 else "refused", flush=True)
    os._exit(0)
os.wait()' </dev/null 2>&1)
# (rootless, a process that dropped root owns no file it makes — they show
# the caller's ids, root inside — so its own 0600 one is refused too)
want="refused refused linked"; [ "$(id -u)" = 0 ] || want="refused refused refused"
SANITY=1 expect_eq dropped_cannot_name_root_tmpfile "$(echo $out)" "$want"

# A process that dropped root cannot make root's process the owner of a
# file's SIGIO (F_SETOWN, FIOSETOWN) with F_SETSIG SIGKILL and kill it
# (red-team 9: every guest task is one host uid, so the kernel's sigio_perm
# let it; Linux drops the signal, moat refuses the owner with EPERM).
out=$(moat run --user 0:0 -- "$PY" -c '
import fcntl, os, socket, struct, time
root = os.getpid()
for how in ("fsetown", "fiosetown"):
    c = os.fork()
    if c == 0:
        os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
        if how == "fsetown":
            r, w = os.pipe()
            try: fcntl.fcntl(r, fcntl.F_SETOWN, root)
            except OSError: pass
        else:
            a, b = socket.socketpair(); r, w = a.fileno(), b.fileno()
            try: fcntl.ioctl(r, 0x8901, struct.pack("i", root))
            except OSError: pass
        fcntl.fcntl(r, 10, 9)  # F_SETSIG SIGKILL
        fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
        os.write(w, b"x"); os._exit(0)
    os.waitpid(c, 0); time.sleep(0.2)
    print(how, "alive", flush=True)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_sigio_root "$(echo $out)" "fsetown alive fiosetown alive"

# A process that dropped root cannot join root's SO_REUSEPORT group (TCP
# listener, UDP socket) and take part of its connections: Linux compares the
# sockets' owners (EADDRINUSE); every guest task is one host uid, so the
# sentry keeps the owners (sentry/netreuse.c; red-team 9 F4: a dropped
# process got 6-12 of root's 20 connections).
out=$(moat run --user 0:0 -- "$PY" -c '
import errno, os, socket
def mk(t, port):
    s = socket.socket(socket.AF_INET, t)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("127.0.0.1", port))
    if t == socket.SOCK_STREAM: s.listen(16)
    return s
rs = mk(socket.SOCK_STREAM, 0); port = rs.getsockname()[1]
try: ru = mk(socket.SOCK_DGRAM, port)
except OSError: ru = mk(socket.SOCK_DGRAM, 0)
r, w = os.pipe(); go_r, go_w = os.pipe()
c = os.fork()
if c == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    res = []; held = []
    for t, p in ((socket.SOCK_STREAM, port), (socket.SOCK_DGRAM, ru.getsockname()[1])):
        try: held.append(mk(t, p)); res.append("joined")
        except OSError as e: res.append(errno.errorcode[e.errno])
    os.write(w, " ".join(res).encode()); os.read(go_r, 1); os._exit(0)
print(os.read(r, 100).decode(), end=" ")
rs.setblocking(False); lost = 0
for i in range(20):
    k = socket.create_connection(("127.0.0.1", port))
    try:
        import time; time.sleep(0.002); rs.accept()[0].close()
    except BlockingIOError: lost += 1
    k.close()
print("lost", lost, flush=True)
os.write(go_w, b"x"); os.waitpid(c, 0)' </dev/null 2>&1)
SANITY=1 expect_eq dropped_cannot_join_root_reuseport "$out" "EADDRINUSE EADDRINUSE lost 0"


# SO_PASSCRED: credentials a guest receives never carry native ids. moat
# accepts the option and delivers none; were it passed through, SCM_CREDENTIALS
# would name the sender's host pid and the sandbox's one host uid instead of
# what getpid()/getuid() say inside (a sanity case: natively they agree).
out=$(moat run -- /usr/bin/python3 -c '
import os, socket, struct, errno
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    b.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
except OSError as e:
    print("refused", errno.errorcode[e.errno]); raise SystemExit
a.send(b"x")
m, anc, fl, ad = b.recvmsg(1, socket.CMSG_SPACE(12))
for lvl, typ, data in anc:
    if lvl == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS:
        pid, uid, gid = struct.unpack("iII", data[:12])
        print("same" if (pid, uid, gid) == (os.getpid(), os.getuid(), os.getgid()) else "native %d %d %d vs %d %d %d" % (pid, uid, gid, os.getpid(), os.getuid(), os.getgid()))
        break
else:
    print("none")' </dev/null 2>&1)
case $out in none | same) ok_sanity passcred_no_native_ids ;; *) fail passcred_no_native_ids "$out" ;; esac


# ... and after a process drops root, credentials never name it root: root's
# socket had SO_PASSCRED on before the drop (natively moat shows uid 0 for
# every guest task, so the kernel's credentials would say root; moat clears
# the flag on every guest socket at the first change of ids)
out=$(moat run -- /usr/bin/python3 -c '
import os, socket, struct
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
b.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
c = os.fork()
if c == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    a.send(b"x"); os._exit(0)
os.waitpid(c, 0)
m, anc, fl, ad = b.recvmsg(1, socket.CMSG_SPACE(12))
got = "none"
for lvl, typ, data in anc:
    if lvl == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS:
        pid, uid, gid = struct.unpack("iII", data[:12])
        got = "uid %d gid %d" % (uid, gid)
print(got)
b.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
a.send(b"y")
m, anc, fl, ad = b.recvmsg(1, socket.CMSG_SPACE(12))
print("after", "creds" if anc else "none")' </dev/null 2>&1)
case $out in "none"*"after none" | "uid 1000 gid 1000"*) ok_sanity passcred_dropped_not_root ;; *) fail passcred_dropped_not_root "$(echo $out)" ;; esac

# ---- gaps31: a call checked by pid, then run natively (CONTINUE), names
#      its target again when the caller's thread gets round to it, which the
#      guest can put off (a SCHED_IDLE thread on a busy CPU held a checked
#      kill for up to 1.7 s here): a target reaped meanwhile leaves its
#      number to whichever guest process the pid space gives it to next,
#      root's included. In a sandbox of more than one identity the sentry
#      now acts at the check, through its pidfd of the task it checked: the
#      signal arrives at once, from the sentry (si_pid 0, as its group kills
#      to a subset do), and process_vm_* copy through the sentry; a number
#      no task holds is ESRCH there (a process forked onto it later is not
#      checked). In a one-identity sandbox nothing can take the number but a
#      process the same check passes: native, unchanged (si_pid the sender).
PIN_PY='
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
class iov(ctypes.Structure): _fields_ = [("b", ctypes.c_void_p), ("n", ctypes.c_size_t)]
d = os.fork()
if d == 0:
    if sys.argv[1] == "drop":
        os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    r, w = os.pipe(); r2, w2 = os.pipe()
    c = os.fork()
    if c == 0:
        libc.prctl(4, 1, 0, 0, 0)   # dumpable again (the id change cleared it)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGUSR2})
        buf = ctypes.create_string_buffer(b"........", 8)
        import threading
        got = {}
        def waiter():   # a thread of its own: tgkill aims at it
            got["b"] = signal.sigwaitinfo({signal.SIGUSR2})
        th = threading.Thread(target=waiter); th.start()
        os.write(w, b"%d %d\n" % (ctypes.addressof(buf), th.native_id))
        a = signal.sigwaitinfo({signal.SIGUSR1}); th.join(); b = got["b"]
        who = lambda i: "sender" if i.si_pid == os.getppid() else "pid%d" % i.si_pid
        os.write(w2, ("%s %s %s" % (who(a), who(b), buf.raw.decode())).encode())
        os._exit(0)
    addr, tid = map(int, os.read(r, 64).split())
    src = ctypes.create_string_buffer(b"written!", 8); back = ctypes.create_string_buffer(8)
    n1 = libc.process_vm_writev(c, ctypes.byref(iov(ctypes.addressof(src), 8)), 1, ctypes.byref(iov(addr, 8)), 1, 0)
    n2 = libc.process_vm_readv(c, ctypes.byref(iov(ctypes.addressof(back), 8)), 1, ctypes.byref(iov(addr, 8)), 1, 0)
    os.kill(c, signal.SIGUSR1)
    libc.syscall(234, c, tid, signal.SIGUSR2)   # tgkill: one thread, not the leader
    out = os.read(r2, 64).decode()
    os.waitpid(c, 0)
    gone = libc.syscall(62, c, 0); e = ctypes.get_errno()
    print(n1, n2, back.raw.decode(), out, "kill-reaped:" + (os.strerror(e) if gone else "ok"), flush=True)
    os._exit(0)
os.waitpid(d, 0)'
out=$(moat run --user 0:0 -- "$PY" -c "$PIN_PY" drop </dev/null 2>&1)
expect_eq dropped_pid_calls_act_at_check "$out" "8 8 written! pid0 pid0 written! kill-reaped:No such process"
out=$(moat run -- "$PY" -c "$PIN_PY" same </dev/null 2>&1)
SANITY=1 expect_eq one_identity_pid_calls_native "$out" "8 8 written! sender sender written! kill-reaped:No such process"

# ---- pidcalls: the owner rows (prlimit64, setpriority/ioprio_set of one
#      task, sched_setaffinity, sched_setscheduler/setparam/setattr,
#      get_robust_list, kcmp) had the same window as kill: checked on the
#      virtual ids, then CONTINUE'd, the kernel looking the number up again
#      when the caller's thread ran the call. MOAT_TEST_PIDCALL_DELAY_MS
#      holds the answer after the check (the window a guest thread holds
#      natively); the target is killed and reaped meanwhile. Mixed sandbox:
#      the sentry made the call at the check on the task it checked, so it
#      took effect (ok); before, the late lookup found nothing (ESRCH) — and
#      a number reused meanwhile would have named another user's task.
#      One identity: native, unchanged (ESRCH after the delay) — but
#      get_robust_list and kcmp, ptrace checks an exec can outdate in any
#      sandbox, are made by the sentry at the check there too (vmexec: ok).
OWNER_PY='
import ctypes, os, signal, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
if sys.argv[1] == "drop":   # root stays (this parent): a sandbox of two identities
    d = os.fork()
    if d:
        os.waitpid(d, 0); sys.exit(0)
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    libc.prctl(4, 1, 0, 0, 0)   # dumpable again (the id change cleared it)
L = ctypes.c_long
def ops(c):
    old = (ctypes.c_uint64 * 2)(); new = (ctypes.c_uint64 * 2)(64, 64)
    mask = ctypes.c_ulong(1); prm = ctypes.c_int(0)
    attr = (ctypes.c_uint32 * 12)(48, 0, 0, 0, 1)   # size 48, SCHED_OTHER, nice 1
    head = ctypes.c_void_p(); ln = ctypes.c_size_t()
    return [("setpriority", lambda: libc.syscall(L(141), L(0), L(c), L(5))),
            ("ioprio_set", lambda: libc.syscall(L(251), L(1), L(c), L((2 << 13) | 4))),
            ("prlimit64", lambda: libc.syscall(L(302), L(c), L(7), new, old)),
            ("prlimit64_cpu", lambda: libc.syscall(L(302), L(c), L(0), new, old)),
            ("sched_setaffinity", lambda: libc.syscall(L(203), L(c), L(8), ctypes.byref(mask))),
            ("sched_setscheduler", lambda: libc.syscall(L(144), L(c), L(3), ctypes.byref(prm))),
            ("sched_setparam", lambda: libc.syscall(L(142), L(c), ctypes.byref(prm))),
            ("sched_setattr", lambda: libc.syscall(L(314), L(c), attr, L(0))),
            ("get_robust_list", lambda: libc.syscall(L(274), L(c), ctypes.byref(head), ctypes.byref(ln))),
            ("kcmp", lambda: libc.syscall(L(312), L(os.getpid()), L(c), L(1), L(0), L(0)))]
res = []
for i in range(10):
    for attempt in range(3):   # again when the reaper thread was slower than the held answer
        c = os.fork()
        if c == 0:
            while True: signal.pause()
        name, op = ops(c)[i]
        done = []
        def reap():
            time.sleep(0.1); os.kill(c, signal.SIGKILL); os.waitpid(c, 0); done.append(1)
        th = threading.Thread(target=reap); th.start()
        r = op(); e = ctypes.get_errno(); in_time = bool(done)
        th.join()
        if in_time:
            break
    res.append("%s:%s" % (name, ("ok" if r >= 0 else os.strerror(e)) if in_time else "reaper-late"))
print(" ".join(res))'
OWNER_OK="setpriority:ok ioprio_set:ok prlimit64:ok prlimit64_cpu:ok sched_setaffinity:ok sched_setscheduler:ok sched_setparam:ok sched_setattr:ok get_robust_list:ok kcmp:ok"
OWNER_LATE="setpriority:No such process ioprio_set:No such process prlimit64:No such process prlimit64_cpu:No such process sched_setaffinity:No such process sched_setscheduler:No such process sched_setparam:No such process sched_setattr:No such process get_robust_list:No such process kcmp:No such process"
out=$(MOAT_TEST_PIDCALL_DELAY_MS=500 moat run --user 0:0 -- "$PY" -c "$OWNER_PY" drop </dev/null 2>&1)
if why=$(sched_normal); then expect_eq dropped_owner_calls_act_at_check "$out" "$OWNER_OK"
else skip dropped_owner_calls_act_at_check "$why"; fi
out=$(MOAT_TEST_PIDCALL_DELAY_MS=500 moat run --user 1000:1000 -- "$PY" -c "$OWNER_PY" same </dev/null 2>&1)
expect_eq one_identity_owner_calls_native "$out" "${OWNER_LATE% get_robust_list:*} get_robust_list:ok kcmp:ok"

# ... and a number no guest task holds was left to the kernel too: the
# caller names the next number the pid space gives (the guest can tell it),
# its call is held, and root forks meanwhile: the kernel's late lookup found
# root's new process and set its nice and limits unchecked (no reuse, no
# wrap needed). Mixed sandbox: ESRCH at the check (made on no task); root's
# child keeps nice 0 and its NOFILE limit. One identity: native, the new
# child (the caller's own user's) is set.
NEXT_PY='
import ctypes, os, resource, sys, time
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
r1, w1 = os.pipe(); r2, w2 = os.pipe()
R = os.fork()   # root (in "drop"): forks a process on demand, which reports
if R == 0:
    os.close(w1)
    while os.read(r1, 1):
        time.sleep(0.15)
        y = os.fork()
        if y == 0:
            time.sleep(0.9)   # past the held answer
            n = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            cpu = resource.getrlimit(resource.RLIMIT_CPU)[0]
            os.write(w2, b"%d %d %s\n" % (os.getpid(), os.getpriority(os.PRIO_PROCESS, 0), b"nofile-set" if n == 16 else b"cpu-set" if cpu == 16 else b"nofile-kept"))
            os._exit(0)
        os.waitpid(y, 0)
    os._exit(0)
d = os.fork()
if d == 0:
    if sys.argv[1] == "drop":
        os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    out = []
    for name in ("setpriority", "prlimit64", "prlimit64_cpu"):
        x = os.fork()
        if x == 0:
            os._exit(0)
        os.waitpid(x, 0)
        nxt = x + 1
        os.write(w1, b"x")
        t0 = time.monotonic()
        if name == "setpriority":
            r = libc.syscall(L(141), L(0), L(nxt), L(19))
        else:
            r = libc.syscall(L(302), L(nxt), L(7 if name == "prlimit64" else 0), (ctypes.c_uint64 * 2)(16, 16), None)
        e = ctypes.get_errno()
        held = "held" if time.monotonic() - t0 > 0.4 else "not-held"   # (the window: no hook, no test)
        pid, nice, nof = os.read(r2, 64).split()
        out.append("%s:%s %s %s nice:%s %s" % (name, "ok" if r >= 0 else os.strerror(e), held,
                   "next" if int(pid) == nxt else "other", nice.decode(), nof.decode()))
    print(" ".join(out), flush=True)
    os._exit(0)
os.waitpid(d, 0); os.close(w1); os.waitpid(R, 0)'
out=$(MOAT_TEST_PIDCALL_DELAY_MS=500 moat run --user 0:0 -- "$PY" -c "$NEXT_PY" drop </dev/null 2>&1)
if why=$(sched_normal); then expect_eq dropped_owner_calls_next_pid_esrch "$out" "setpriority:No such process held next nice:0 nofile-kept prlimit64:No such process held next nice:0 nofile-kept prlimit64_cpu:No such process held next nice:0 nofile-kept"
else skip dropped_owner_calls_next_pid_esrch "$why"; fi
out=$(MOAT_TEST_PIDCALL_DELAY_MS=500 moat run --user 1000:1000 -- "$PY" -c "$NEXT_PY" same </dev/null 2>&1)
if why=$(sched_normal); then SANITY=1 expect_eq one_identity_owner_calls_next_pid_native "$out" "setpriority:ok held next nice:19 nofile-kept prlimit64:ok held next nice:0 nofile-set prlimit64_cpu:ok held next nice:0 cpu-set"
else skip one_identity_owner_calls_next_pid_native "$why"; fi

# red team 72: the sentry's filter no longer lets it set the limits the
# kernel enforces with a signal (RLIMIT_CPU, FSIZE, STACK, RTTIME) on
# another process (a compromised sentry's SIGKILL of the caller's processes
# rootless); a guest's prlimit64 of those on another process was then EPERM
# in any sandbox of more than one identity (every root-run one whose guest
# is root: realprogs35, `prlimit --pid`). Since initrows the guest's init
# makes them (sentry/spawn.c init_act), by the number in the guest's pid
# namespace, held after the same check. Mixed sandbox: root sets them on its
# child, a dropped user on its own child, and a dropped user on root's
# process is still EPERM (the check: its RLIMIT_CPU 0, a SIGKILL), the limit
# kept (natively the same: the kernel's uid check).
RLSIG_PY='
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
def try_set(x, res):
    old = (ctypes.c_uint64 * 2)()
    libc.syscall(L(302), L(x), L(res), None, old)
    nw = (ctypes.c_uint64 * 2)(min(old[0], 100 + res), old[1])
    r = libc.syscall(L(302), L(x), L(res), nw, None)
    e = ctypes.get_errno()
    now = (ctypes.c_uint64 * 2)()
    libc.syscall(L(302), L(x), L(res), None, now)
    return ("ok" if r == 0 else os.strerror(e)) + ("" if now[0] == nw[0] else "(kept)")
def pause_child():
    x = os.fork()
    if x == 0:
        while True: signal.pause()
    return x
out = []
names = (("cpu", 0), ("fsize", 1), ("stack", 3), ("rttime", 15), ("nofile", 7))
rx = pause_child()
out.append("root-child " + " ".join("%s:%s" % (n, try_set(rx, r)) for n, r in names))
d = os.fork()
if d == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    x = pause_child()
    o = ["own-child " + " ".join("%s:%s" % (n, try_set(x, r)) for n, r in names)]
    o.append("roots " + " ".join("%s:%s" % (n, try_set(rx, r)) for n, r in names[:2]))
    os.kill(x, signal.SIGKILL); os.waitpid(x, 0)
    print("\n".join(o), flush=True)
    os._exit(0)
os.waitpid(d, 0)
print(out[0], flush=True)
now = [(ctypes.c_uint64 * 2)() for _ in range(2)]
for i in range(2):
    libc.syscall(L(302), L(rx), L(i), None, now[i])
print("roots-after cpu:%d fsize:%d alive:%s" % (now[0][0], now[1][0], os.waitpid(rx, os.WNOHANG) == (0, 0)), flush=True)
os.kill(rx, signal.SIGKILL); os.waitpid(rx, 0)'
out=$(moat run --user 0:0 -- "$PY" -c "$RLSIG_PY" </dev/null 2>&1)
# (SANITY: Linux gives the same answers; the isolation half, a dropped user
# refused on root's process, holds natively too — the refusals that need
# moat are dropped_owner_calls_act_at_check and the next-pid cases)
SANITY=1 expect_eq prlimit_signalling_other_made_by_init "$out" "$(printf '%s\n%s\n%s\n%s' \
  "own-child cpu:ok fsize:ok stack:ok rttime:ok nofile:ok" \
  "roots cpu:Operation not permitted fsize:Operation not permitted" \
  "root-child cpu:ok fsize:ok stack:ok rttime:ok nofile:ok" \
  "roots-after cpu:100 fsize:101 alive:True")"

# ---- pidgroups: the group rows (kill(-pgrp), kill(0), setpriority
#      PRIO_PGRP/PRIO_USER, ioprio_set IOPRIO_WHO_PGRP) were checked on the
#      members the group had, then CONTINUE'd: the kernel found the members
#      again when the caller's thread ran the call. A root process (in
#      "drop") joins the caller's group (setpgid, same session) while the
#      answer is held (MOAT_TEST_PIDCALL_DELAY_MS): on main it was signalled,
#      reniced, its I/O priority set (root-hit). Mixed sandbox now: the
#      sentry acts at the check on the members it checked (the caller's own
#      process is, self), root's joiner is not (root-kept); PRIO_USER of the
#      caller's uid sets its own tasks (on main EPERM: the sandbox has other
#      users). F_SETOWN of a process group: the kernel signals whoever is a
#      member when the I/O comes (root joined before the write: root-hit on
#      main, with the setter's authority, one host uid): refused (EPERM) in a
#      sandbox of other ids unless the setter is root. One identity: native
#      (the joiner is the caller's own user's: hit, as on Linux).
GROUP_PY='
import ctypes, fcntl, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
L = ctypes.c_long
drop = sys.argv[1] == "drop"
def ioprio():
    return libc.syscall(L(252), L(1), L(0))
def op_kill_pgrp(G, pr, pw): return libc.kill(-G, signal.SIGUSR1)
def op_kill_0(G, pr, pw): return libc.kill(0, signal.SIGUSR1)
def op_prio_pgrp(G, pr, pw): return libc.syscall(L(141), L(1), L(G), L(7))
def op_ioprio_pgrp(G, pr, pw): return libc.syscall(L(251), L(2), L(G), L((2 << 13) | 6))
def op_prio_user(G, pr, pw):
    if "Seccomp:\t2" not in open("/proc/self/status").read():   # natively (the fake moat): every
                                 # process of the host with this uid
        ctypes.set_errno(1); return -1   # (not made: the case fails there)
    return libc.syscall(L(141), L(2), L(os.getuid()), L(7))
def op_setown_pgrp(G, pr, pw):
    r = libc.fcntl(pr, L(8), L(-G))   # F_SETOWN
    if r >= 0:
        fcntl.fcntl(pr, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
    return r
OPS = [("kill-pgrp", op_kill_pgrp), ("kill-0", op_kill_0), ("prio-pgrp", op_prio_pgrp),
       ("ioprio-pgrp", op_ioprio_pgrp), ("prio-user", op_prio_user), ("setown-pgrp", op_setown_pgrp)]
out = []
for name, op in OPS:
    rj, wj = os.pipe(); rr, wr = os.pipe(); rd, wd = os.pipe(); ry, wy = os.pipe()
    R = os.fork()     # root in "drop": joins the group while the call is held
    if R == 0:
        got = []
        signal.signal(signal.SIGUSR1, lambda *a: got.append("usr1"))
        signal.signal(signal.SIGIO, lambda *a: got.append("io"))
        n0, i0 = os.getpriority(os.PRIO_PROCESS, 0), ioprio()
        os.write(wy, b"r")
        G = int(os.read(rj, 32))
        time.sleep(0.15)
        os.setpgid(0, G)
        os.read(rd, 1)           # the caller is done (and has written, for SIGIO)
        time.sleep(0.2)
        hit = got or os.getpriority(os.PRIO_PROCESS, 0) != n0 or ioprio() != i0
        os.write(wr, b"root-hit" if hit else b"root-kept")
        os._exit(0)
    os.read(ry, 1)   # root has read its nice and I/O priority
    D = os.fork()
    if D == 0:
        if drop:
            os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
        os.setpgid(0, 0)
        G = os.getpid()
        got = []
        signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
        signal.signal(signal.SIGIO, signal.SIG_IGN)
        C = os.fork()
        if C == 0:
            while True: signal.pause()
        pr, pw = os.pipe()
        n0, i0 = os.getpriority(os.PRIO_PROCESS, 0), ioprio()
        os.write(wj, b"%d" % G)
        t0 = time.monotonic()
        try:
            r = op(G, pr, pw); e = ctypes.get_errno()
        except Exception as x:
            r, e = -1, 0   # (reported as "Success" with the failure)
        held = time.monotonic() - t0 > 0.4
        time.sleep(max(0.05, t0 + 0.6 - time.monotonic()))   # (root has joined by now)
        os.write(pw, b"x")      # SIGIO to the owner
        os.write(wd, b"x")
        res = "ok" if r >= 0 else os.strerror(e)
        self_ = "self" if got or os.getpriority(os.PRIO_PROCESS, 0) != n0 or ioprio() != i0 else "noself"
        v = os.read(rr, 32).decode()
        os.kill(C, signal.SIGKILL); os.waitpid(C, 0)
        print("%s:%s%s %s %s" % (name, res, "" if held or name == "setown-pgrp" else "(not-held)", self_, v), flush=True)
        os._exit(0)
    os.waitpid(D, 0); os.waitpid(R, 0)
    for f in (rj, wj, rr, wr, rd, wd, ry, wy): os.close(f)
'
out=$(MOAT_TEST_PIDCALL_DELAY_MS=500 moat run --user 0:0 -- "$PY" -c "$GROUP_PY" drop </dev/null 2>&1)
if why=$(sched_normal); then expect_eq dropped_group_calls_checked_members "$(echo $out)" "kill-pgrp:ok self root-kept kill-0:ok self root-kept prio-pgrp:ok self root-kept ioprio-pgrp:ok self root-kept prio-user:ok self root-kept setown-pgrp:Operation not permitted noself root-kept"
else skip dropped_group_calls_checked_members "$why"; fi
out=$(MOAT_TEST_PIDCALL_DELAY_MS=500 moat run --user 1000:1000 -- "$PY" -c "$GROUP_PY" same </dev/null 2>&1)
if why=$(sched_normal); then SANITY=1 expect_eq one_identity_group_calls_native "$(echo $out)" "kill-pgrp:ok self root-hit kill-0:ok self root-hit prio-pgrp:ok self root-hit ioprio-pgrp:ok self root-hit prio-user:ok self root-hit setown-pgrp:ok noself root-hit"
else skip one_identity_group_calls_native "$why"; fi

# kill(-1): a sender that passes for every process at the check (this
# parent: real uid 1000, saved uid 0) ran natively; the parent takes root
# back and forks a root process while the answer is held: on main the late
# kill(-1) signalled it (root-hit). Now the sentry signals the processes it
# checked (the parent, still 1000's then) and not root's new one.
KILLALL_PY='
import os, signal, sys, time
got = []
signal.signal(signal.SIGUSR1, lambda *a: got.append(1))
os.setresgid(1000, 1000, 0); os.setresuid(1000, 1000, 0)   # this parent: passes for 1000 now, root later
rr, wr = os.pipe()
d = os.fork()
if d == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    if "Seccomp:\t2" not in open("/proc/self/status").read():
        os._exit(2)   # natively (the fake moat): every process of the host with this uid
    t0 = time.monotonic()
    r = os.kill(-1, signal.SIGUSR1)
    held = time.monotonic() - t0 > 0.4
    os._exit(0 if held else 1)
time.sleep(0.15)
os.setresuid(0, 0, 0); os.setresgid(0, 0, 0)   # root again, while the kill is held
R = os.fork()
if R == 0:
    g = []
    signal.signal(signal.SIGUSR1, lambda *a: g.append(1))
    time.sleep(0.9)
    os.write(wr, b"root-hit" if g else b"root-kept")
    os._exit(0)
_, st = os.waitpid(d, 0)
v = os.read(rr, 16).decode()
os.waitpid(R, 0)
print("kill-all:%s %s %s" % ("held" if os.WEXITSTATUS(st) == 0 else "not-held", "parent-signalled" if got else "parent-not", v))
'
out=$(MOAT_TEST_PIDCALL_DELAY_MS=500 moat run --user 0:0 -- "$PY" -c "$KILLALL_PY" </dev/null 2>&1)
expect_eq dropped_kill_all_checked_members "$out" "kill-all:held parent-signalled root-kept"


# Red team 39: the sticky-directory protections (fs.protected_symlinks,
# protected_regular, protected_fifos; every major distribution sets them)
# are the kernel's checks on a walk and an open it never sees under moat: a
# process that dropped root planted /tmp/NAME (a symlink to root's file, a
# file or FIFO of its own) and root's write went through the link or into
# the planted file. Root's own link and the dropped process's own files
# still work. Natively it holds only where the host sets the sysctls.
# (Root-run only: see the skip below.)
guest_tmp /tmp/rt39target /tmp/rt39lnk /tmp/rt39pred /tmp/rt39fifo /tmp/rt39own /tmp/rt39rootlnk
out=$(moat run --user 0:0 -- "$PY" -c '
import os
def tryopen(p, fl):
    try:
        fd = os.open(p, fl, 0o644); os.write(fd, b"pwned\n"); os.close(fd); return "went"
    except OSError as e: return "refused" if e.errno == 13 else e.strerror
fd = os.open("/tmp/rt39target", os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600); os.write(fd, b"rootdata\n"); os.close(fd)
os.symlink("/tmp/rt39target", "/tmp/rt39rootlnk")
if os.fork() == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000); os.umask(0)
    os.symlink("/tmp/rt39target", "/tmp/rt39lnk")
    os.close(os.open("/tmp/rt39pred", os.O_CREAT | os.O_WRONLY, 0o666)); os.mkfifo("/tmp/rt39fifo", 0o666)
    print(tryopen("/tmp/rt39own", os.O_CREAT | os.O_WRONLY), flush=True)
    os._exit(0)
os.wait()
print(tryopen("/tmp/rt39lnk", os.O_CREAT | os.O_WRONLY | os.O_TRUNC), tryopen("/tmp/rt39pred", os.O_CREAT | os.O_WRONLY | os.O_TRUNC),
      tryopen("/tmp/rt39fifo", os.O_CREAT | os.O_RDWR | os.O_NONBLOCK), open("/tmp/rt39target").read().strip(),
      open("/tmp/rt39rootlnk").read().strip(), flush=True)' </dev/null 2>&1)
sane=""
[ "$(cat /proc/sys/fs/protected_symlinks /proc/sys/fs/protected_regular /proc/sys/fs/protected_fifos 2>/dev/null | tr -d '\n')" = 111 ] && sane=1
if [ "$ROOT" = 1 ]; then
	SANITY=$sane expect_eq dropped_cannot_plant_sticky_names "$(echo $out)" "went refused refused refused rootdata rootdata"
else
	# rootless, what a process that dropped root makes shows the caller's
	# ids, root inside: its link and files pass for root's (Known gaps)
	skip dropped_cannot_plant_sticky_names "rootless: a dropped process's files show root as owner"
fi

finish
