#!/bin/bash
# NEGATIVE tests, metadata of host files: the guest changes no mode bits,
# owners, times or xattrs of host objects the VFS cannot name (its stdout when
# moat's stdout is a host file); no set-id bit, device node or owner change
# reaches a host file in a rw bind (the guest sees what it set: virtual
# metadata); guest root has no DAC override on host files.
# Harmless natively: everything it touches lives in its own temp dir (and one
# /etc file it creates and removes as root).
. "$(dirname "$0")/lib.sh"

ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1
hstat() { stat -c '%a %u %g %Y' "$1"; }

# ---- 1. fd 1 is a host file: metadata calls on it are refused ----
LOG=$T_TMP/log
: >"$LOG"
chmod 0644 "$LOG"
[ $ROOT = 1 ] && chown 65534:65534 "$LOG"
touch -d @1000000 "$LOG"
before=$(hstat "$LOG")
moat run -- "$PY" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def sc(*a):
    r = libc.syscall(*[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return "ok" if r == 0 else os.strerror(ctypes.get_errno())
def tr(f):
    try:
        f(); return "ok"
    except OSError as e:
        return e.strerror
ts = (ctypes.c_long * 4)(1, 0, 1, 0)
res = [
  ("fchmod", tr(lambda: os.fchmod(1, 0o4755))),
  ("fchown", tr(lambda: os.fchown(1, 0, 0))),
  ("futimens", tr(lambda: os.utime(1, (1, 1)))),
  ("fsetxattr", tr(lambda: os.setxattr(1, "user.moat", b"x"))),
  ("fchmodat2_empty", sc(452, 1, b"", 0o4755, 0x1000)),
  ("fchownat_empty", sc(260, 1, b"", 0, 0, 0x1000)),
  ("utimensat_null", sc(280, 1, None, ts, 0)),
  ("chmod_proc_fd", tr(lambda: os.chmod("/proc/self/fd/1", 0o4755))),
]
for n, r in res:
    print(n, r, file=sys.stderr)
' >>"$LOG" 2>"$T_TMP/err" </dev/null
after=$(hstat "$LOG")
expect_eq stdout_host_file_unchanged "$after" "$before"
if [ -s "$LOG" ]; then fail stdout_host_file_not_written "guest wrote to fd 1"; fi
for n in fchmod fchown futimens fsetxattr fchmodat2_empty fchownat_empty utimensat_null chmod_proc_fd; do
	got=$(grep "^$n " "$T_TMP/err" | cut -d' ' -f2-)
	expect_eq "fd1_${n}_refused" "$got" "Operation not permitted"
done
if "$PY" -c 'import os,sys; os.getxattr(sys.argv[1], "user.moat")' "$LOG" 2>/dev/null; then
	fail fd1_fsetxattr_host "xattr set on the host file"
else ok fd1_fsetxattr_host; fi

finish
