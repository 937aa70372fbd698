#!/bin/bash
# NEGATIVE tests, locks: a guest's flock/fcntl locks never reach host files.
# While a guest holds flock LOCK_EX and fcntl locks on files of a rw bind, of a
# ro bind and of the system view (/etc/hostname), host lockers are not blocked;
# the guest's F_SETLEASE is granted in the sentry's table only: a host writer
# of the leased file is not held up. (F_NOTIFY, dnotify, is granted: it tells
# the guest what inotify already may, and refused where inotify is:
# isolation_fs dnotify_*; its signals go to the caller.)
. "$(dirname "$0")/lib.sh"

rw=$T_TMP/rw ro=$T_TMP/ro
mkdir -p "$rw" "$ro"
chmod 777 "$rw"
echo data >"$rw/f"
echo data >"$ro/g"
echo data >"$ro/l"
chmod 644 "$rw/f" "$ro/g" "$ro/l"
sys=/etc/hostname
[ -r "$sys" ] || sys=/etc/os-release

# The guest takes its locks, says "locked", tries a lease and a dnotify watch,
# then waits (at most 60 s) for the host to drop /data/done (a shared bind:
# an exclusive one may cache that it is not there). (Paths are
# arguments so that tests/integration/fake-moat, which isolates nothing and
# must fail every case here, maps them.)
"$MOAT" run --bind "$rw:/data:rw,shared" --bind "$ro:/ro:ro" -- "$PY" -c '
import errno, fcntl, os, signal, sys, time
signal.signal(signal.SIGIO, signal.SIG_IGN)  # lease breaks, dnotify events
data, ro, sysf = sys.argv[1:4]
f = open(data + "/f", "r+")
fcntl.flock(f, fcntl.LOCK_EX)
fcntl.lockf(f, fcntl.LOCK_EX)
g = open(ro + "/g", "r")
fcntl.flock(g, fcntl.LOCK_EX)
fcntl.lockf(g, fcntl.LOCK_SH)
s = open(sysf, "r")
fcntl.flock(s, fcntl.LOCK_EX)
fcntl.lockf(s, fcntl.LOCK_SH)
print("locked", flush=True)
def refused(fn):
    try:
        fn()
        return "granted"
    except OSError as e:
        return "refused " + errno.errorcode[e.errno]
l = open(ro + "/l", "r")
print("lease", refused(lambda: fcntl.fcntl(l, fcntl.F_SETLEASE, fcntl.F_RDLCK)), flush=True)
d = os.open(data, os.O_RDONLY)
print("notify", refused(lambda: fcntl.fcntl(d, fcntl.F_NOTIFY, fcntl.DN_CREATE)), flush=True)
for _ in range(600):
    if os.path.exists(data + "/done"):
        break
    time.sleep(0.1)
' /data /ro "$sys" >"$T_TMP/out" 2>"$T_TMP/err" </dev/null &
gpid=$!
at_exit "touch '$rw/done'; kill $gpid; wait $gpid"

for _ in $(seq 1 200); do
	grep -q '^notify' "$T_TMP/out" && break
	kill -0 $gpid 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '^locked' "$T_TMP/out"; then
	fail setup "guest never took its locks: $(head -c 300 "$T_TMP/err")"
	finish
fi

# host lockers: never blocked by the guest
hostlock() { # FILE flock|lockf: 0 if the host got the exclusive lock at once
	timeout 10 "$PY" - "$1" "$2" <<'PYEOF'
import fcntl, sys
f = open(sys.argv[1], "r+" if sys.argv[2] == "lockf" else "r")
try:
    if sys.argv[2] == "lockf":
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(1)
PYEOF
}
check host_flock1_rw_bind timeout 10 flock -n -x "$rw/f" true
check host_lockf_rw_bind hostlock "$rw/f" lockf
check host_flock1_ro_bind timeout 10 flock -n -x "$ro/g" true
check host_lockf_ro_bind hostlock "$ro/g" lockf
check host_flock_system_view hostlock "$sys" flock
check host_flock1_system_view timeout 10 flock -n -s "$sys" true
# a host writer of the file the guest leased is not held up (a host read
# lease would make host writers wait lease-break-time, 45 s)
check host_append_not_held timeout 10 sh -c "echo more >>'$ro/l'"

case $(grep '^lease ' "$T_TMP/out") in
"lease granted"*) ok_sanity guest_setlease_granted ;;
*) fail guest_setlease_granted "$(grep '^lease ' "$T_TMP/out" || echo no answer)" ;;
esac
case $(grep '^notify' "$T_TMP/out") in
"notify granted"*) ok_sanity guest_dnotify_granted ;;
*) fail guest_dnotify_granted "$(grep '^notify' "$T_TMP/out" || echo no answer)" ;;
esac

touch "$rw/done"
wait $gpid || fail setup "guest exited $?: $(head -c 300 "$T_TMP/err")"
finish
