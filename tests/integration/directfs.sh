#!/bin/bash
# Direct file access (fs/directfs.c) answers only what cannot differ from the
# gofer's answer: a first lookup of a name in a read-only export that the
# sentry's own uid cannot decide (a directory it may not search, a symlink on
# the way) still reaches the gofer, and a missing name is missing. Functional
# (they pass without moat too: ok_sanity), each run in a fresh sandbox so the
# dentry cache is cold.
. "$(dirname "$0")/lib.sh"

R=$T_TMP/ro
mkdir -p "$R/secret" "$R/sub"
echo s >"$R/secret/f"
echo p >"$R/sub/f"
chmod 0700 "$R/secret"
ln -s secret "$R/lnk"
ln -s sub "$R/lnk2"
chmod 0755 "$R" "$R/sub"

# stats in one fresh sandbox, in order: "yes", "no" (ENOENT) or the error,
# space-separated. The directory is stat'ed alone first: a walk asks the gofer
# for the components ahead in the same round trip, so only then does the
# file's own lookup meet an empty cache.
probe() {
	moat run --bind "$R:/ro:ro" -- "$PY" -c '
import os, sys
out = []
for p in sys.argv[1:]:
    try:
        os.stat(p); out.append("yes")
    except FileNotFoundError:
        out.append("no")
    except OSError as e:
        out.append(e.strerror)
print(" ".join(out))' "$@" 2>&1 | tail -1
}
SANITY=1 expect_eq unsearchable_dir_file_found "$(probe /ro/secret /ro/secret/f)" "yes yes"
SANITY=1 expect_eq symlink_to_unsearchable_found "$(probe /ro/lnk /ro/secret /ro/lnk/f)" "yes yes yes"
SANITY=1 expect_eq symlink_dir_file_found "$(probe /ro/lnk2 /ro/lnk2/f)" "yes yes"
SANITY=1 expect_eq plain_file_found "$(probe /ro/sub /ro/sub/f)" "yes yes"
SANITY=1 expect_eq missing_name_absent "$(probe /ro/sub /ro/sub/nothere /ro/sub/nothere)" "yes no no"
SANITY=1 expect_eq missing_in_unsearchable_absent "$(probe /ro/secret /ro/secret/nothere)" "yes no"
SANITY=1 expect_eq missing_parent_absent "$(probe /ro/nodir/f /ro/nodir)" "no no"
SANITY=1 expect_eq absent_then_present "$(probe /ro/sub/x /ro/sub /ro/sub/f /ro/secret /ro/secret/f)" "no yes yes yes yes"

# A writable bind: a stat of a name the dentry cache knows is the sentry's own
# fstat of the same inode through its read-only bind, with the cached owner
# (fs/directfs.c, vfs_direct_restat). It must be as fresh as the gofer's:
# native writes change the size, a chown the owner, and a name the host
# replaced while the sandbox runs (another inode, a symlink to a directory
# outside the bind) is looked up again, never answered from the old inode.
W=$T_TMP/rw
O=$T_TMP/outside
mkdir -p "$W" "$O"
echo 12345 >"$W/f"
echo 1 >"$W/g"
echo secret-outside >"$O/s"
chmod 0777 "$W"
rwprobe() {
	moat run --bind "$W:/w:rw" -- "$PY" -c '
import os, time
out = []
st = os.lstat("/w/f"); out.append(str(st.st_size))
with open("/w/f", "a") as f:
    f.write("more\n")
st2 = os.lstat("/w/f"); out.append(str(st2.st_size))
out.append("same" if st2.st_mtime_ns >= st.st_mtime_ns else "older")
if os.geteuid() == 0:  # rootless: the caller ids, no chown
    os.chown("/w/f", 7, 8); st = os.lstat("/w/f"); out.append("%d:%d" % (st.st_uid, st.st_gid))
else:
    out.append("7:8")
g = os.lstat("/w/g")
open("/w/go", "w").close()
for _ in range(400):
    if "done" in os.listdir("/w"):  # (a stat of it may be cached absent: exclusive)
        break
    time.sleep(0.025)
g2 = os.lstat("/w/g")
out.append("link" if os.path.islink("/w/g") else "ino-" + ("same" if g2.st_ino == g.st_ino else "new"))
try:
    out.append(open("/w/g/s").read().strip())
except OSError as e:
    out.append(e.strerror)
print(" ".join(out))' 2>&1 | tail -1
}
# the host side: once the guest has stat'ed g, replace it by a symlink to a
# directory outside the bind
( for _ in $(seq 400); do [ -e "$W/go" ] && break; sleep 0.025; done
  rm -f "$W/g" && ln -s "$O" "$W/g" && touch "$W/done" ) &
swapper=$!
out=$(rwprobe)
wait $swapper
# exclusive (the default) may see the host's swap late or never (a cached
# regular file: ENOTDIR) or at once (ENOENT through the symlink): either way
# never the file outside the bind
case "$out" in
"6 11 same 7:8 link No such file or directory" | "6 11 same 7:8 ino-same Not a directory")
	ok rw_restat_fresh_owner_and_swap ;;
*) fail rw_restat_fresh_owner_and_swap "got [$out]" ;;
esac

# Directory prefetch (fs/vfs.c, dir_prefetch): on a writable mount the fourth
# miss in a directory fetches every regular file and subdirectory in it with
# its lstat (pages of ~80 per gofer round trip). Each name must then stat as
# it does natively (the cached owner, the sentry's own fstat), over several
# pages, with a symlink, a FIFO and a subdirectory among the files (not
# prefetched: looked up alone); and as on a read-only bind, which looks each
# name up alone.
P=$T_TMP/pf
mkdir -p "$P/sub"
for i in $(seq 1 300); do head -c $((i * 7)) /dev/zero >"$P/file$i"; done
ln "$P/file1" "$P/hardlink"
ln -s file2 "$P/sym"
mkfifo "$P/fifo"
chmod 0640 "$P/file3"
chmod -R a+rX "$P"
listing='
import os, stat, sys
d = sys.argv[1]
out = []
for name in sorted(os.listdir(d)):
    st = os.lstat(os.path.join(d, name))
    out.append("%s %o %d %d %d %d %d" % (name, st.st_mode, st.st_size, st.st_nlink, st.st_ino, st.st_uid, st.st_gid))
print(len(out), __import__("hashlib").sha1("\n".join(out).encode()).hexdigest())'
native=$("$PY" -c "$listing" "$P")
expect_eq prefetch_ro_same_as_native "$(moat run --bind "$P:/p:ro" -- "$PY" -c "$listing" /p 2>&1 | tail -1)" "$native"
expect_eq prefetch_rw_same_as_native "$(moat run --bind "$P:/p:rw" -- "$PY" -c "$listing" /p 2>&1 | tail -1)" "$native"
# a file mapped from a direct open of a read-only bind is named in the
# guest's /proc/self/maps as the guest opened it (sentryfs37: the sentry's
# exports are in a detached box, whose root the kernel names them from,
# "/<index>/..."; with each export detached on its own the name was "/f"
# and the line was left out)
SANITY=1 expect_eq maps_names_direct_ro_file "$(moat run --bind "$R:/ro:ro" -- "$PY" -c '
import mmap
f = open("/ro/sub/f", "rb")
m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
print(sum(1 for l in open("/proc/self/maps") if l.split()[-1] == "/ro/sub/f"))' 2>&1 | tail -1)" "1"
# a hidden name stays hidden in a directory the prefetch fetched (/etc's
# secrets, /etc made writable by an overlay: four other names first, so the
# hidden ones meet a fetched directory)
hid=$(moat run --overlay memory -- "$PY" -c '
import os
for n in ("passwd", "group", "hostname", "hosts", "os-release"):
    os.stat("/etc/" + n)
r = []
for n in ("/etc/shadow", "/etc/gshadow"):
    try:
        os.stat(n); r.append("seen")
    except FileNotFoundError:
        r.append("hidden")
print(" ".join(r))' 2>&1 | tail -1)
expect_eq prefetch_keeps_hidden_names "$hid" "hidden hidden"

# After the sentry changes a name's metadata through the gofer (create, chmod,
# truncate, utimensat, chown) it stores the name again from its own fstat
# (vfs_refresh): what the next call sees, a stat or a permission check of
# another user, must be the change.
R2=$T_TMP/refresh
mkdir -p "$R2"
chmod 0777 "$R2"
got=$(moat run --bind "$R2:/r:rw" -- "$PY" -c '
import os
out = []
fd = os.open("/r/n", os.O_CREAT | os.O_WRONLY, 0o644)
st = os.stat("/r/n"); out.append("%o:%d" % (st.st_mode & 0o7777, st.st_size))
os.write(fd, b"12345"); os.close(fd)
st = os.stat("/r/n"); out.append("%d" % st.st_size)
os.chmod("/r/n", 0o600); out.append("%o" % (os.stat("/r/n").st_mode & 0o7777))
os.truncate("/r/n", 2); out.append("%d" % os.stat("/r/n").st_size)
os.utime("/r/n", (1000000, 2000000)); out.append("%d" % os.stat("/r/n").st_mtime)
def denied():
    try:
        open("/r/n").close(); return 1
    except PermissionError:
        return 0
if os.geteuid() == 0:  # root: a chown, and another user tries to read
    os.chown("/r/n", 4321, 4321); out.append("%d" % os.stat("/r/n").st_uid)
    os.chown("/r/n", 0, 0)
    pid = os.fork()
    if pid == 0:
        os.setgid(1000); os.setuid(1000)
        os._exit(denied())
    _, status = os.waitpid(pid, 0)
    out.append("denied" if os.WEXITSTATUS(status) == 0 else "allowed")
else:  # rootless: the owner itself, after chmod 000
    out.append("4321")
    os.chmod("/r/n", 0)
    out.append("denied" if denied() == 0 else "allowed")
print(" ".join(out))' 2>&1 | tail -1)
expect_eq refresh_after_metadata_changes "$got" "644:0 5 600 2 2000000 4321 denied"
# A writable bind's regular file opened read-only is the sentry's own open
# beneath its read-only bind of the export (fs/directfs.c), no gofer round
# trip: MOAT_PROFILE counts the gofer's opens (main: one per open). The fd
# reads what the file holds, sees a write made through another fd at once
# (the same inode), and its read-only mount never shows (fstatfs).
D=$T_TMP/rwopen
mkdir -p "$D"
echo hello >"$D/f"
chmod 0777 "$D"
chmod 0666 "$D/f"
out=$(MOAT_PROFILE=1 moat run --bind "$D:/d:rw" -- "$PY" -c '
import os
out = []
for _ in range(40):
    with open("/d/f") as f:
        data = f.read()
out.append(data.strip())
r = os.open("/d/f", os.O_RDONLY)
with open("/d/f", "a") as w:
    w.write("more\n")
out.append(os.pread(r, 64, 0).decode().replace("\n", "+"))
out.append("rw" if not (os.fstatvfs(r).f_flag & os.ST_RDONLY) else "ro")
os.close(r)
print("RESULT " + " ".join(out))' 2>&1)
expect_eq rw_direct_open_reads "$(echo "$out" | sed -n 's/^RESULT //p')" "hello hello+more+ rw"
# the same on a cow export (the root overlay): a read fd opened directly is
# the overlay clone's, read-only in the sentry; the guest's mount is not
expect_eq cow_direct_fd_flags "$(moat run --overlay memory -- "$PY" -c '
import os
r = os.open("/etc/passwd", os.O_RDONLY)
print("rw" if not (os.fstatvfs(r).f_flag & os.ST_RDONLY) else "ro")' 2>&1 | tail -1)" rw
gopens=$(echo "$out" | awk '$1 == "op" && $2 == "open" { print $3 }')
if [ "${gopens:-0}" -lt 10 ]; then ok rw_direct_open_no_gofer; else fail rw_direct_open_no_gofer "gofer opens: $gopens for 40 read-only opens"; fi

# A create, unlink or metadata change in a directory keeps the directory's
# cached entry (its mode and owner do not change) with its inode in the
# written set: a walk through it needs no gofer walk, a stat of it is fresh.
# Its times and link count after each change must be the host's now.
D2=$T_TMP/parent
mkdir -p "$D2/d"
chmod 0777 "$D2" "$D2/d"
got=$(moat run --bind "$D2:/p:rw" -- "$PY" -c '
import os, time
out = []
def st():
    s = os.stat("/p/d"); return (s.st_mtime_ns, s.st_nlink)
a = st(); time.sleep(0.02)
open("/p/d/f", "w").close(); b = st()
out.append("create:" + ("newer" if b[0] > a[0] else "stale"))
time.sleep(0.02); os.mkdir("/p/d/sub"); c = st()
out.append("mkdir:%+d" % (c[1] - b[1]))
time.sleep(0.02); os.rename("/p/d/f", "/p/d/g"); d = st()
out.append("rename:" + ("newer" if d[0] > c[0] else "stale"))
time.sleep(0.02); os.unlink("/p/d/g"); e = st()
out.append("unlink:" + ("newer" if e[0] > d[0] else "stale"))
time.sleep(0.02); os.rmdir("/p/d/sub"); f = st()
out.append("rmdir:%+d" % (f[1] - e[1]))
print(" ".join(out))' 2>&1 | tail -1)
expect_eq parent_stat_fresh_after_changes "$got" "create:newer mkdir:+1 rename:newer unlink:newer rmdir:-1"

# tar's pattern in a directory the sentry may not search (root-run: a 0700
# directory of host root; tar makes its directories so until the end): after
# the create, futimens, fchown, fchmod through the fd and the unlink need no
# gofer walk of the name (vfs_refresh_since: the fd's fstat, taken after the
# change the gofer made on the object checked). main: four walks per file.
D3=$T_TMP/tarlike
mkdir -p "$D3/x"
chmod 0777 "$D3"
chmod 0700 "$D3/x"
tarlike() { # tarlike N: the gofer walks of a sandbox that does it for N files
	MOAT_PROFILE=1 moat run --bind "$D3:/t:rw" -- "$PY" -c '
import os, sys
n = int(sys.argv[1])
for i in range(n):
    fd = os.open("/t/x/f%d" % i, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"data")
    os.utime(fd, (1000000, 2000000))
    if os.geteuid() == 0:
        os.fchown(fd, 0, 0)
    os.fchmod(fd, 0o644)
    os.close(fd)
ok = all(os.stat("/t/x/f%d" % i).st_mtime == 2000000 and
         (os.stat("/t/x/f%d" % i).st_mode & 0o777) == 0o644 for i in range(n))
for i in range(n):
    os.unlink("/t/x/f%d" % i)
print("ok" if ok and not os.listdir("/t/x") else "bad")' "$1" 2>&1
}
out0=$(tarlike 0)
out=$(tarlike 40)
expect_eq tarlike_result "$(echo "$out" | grep -x 'ok\|bad')" ok
w0=$(echo "$out0" | awk '$1 == "op" && $2 == "walk" { print $3 }')
w=$(echo "$out" | awk '$1 == "op" && $2 == "walk" { print $3 }')
# and the create's look-up of the new name is not made either (root-run:
# WALK_CREATE_GUESS, the name taken as absent and made with O_EXCL); before,
# one walk per file was left
if [ $(( ${w:-0} - ${w0:-0} )) -le 10 ]; then ok tarlike_create_no_walk
else fail tarlike_create_no_walk "gofer walks: $(( ${w:-0} - ${w0:-0} )) for 40 files"; fi

# git's loose objects (object_file.c: write_loose_object, finalize_object_file),
# in an rw bind and in a cow bind: access(objects/XX/obj) (absent), an
# O_CREAT|O_EXCL open of objects/XX/tmp_obj_N (ENOENT: mkdir objects/XX, then
# again), write, close, link(tmp, obj), unlink(tmp). The new directory is
# cached from the gofer's mkdir reply, both names from its link reply, and a
# cow export's parent directory stays cached while its inode does not change
# (vfs_made_dir, vfs_linked, parent_changed): no gofer walk, lstat or
# directory page per object. main, root-run: a walk per unlink and per new
# directory (rw bind 50 for 40 objects; cow ~100 more: every change dropped
# the parent). Rootless the sentry's own look-ups answered them already.
D5=$T_TMP/gitlike
mkdir -p "$D5/rw/.git/objects" "$D5/cow/.git/objects"
chmod -R 0777 "$D5"
gitlike() { # gitlike N BINDSPEC: gofer look-ups of a sandbox writing N objects
	MOAT_PROFILE=1 moat run --bind "$2" -- "$PY" -c '
import errno, os, sys
n, o = int(sys.argv[1]), "/g/.git/objects"
for i in range(n):
    d = "%s/%02x" % (o, i % 10)
    obj, tmp = "%s/obj%d" % (d, i), "%s/tmp_obj_%d" % (d, i)
    assert not os.access(obj, os.F_OK)
    try:
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o444)
    except FileNotFoundError:
        os.mkdir(d, 0o777)
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o444)
    os.write(fd, b"blob %d" % i)
    os.close(fd)
    os.link(tmp, obj)
    os.unlink(tmp)
ok = all(os.lstat("%s/%02x/obj%d" % (o, i % 10, i)).st_nlink == 1 and
         open("%s/%02x/obj%d" % (o, i % 10, i), "rb").read() == b"blob %d" % i and
         not os.path.lexists("%s/%02x/tmp_obj_%d" % (o, i % 10, i)) for i in range(n))
print("ok" if ok and sorted(os.listdir(o)) == ["%02x" % k for k in range(min(n, 10))] else "bad")' "$1" 2>&1
}
looks() { echo "$1" | awk '$1 == "op" && ($2 == "walk" || $2 == "lstat" || $2 == "dirstat") { s += $3 } END { print s + 0 }'; }
for kind in rw cow; do
	out0=$(gitlike 0 "$D5/$kind:/g:$kind")
	out=$(gitlike 40 "$D5/$kind:/g:$kind")
	rm -rf "${D5:?}/$kind/.git/objects/"*
	expect_eq "gitlike_${kind}_result" "$(echo "$out" | grep -x 'ok\|bad')" ok
	l=$(( $(looks "$out") - $(looks "$out0") ))
	if [ "$l" -le 6 ]; then ok "gitlike_${kind}_objects_no_walk"
	else fail "gitlike_${kind}_objects_no_walk" "gofer walks, lstats and pages: $l for 40 objects"; fi
	# the rw bind's objects/XX are complete directories (fs/dcache.h):
	# each object's access(F_OK) and the first create in a new XX are
	# answered absent without the sentry's openat2 (main: 0)
	if [ "$kind" = rw ]; then
		a=$(echo "$out" | sed -n 's/.*names absent in complete directories: \([0-9]*\).*/\1/p')
		if [ "${a:-0}" -ge 40 ]; then ok gitlike_rw_complete_dirs
		else fail gitlike_rw_complete_dirs "names answered absent from complete directories: ${a:-none} for 40 objects"; fi
	fi
done

# Complete directories (fs/dcache.h): in a directory the sentry made, a name
# not cached is answered absent with no look-up. Every way another guest
# process puts a name there must be seen by the next look-up (each directory
# made by this process, each name made by a child, then looked up here): a
# rename into it, a symlink, a FIFO, an AF_UNIX socket, a hard link, a name
# this process saw absent just before, and a name unlinked then made again.
D6=$T_TMP/complete
mkdir -p "$D6" && chmod 0777 "$D6"
got=$(moat run --bind "$D6:/c:rw" -- "$PY" -c '
import os, socket, subprocess, sys
def child(code):
    subprocess.run([sys.executable, "-c", "import os, socket\n" + code], check=True)
open("/c/x", "w").close(); open("/c/x2", "w").close()
ds = ["/c/d%d" % i for i in range(7)]
for d in ds:
    os.mkdir(d)
out = []
child("os.rename(\"/c/x\", \"/c/d0/y\")")
child("os.symlink(\"nowhere\", \"/c/d1/y\")")
child("os.mkfifo(\"/c/d2/y\")")
child("socket.socket(socket.AF_UNIX).bind(\"/c/d3/y\")")
child("os.link(\"/c/x2\", \"/c/d4/y\")")
out.append("no" if not os.path.lexists("/c/d5/y") else "early")
child("open(\"/c/d5/y\", \"w\").close()")
open("/c/d6/y", "w").close()
child("os.unlink(\"/c/d6/y\"); os.mkdir(\"/c/d6/y\")")
out += ["yes" if os.path.lexists(d + "/y") else "no" for d in ds]
out.append("dir" if os.path.isdir("/c/d6/y") else "notdir")
print(" ".join(out))' 2>&1 | tail -1)
rm -rf "${D6:?}"/*
SANITY=1 expect_eq complete_dir_sees_other_process_names "$got" "no yes yes yes yes yes yes yes dir"

# What an O_CREAT open finds when the name it took as absent (a directory the
# sentry may not search, names never looked up in this sandbox) exists after
# all: the existing file opened, not truncated; EEXIST with O_EXCL; a symlink
# followed to its file or, dangling, to the name it makes; a directory EISDIR.
D4=$T_TMP/guess
mkdir -p "$D4/g/sd"
echo keep >"$D4/g/e"; echo keep >"$D4/g/e2"; echo keep >"$D4/g/e3"
ln -s e3 "$D4/g/l"; ln -s made_by_link "$D4/g/dl"
chmod 0777 "$D4"; chmod 0700 "$D4/g"
got=$(moat run --bind "$D4:/t:rw" -- "$PY" -c '
import errno, os
out = []
def op(path, flags, data=None):
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        out.append(errno.errorcode[e.errno]); return
    if data:
        os.write(fd, data)
    os.close(fd)
    out.append("ok")
os.stat("/t/g") # alone: a walk caches the components ahead of its miss too
op("/t/g/e", os.O_WRONLY | os.O_CREAT)
out.append(open("/t/g/e").read().strip())
op("/t/g/e2", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
op("/t/g/l", os.O_WRONLY | os.O_CREAT, b"Z")
out.append(open("/t/g/e3").read().strip())
op("/t/g/dl", os.O_WRONLY | os.O_CREAT)
out.append(str(os.path.isfile("/t/g/made_by_link")))
op("/t/g/sd", os.O_RDONLY | os.O_CREAT)
op("/t/g/new", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
op("/t/g/new", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
print(" ".join(out))' 2>&1 | tail -1)
SANITY=1 expect_eq create_guess_existing_names "$got" "ok keep EEXIST ok Zeep ok True EISDIR ok EEXIST"

# The guest's own O_CREAT|O_EXCL of a name not in the sentry's cache, in a
# directory it may search (WALK_CREATE_EXCL: taken as absent without the
# sentry's own look-up, made by the gofer with O_EXCL): every kind of
# existing name is EEXIST, nothing is opened, truncated or made through a
# link, also in a directory the guest may not write (Linux: EEXIST first).
D5=$T_TMP/excl
# its 0555 directory keeps a rootless rm -rf of $T_TMP from removing it: made
# writable first, right after the case and (failed, interrupted) at exit
at_exit "chmod -R u+w '$D5'; rm -rf '$D5'"
mkdir -p "$D5/x/sd" "$D5/x/ro"
echo keep >"$D5/x/f"; ln -s f "$D5/x/l"; ln -s made_by_link "$D5/x/dl"; mkfifo "$D5/x/p"
echo keep >"$D5/x/ro/f"
chmod 0777 "$D5" "$D5/x"; chmod 0555 "$D5/x/ro"
got=$(moat run --user 1000:1000 --bind "$D5:/t:rw" -- "$PY" -c '
import errno, os
out = []
for name in ("f", "l", "dl", "p", "sd", "ro/f", "new", "new"):
    try:
        os.close(os.open("/t/x/" + name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
try:
    os.close(os.open("/t/x/ro/g", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
    out.append("ok")
except OSError as e:
    out.append(errno.errorcode[e.errno])
out.append(open("/t/x/f").read().strip())
out.append(str(os.path.lexists("/t/x/made_by_link")))
print(" ".join(out))' 2>&1 | tail -1)
SANITY=1 expect_eq create_excl_existing_names "$got" "EEXIST EEXIST EEXIST EEXIST EEXIST EEXIST ok EEXIST EACCES keep False"
if [ -e "$D5/x/made_by_link" ] || [ "$(cat "$D5/x/f")" != keep ]; then fail create_excl_host_intact "a host name changed"
else SANITY=1 ok create_excl_host_intact; fi
chmod -R u+w "$D5"; rm -rf "$D5"
# Rootless, the sentry's user namespace and the gofer's map the same one id
# onto itself, so a first look-up of an existing regular file or directory is
# the sentry's own lstat (fs/directfs.c vfs_direct_absent, VFS_PRESENT_STAT),
# no gofer round trip. Its answer must be the gofer's (MOAT_NO_DIRECTFS=1:
# every look-up by the gofer), owners included — the caller's own files, host
# root's, a file of another uid — on an rw bind, a ro bind and the root
# overlay; and a symlink on the way is still the guest's (the sentry's walk
# follows its target itself: its openat2 refuses symlinks on the way, and a
# symlink's own look-up reads it from the symlink's fd), never the sentry's
# own root.
V=$T_TMP/owners
mkdir -p "$V/d/sub" "$T_TMP/vout"
echo mine >"$V/d/mine"; echo theirs >"$V/d/theirs"; echo r >"$V/d/rootf"
echo outside >"$T_TMP/vout/x"
ln -s /etc "$V/d/etclink"
chmod -R a+rX "$V" "$T_TMP/vout"
chmod 0777 "$V" "$V/d"
if [ "$(id -u)" = 0 ]; then
	chown -R 1000:1000 "$V/d"; chown 0:0 "$V/d/rootf"; chown 4242:4343 "$V/d/theirs"
fi
ownprobe='
import os, sys
out = []
for p in sys.argv[1:]:
    try:
        st = os.lstat(p)
        out.append("%s=%o:%d:%d:%d:%d" % (os.path.basename(p), st.st_mode, st.st_uid, st.st_gid, st.st_size, st.st_nlink))
    except OSError as e:
        out.append("%s=%s" % (os.path.basename(p), e.strerror))
print(" ".join(out))'
owner_paths="/v/d /v/d/mine /v/d/theirs /v/d/rootf /v/d/sub /v/d/etclink /v/d/etclink/passwd /v/d/nothere /etc/passwd /etc/hostname /usr/bin/env /o/d/mine /o/d/rootf /o/d/theirs /c/d/mine /c/d/theirs /c/d/rootf /c/d/sub"
direct=$(moat run --bind "$V:/v:rw" --bind "$V:/o:ro" --bind "$V:/c:cow" -- "$PY" -c "$ownprobe" $owner_paths 2>&1 | tail -1)
viagofer=$(MOAT_NO_DIRECTFS=1 moat run --bind "$V:/v:rw" --bind "$V:/o:ro" --bind "$V:/c:cow" -- "$PY" -c "$ownprobe" $owner_paths 2>&1 | tail -1)
SANITY=1 expect_eq direct_lookup_same_as_gofer "$direct" "$viagofer"
# root-run, the owners are the host's own (several users), whichever answers
if [ "$(id -u)" = 0 ]; then
	got=$(echo "$direct" | tr ' ' '\n' | grep -E '^(mine|theirs|rootf|sub)=' | cut -d: -f2,3 | sort | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' ')
	SANITY=1 expect_eq root_direct_lookup_host_owners "$got" "3x0:0 5x1000:1000 3x4242:4343 "
fi
# and without a gofer round trip per name: rootless (one id mapped in both
# namespaces) and root-run (every host id mapped in both: the sentry's by a
# root helper, sentry/privilege.c), on a ro, a cow and an rw bind. Root-run
# before that map, every first look-up was a gofer walk (>= 200 here).
firstlook='
import os, sys
for i in range(1, 201):
    os.lstat("%s/file%d" % (sys.argv[1], i))
print("done")'
if [ "$(id -u)" != 0 ]; then fl=rootless_first_lookup_no_gofer; else fl=root_first_lookup_no_gofer; fi
flbad=
for mode in ro cow rw; do
	out=$(MOAT_PROFILE=1 moat run --bind "$P:/p:$mode" -- "$PY" -c "$firstlook" /p 2>&1)
	trips=$(echo "$out" | awk '$1 == "op" && ($2 == "lstat" || $2 == "walk") { n += $3 } END { print n + 0 }')
	if [ "$(echo "$out" | grep -c '^done$')" != 1 ] || [ "$trips" -ge 20 ]; then
		flbad="$flbad $mode:$trips"
	fi
done
if [ -z "$flbad" ]; then ok $fl
else fail $fl "gofer lstat+walk for 200 first look-ups:$flbad"; fi

# A symlink's first look-up is the sentry's own too: its lstat and its
# target read from the O_PATH|O_NOFOLLOW fd of the symlink itself
# (VFS_PRESENT_LINK, readlinkat(fd, "")); before, every symlink was a gofer
# walk (python3 -c pass: libz.so.1, libexpat.so.1, locale.alias,
# /etc/localtime, sitecustomize.py). Same answers as the gofer's (lstat,
# readlink, the target's contents through it), on a ro, a cow and an rw
# bind, and no gofer round trip per link (>= 100 here before).
L=$T_TMP/links
mkdir -p "$L/t"
for i in $(seq 1 50); do echo "t$i" >"$L/t/f$i"; ln -s "t/f$i" "$L/rel$i"; ln -s "/l/t/f$i" "$L/abs$i"; done
chmod -R a+rX "$L"
linkprobe='
import os, sys
out = []
for i in range(1, 51):
    for k in ("rel", "abs"):
        p = "%s/%s%d" % (sys.argv[1], k, i)
        st = os.lstat(p)
        out.append("%s%d=%o:%d:%d:%d:%s:%s" % (k, i, st.st_mode, st.st_uid, st.st_gid, st.st_size,
                                              os.readlink(p), open(p).read().strip()))
print(" ".join(out))'
lkbad=
for mode in ro cow rw; do
	out=$(MOAT_PROFILE=1 moat run --bind "$L:/l:$mode" -- "$PY" -c "$linkprobe" /l 2>&1)
	ref=$(MOAT_NO_DIRECTFS=1 moat run --bind "$L:/l:$mode" -- "$PY" -c "$linkprobe" /l 2>&1 | tail -1)
	trips=$(echo "$out" | awk '$1 == "op" && ($2 == "lstat" || $2 == "walk" || $2 == "readlink") { n += $3 } END { print n + 0 }')
	ans=$(echo "$out" | grep '^rel1=')
	if [ -z "$ans" ] || [ "$ans" != "$ref" ]; then
		lkbad="$lkbad $mode:answers-differ"
	elif [ "$trips" -ge 20 ]; then
		lkbad="$lkbad $mode:$trips"
	fi
done
if [ -z "$lkbad" ]; then ok symlink_first_lookup_no_gofer
else fail symlink_first_lookup_no_gofer "gofer lstat+walk+readlink for 100 symlinks:$lkbad"; fi

# An export's root is the sentry's own too: its first look-up is an fstat of
# the root fd (start39; before, a gofer lstat of each root: the program's
# first exec made three, /, /usr and /etc, on the start-up's critical path).
# The same answers as the gofer's (MOAT_NO_DIRECTFS), on a ro, a cow and an
# rw bind, and no gofer round trip for the three roots.
ER=$T_TMP/eroots
mkdir -p "$ER/a" "$ER/b" "$ER/c"
echo x >"$ER/b/f"
chmod 0751 "$ER/a"; chmod 0705 "$ER/b"; chmod 0777 "$ER/c"
rootprobe='
import os
out = []
for p in ("/ea", "/eb", "/ec"):
    st = os.lstat(p)
    out.append("%s=%o:%d:%d:%d:%d" % (p, st.st_mode, st.st_uid, st.st_gid, st.st_nlink, st.st_ino))
print(" ".join(out))'
erargs=(--bind "$ER/a:/ea:ro" --bind "$ER/b:/eb:cow" --bind "$ER/c:/ec:rw")
out=$(MOAT_PROFILE=1 moat run "${erargs[@]}" -- "$PY" -S -c "$rootprobe" 2>&1)
ref=$(MOAT_NO_DIRECTFS=1 moat run "${erargs[@]}" -- "$PY" -S -c "$rootprobe" 2>&1 | tail -1)
trips=$(echo "$out" | awk '$1 == "op" && ($2 == "lstat" || $2 == "walk") { n += $3 } END { print n + 0 }')
ans=$(echo "$out" | grep '^/ea=')
if [ -z "$ans" ] || [ "$ans" != "$ref" ]; then
	fail export_root_lookup_no_gofer "answers differ: [$ans] [$ref]"
elif ! echo "$out" | grep -q '^moat profile: gofer round trips'; then
	fail export_root_lookup_no_gofer "no profile"
elif [ "$trips" != 0 ]; then
	fail export_root_lookup_no_gofer "gofer lstat+walk for 3 export roots: $trips"
else
	ok export_root_lookup_no_gofer
fi

# Invalidation of what the direct look-ups cache: a name another guest
# process makes (through the gofer) is seen at once by the first; on a shared
# bind a name the host makes, removes or replaces while the guest runs is
# seen at its next look-up (no cached answer), and a replacement by a
# symlink to a directory outside the bind never shows what is outside.
S=$T_TMP/shared
mkdir -p "$S"
echo a >"$S/a"
chmod 0777 "$S"; chmod 0666 "$S/a"
( for _ in $(seq 400); do [ -e "$S/go" ] && break; sleep 0.025; done
  echo hh >"$S/hostmade"; rm -f "$S/a" "$S/new"; ln -s "$T_TMP/vout" "$S/a"; touch "$S/done" ) &
swapper=$!
got=$(moat run --bind "$S:/s:rw,shared" -- "$PY" -c '
import os, subprocess, sys, time
def look(p):
    try:
        st = os.lstat(p)
        return "link" if os.path.islink(p) else "%d" % st.st_size
    except FileNotFoundError:
        return "no"
out = [look("/s/new"), look("/s/a")]
subprocess.run([sys.executable, "-c", "open(\"/s/new\", \"w\").write(\"xyz\")"], check=True)
out.append(look("/s/new"))
open("/s/go", "w").close()
for _ in range(400):
    if os.path.exists("/s/done"):
        break
    time.sleep(0.025)
out.append(look("/s/hostmade"))
out.append(look("/s/a"))
try:
    out.append(open("/s/a/x").read().strip())
except OSError as e:
    out.append(e.strerror)
out.append(look("/s/new"))
print(" ".join(out))' 2>&1 | tail -1)
wait $swapper
expect_eq shared_bind_host_changes_seen "$got" "no 2 3 3 link No such file or directory no"
# the same guest-made name on an exclusive bind (the default): cached
# look-ups, but what another guest process makes is seen at once
rm -rf "$S"/*
got=$(moat run --bind "$S:/s:rw" -- "$PY" -c '
import os, subprocess, sys
out = []
for _ in range(5):
    out.append(str(os.path.exists("/s/n")))
subprocess.run([sys.executable, "-c", "import os; os.mkdir(\"/s/n\"); open(\"/s/n/f\", \"w\").write(\"12\")"], check=True)
out.append(str(os.path.isdir("/s/n")))
out.append(str(os.lstat("/s/n/f").st_size))
subprocess.run([sys.executable, "-c", "import os; os.unlink(\"/s/n/f\"); os.rmdir(\"/s/n\")"], check=True)
out.append(str(os.path.exists("/s/n/f")))
out.append(str(os.path.exists("/s/n")))
print(" ".join(out))' 2>&1 | tail -1)
SANITY=1 expect_eq exclusive_bind_other_process_changes_seen "$got" "False False False False False True 2 False False"

# The prefetch of a directory that several workers miss in at once: one
# fetches it and the others wait for that fetch (fs/vfs.c pf_want), rather
# than asking the gofer for each name they need meanwhile. Eight threads
# stat the same 300 names in different orders, cold: every answer as
# native (each thread's view the same), nothing left waiting.
native=$("$PY" -c "$listing" "$P")
out=$(MOAT_PROFILE=1 moat run --bind "$P:/p:rw" -- "$PY" -c '
import hashlib, os, threading
names = sorted(os.listdir("/p"))
res = {}
def work(k):
    order = names[k * 37 % len(names):] + names[:k * 37 % len(names)]
    res[k] = {n: os.lstat("/p/" + n) for n in order}
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
for t in ts: t.start()
for t in ts: t.join()
same = all(res[k][n].st_ino == res[0][n].st_ino and res[k][n].st_size == res[0][n].st_size for k in res for n in names)
out = []
for name in names:
    st = res[0][name]
    out.append("%s %o %d %d %d %d %d" % (name, st.st_mode, st.st_size, st.st_nlink, st.st_ino, st.st_uid, st.st_gid))
print("RESULT", same, len(out), hashlib.sha1("\n".join(out).encode()).hexdigest())' 2>&1)
SANITY=1 expect_eq prefetch_concurrent_same_as_native "$(echo "$out" | sed -n 's/^RESULT //p')" "True $native"
# Misses in many directories in turn (a tree walked breadth-first, or
# threads each in their own directory, as git status's preload): each
# directory is still fetched once at its fourth miss. main kept one counter
# per slot of a 64-slot table, and two directories on one slot reset each
# other's count at every miss, so neither was ever fetched and every name
# was a gofer look-up of its own (git status: up to 1,515 LSTATs where 40
# were needed). Root-run only: rootless, first look-ups are the sentry's own.
M=$T_TMP/many
for d in $(seq 1 40); do
	mkdir -p "$M/dir$d"
	for f in $(seq 1 12); do echo "$d $f" >"$M/dir$d/f$f"; done
done
chmod -R a+rwX "$M"
out=$(MOAT_PROFILE=1 moat run --bind "$M:/m:rw" -- "$PY" -c '
import os
n = 0
for f in range(1, 13):
    for d in range(1, 41):
        n += os.lstat("/m/dir%d/f%d" % (d, f)).st_size > 0
print("RESULT", n)' 2>&1)
lstats=$(echo "$out" | awk '$1 == "op" && $2 == "lstat" { n += $3 } END { print n + 0 }')
if [ "$(echo "$out" | sed -n 's/^RESULT //p')" != 480 ]; then
	fail prefetch_many_dirs_fetched_once "got [$(echo "$out" | tail -3)]"
elif [ "$(id -u)" != 0 ]; then
	skip prefetch_many_dirs_fetched_once "rootless: first look-ups are the sentry's own"
elif [ "$lstats" -le 200 ]; then ok prefetch_many_dirs_fetched_once
else fail prefetch_many_dirs_fetched_once "gofer LSTATs: $lstats for 40 directories of 12 names"; fi
# Where the sentry's own lstat is the gofer's (root-run with its map of
# every host id, and rootless), the fetch is the sentry's own listing
# (fs/directfs.c vfs_direct_dirstat: getdents64 and an fstatat per name),
# not one openat2+fstat+close per name (main: git status's 5,000 first
# look-ups): each of the 40 directories listed once, all 12 names of each,
# and /m itself (its 40 subdirectories), no gofer DIRSTAT and no more gofer
# look-ups than the bind's root takes (a walk and lstats: 3), every answer
# as before (the 480 above).
listed=$(echo "$out" | sed -n 's/^moat profile: directories listed by the sentry: \([0-9]*\) (\([0-9]*\) names)$/\1 \2/p')
gofer_looks=$(looks "$out")
if [ "$listed" = "41 520" ] && [ "$gofer_looks" -le 3 ]; then ok prefetch_listed_by_sentry
else fail prefetch_listed_by_sentry "listed [$listed], gofer walks/lstats/dirstats $gofer_looks"; fi
# /dev's memory devices come from a pool the gofer fills a batch at a time
# (GOFER_OP_DEVOPEN, fs/vfs.c devpool_open), not one gofer OPEN per open:
# main made 120 OPENs here. Each fd is still an open file description of
# its own (status flags set on one are not seen on another), reads what
# the device gives and writes where it takes: that half passes natively.
devprog='
import fcntl, os
fds = [os.open("/dev/urandom", os.O_RDONLY) for _ in range(40)]
fcntl.fcntl(fds[0], fcntl.F_SETFL, os.O_NONBLOCK)
own = all(not (fcntl.fcntl(f, fcntl.F_GETFL) & os.O_NONBLOCK) for f in fds[1:])
rnd = len(set(os.read(f, 16) for f in fds)) == 40
for f in fds: os.close(f)
nul = [os.open("/dev/null", os.O_WRONLY) for _ in range(40)]
w = all(os.write(f, b"x") == 1 for f in nul)
for f in nul: os.close(f)
z = [os.open("/dev/zero", os.O_RDWR | os.O_CLOEXEC) for _ in range(40)]
zr = all(os.read(f, 4) == bytes(4) for f in z)
ce = all(fcntl.fcntl(f, fcntl.F_GETFD) & fcntl.FD_CLOEXEC for f in z)
for f in z: os.close(f)
print("RESULT", own, rnd, w, zr, ce)'
out=$(MOAT_PROFILE=1 moat run -- "$PY" -c "$devprog" 2>&1)
SANITY=1 expect_eq dev_pool_own_descriptions "$(echo "$out" | sed -n 's/^RESULT //p')" "True True True True True"
gopens=$(echo "$out" | awk '$1 == "op" && $2 == "open" { n += $3 } END { print n + 0 }')
devopens=$(echo "$out" | awk '$1 == "op" && $2 == "devopen" { n += $3 } END { print n + 0 }')
if [ "$gopens" -lt 20 ] && [ "$devopens" -le 30 ]; then ok dev_pool_batches
else fail dev_pool_batches "gofer opens: $gopens, devopen batches: $devopens for 120 device opens"; fi
# git opens /dev/urandom once per object it writes (727 in bench/macro.sh's
# 500-file commit): the batch doubles up to 32 fds a round trip (1, 2, 4,
# 8, 16, 32, 32...: 11 batches for 200 opens; with batches of at most 8,
# as before pgit6, 28)
out=$(MOAT_PROFILE=1 moat run -- "$PY" -c '
import os
for _ in range(200): os.close(os.open("/dev/urandom", os.O_RDONLY))
print("RESULT done")' 2>&1)
devopens=$(echo "$out" | awk '$1 == "op" && $2 == "devopen" { n += $3 } END { print n + 0 }')
if [ "$(echo "$out" | sed -n 's/^RESULT //p')" = done ] && [ "$devopens" -le 12 ]; then ok dev_pool_big_batches
else fail dev_pool_big_batches "devopen batches: $devopens for 200 opens of /dev/urandom [$(echo "$out" | tail -3)]"; fi
# ... but the pool holds at most DEVPOOL_TOTAL (96) fds in the sentry, all
# kinds together: 64 opens of each of the 15 kinds (5 devices, 3 access
# modes) left 31 of each, 465 fds, in the pool without that bound (the
# sentry's own fds are bounded: sentry/tracer.c FDS_SPARE). Root-run only
# (the sentry's /proc/PID/fd is read from outside).
if [ "$(id -u)" = 0 ]; then
	PF=$T_TMP/poolfds
	mkdir -p "$PF" && chmod 777 "$PF"
	"$MOAT" run --bind "$PF:/pf:rw" -- "$PY" -c '
import os, time
for d in ("null", "zero", "full", "random", "urandom"):
    for m in (os.O_RDONLY, os.O_WRONLY, os.O_RDWR):
        for _ in range(64): os.close(os.open("/dev/" + d, m))
open("/pf/ready", "w").close()
time.sleep(3)' >/dev/null 2>&1 &
	spid=$!
	for _ in $(seq 1 100); do [ -e "$PF/ready" ] && break; sleep 0.1; done
	nfd=$(ls /proc/$spid/fd 2>/dev/null | wc -l)
	wait $spid
	if [ -e "$PF/ready" ] && [ "$nfd" -gt 0 ] && [ "$nfd" -le 250 ]; then ok dev_pool_bounded
	else fail dev_pool_bounded "the sentry held $nfd fds after 960 device opens (ready: $(ls "$PF"))"; fi
else
	skip dev_pool_bounded "root-run only: reads the sentry's /proc/PID/fd"
fi
# The gofer's round trips spin before they sleep (spin_poll, common/util.c),
# but not under --cpus: the gofer shares the guest's cgroup there, and a
# spin would spend the guest's CPU quota (sentry/run.c sets MOAT_SPIN_US=0).
# MOAT_PROFILE counts the sentry's waits for replies; without the rule the
# first wait spins at least once (seen, budget spent or cut short).
SQ=$T_TMP/spinquota
mkdir -p "$SQ" && chmod 777 "$SQ"
out=$(MOAT_PROFILE=1 moat run --cpus 1 --bind "$SQ:/q:rw" -- /bin/sh -c \
	'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo x >/q/f$i; chmod 600 /q/f$i; rm /q/f$i; done' 2>&1)
spins=$(echo "$out" | sed -n 's/.*replies waited for: \([0-9]*\) seen while spinning, \([0-9]*\) after the budget, \([0-9]*\) spins cut short.*/\1 \2 \3/p')
case "$spins" in
"0 0 0") ok no_spin_under_cpu_quota ;;
*) fail no_spin_under_cpu_quota "spins under --cpus: [$spins]" ;;
esac
# A first look-up of a name directly in the directory a guest's dirfd has
# open (fstatat(dirfd, name), openat(dirfd, name): du, find, grep -r) is one
# statx relative to the sentry's copy of that fd (fs/directfs.c
# vfs_direct_absent_at), not an openat2 of the whole path from the export
# root. The answers are the look-up by path's: each type, a missing name, a
# directory the sentry's uid may not search, a symlink (left to the old
# path), a host mount on a name (refused there: it is not the export's), a
# hidden name (ENOENT); each compared with the lstat by path that follows
# (served from the entry the first one cached), in a fresh sandbox.
DF=$T_TMP/dirfd
mkdir -p "$DF/sub/deep" "$DF/secret" "$DF/mnt"
echo a >"$DF/sub/f"
echo s >"$DF/secret/f"
ln -s f "$DF/sub/lnk"
mkfifo "$DF/sub/fifo"
chmod 0700 "$DF/secret"
chmod 0755 "$DF" "$DF/sub" "$DF/sub/deep"
dfmnt=0
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m,mode=0755 moat-it "$DF/mnt" 2>/dev/null; then
	dfmnt=1
	at_exit "umount '$DF/mnt'"
	echo m >"$DF/mnt/inmnt"
fi
# dfprobe ROOT MOUNTOPT: each name's type, and "!" where its stat relative
# to the dirfd differs from the lstat by path natively (inode, mode, links,
# size, mtime) or, under moat, from the lstat by path that follows
DFPY='
import os, stat, sys
root, native = sys.argv[1], sys.argv[2:]
def kind(m):
    return "d" if stat.S_ISDIR(m) else "f" if stat.S_ISREG(m) else "l" if stat.S_ISLNK(m) else "p" if stat.S_ISFIFO(m) else "?"
def key(s):  # (the overlays'"'"' xino: a lower file'"'"'s number has its layer in the top bits)
    return "%d/%o/%d/%d/%d" % (s.st_ino & ((1 << 62) - 1), s.st_mode, s.st_nlink, s.st_size, s.st_mtime_ns)
out, keys = [], []
for d, names in ((root + "/sub", ["f", "deep", "lnk", "fifo", "none"]), (root, ["secret", "mnt", "sub"]),
                 (root + "/secret", ["f"]), ("/etc", ["shadow", "passwd"])):
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    for n in names:
        try:
            a = os.stat(n, dir_fd=fd, follow_symlinks=False)
        except OSError as e:
            out.append("%s:%d" % (n, e.errno)); keys.append("-"); continue
        b = os.lstat(d + "/" + n)
        want = native[len(keys)] if native else key(b)
        keys.append(key(a))
        out.append("%s:%s%s" % (n, kind(a.st_mode), "" if key(a) == want and key(b) == want else "!"))
    os.close(fd)
print(" ".join(out) if native else " ".join(keys))'
dfnative=$("$PY" -c "$DFPY" "$DF")
dfprobe() { moat run --bind "$DF:/df:$1" -- "$PY" -c "$DFPY" /df $dfnative 2>&1 | tail -1; }
# natively: the same but for the hidden /etc/shadow (ENOENT in the sandbox)
# and, root-run, the mount (its root's stat: the gofer's lstat sees it too)
dfwant="f:f deep:d lnk:l fifo:p none:2 secret:d mnt:d sub:d f:f shadow:2 passwd:f"
expect_eq dirfd_first_lookup_ro "$(dfprobe ro)" "$dfwant"
expect_eq dirfd_first_lookup_rw "$(dfprobe rw)" "$dfwant"
# ... and it is the path taken: MOAT_PROFILE counts those look-ups (main:
# none; each was an openat2, fstat and close), a du of 200 files
mkdir -p "$DF/many/a" "$DF/many/b"
for i in $(seq 100); do : >"$DF/many/a/f$i"; : >"$DF/many/b/f$i"; done
chmod -R a+rX "$DF/many"
# (with MOAT_LIST_AHEAD=1 most names are listed ahead: counted there)
out=$(MOAT_PROFILE=1 moat run --bind "$DF/many:/m:ro" -- du -a /m 2>&1)
held=$(echo "$out" | sed -n "s/.*first look-ups relative to the guest's dirfd: \([0-9]*\).*/\1/p")
ahead=$(echo "$out" | sed -n "s/.*directories listed ahead of a dirfd walk: [0-9]* (\([0-9]*\) names).*/\1/p")
nlines=$(echo "$out" | grep -c '^[0-9][0-9]*[[:space:]]/m')
if [ $((${held:-0} + ${ahead:-0})) -ge 200 ] && [ "$nlines" = 203 ]; then ok dirfd_first_lookup_counted
else fail dirfd_first_lookup_counted "relative look-ups ${held:-none} + ${ahead:-none} listed ahead, du lines $nlines (want >= 200, 203)"; fi
# With MOAT_LIST_AHEAD=1 a directory walked relative to its fd (fts: du,
# find, grep -r) is listed ahead by a thread of the sentry's at the second
# present name (fs/vfs.c list_ahead): what the walk then sees is what the
# names' own look-ups gave (without it), types, owners, sizes, links and times, a
# symlink, a FIFO, an unsearchable directory, root-run a mount on a name,
# on a read-only bind and on the root overlay (/etc: hidden names)
LA=$T_TMP/ahead
for d in $(seq 12); do
	mkdir -p "$LA/d$d/sub" "$LA/d$d/closed"
	for f in $(seq 8); do head -c $((d * f * 37)) /dev/zero >"$LA/d$d/f$f"; done
	ln -s f1 "$LA/d$d/lnk"
	mkfifo "$LA/d$d/fifo"
	echo c >"$LA/d$d/closed/x"
	touch -d "2001-02-03 04:05:0$((d % 10))" "$LA/d$d/f2"
	chmod 0700 "$LA/d$d/closed"
done
chmod 0755 "$LA" "$LA"/d*
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=1m,mode=0755 moat-it "$LA/d3/sub" 2>/dev/null; then
	at_exit "umount '$LA/d3/sub'"
	echo m >"$LA/d3/sub/inmnt"
fi
# (/etc and /usr/share/doc without inode numbers and times: the root
# overlay numbers its directories in the order they are looked up, and the
# sandbox writes /etc/hosts at each start)
LAFIND=(sh -c "find /la -printf '%p %y %i %m %n %s %U %G %T@ %l\n'; find /etc /usr/share/doc -printf '%p %y %m %n %s %U %G %l\n'")
# (names other test files make in the host's /etc while they run beside this
# one, run.sh's IT_JOBS: isolation_meta's /etc/moat-dac-MARK, isolation_net's /etc/netns/NS, are left out)
lawant=$(moat run --bind "$LA:/la:ro" -- "${LAFIND[@]}" 2>/dev/null | grep -Ev '^/etc/(moat-|netns)' | sort)
out=$(MOAT_LIST_AHEAD=1 MOAT_PROFILE=1 moat run --bind "$LA:/la:ro" -- "${LAFIND[@]}" 2>&1)
lagot=$(echo "$out" | grep '^/' | grep -Ev '^/etc/(moat-|netns)' | sort)
SANITY=1 expect_eq list_ahead_same_as_lookups "$(diff <(echo "$lawant") <(echo "$lagot") | head -5; echo "$lagot" | grep -c '^/la/d')" \
	"$(echo "$lawant" | grep -c '^/la/d')"
ahead=$(echo "$out" | sed -n "s/.*directories listed ahead of a dirfd walk: \([0-9]*\) (\([0-9]*\) names).*/\1 \2/p")
if [ "${ahead%% *}" -ge 12 ] 2>/dev/null && [ "${ahead##* }" -ge 100 ]; then ok list_ahead_counted
else fail list_ahead_counted "listed ahead: ${ahead:-none} (want >= 12 directories, >= 100 names)"; fi
# The sentry's own listing of a cow bind's directory (dir_prefetch) takes
# its files: a name is taken or left by whether it is a mount's root, not by
# its st_dev (an overlay's file has its layer's; before perfwalk every file
# was left out, each then its own look-up), and what it caches is what a
# name's own lstat says (sizes, modes, links, times)
CW=$T_TMP/cowlist
mkdir -p "$CW/d"
for i in $(seq 40); do head -c $((i * 13)) /dev/zero >"$CW/d/f$i"; done
chmod 0640 "$CW/d/f7"
ln "$CW/d/f9" "$CW/d/f9b"
chmod -R a+rX "$CW"
CWPY='
import os, sys
r = sys.argv[1]
print(" ".join("%d/%o/%d/%d" % (s.st_size, s.st_mode, s.st_nlink, s.st_mtime_ns)
               for s in (os.lstat(r + "/d/f%d" % i) for i in range(1, 41))))'
cwwant=$("$PY" -c "$CWPY" "$CW")
out=$(MOAT_PROFILE=1 moat run --bind "$CW:/c:cow" -- "$PY" -c "$CWPY" /c 2>&1)
SANITY=1 expect_eq cow_listing_same_as_lstat "$(echo "$out" | grep '^[0-9][0-9]*/[0-7]*/' | tail -1)" "$cwwant"
names=$(echo "$out" | sed -n "s/.*directories listed by the sentry: [0-9]* (\([0-9]*\) names).*/\1/p")
if [ "${names:-0}" -ge 30 ]; then ok cow_listing_takes_files
else fail cow_listing_takes_files "names listed by the sentry: ${names:-none} (want >= 30)"; fi
# The exec prewarm caches /etc/ld.so.preload as absent before the program
# runs (sentry/exec.c, so ld.so's first access finds it cached); a preload
# list the guest writes later is still read by the next program.
out=$(moat run -- /bin/sh -c 'echo /nonexistent-preload.so >/etc/ld.so.preload && /bin/true' 2>&1)
case "$out" in
*"/nonexistent-preload.so"*"cannot be preloaded"*) ok_sanity preload_written_later_is_read ;;
*) fail preload_written_later_is_read "[$out]" ;;
esac
finish
