#!/bin/bash
# Mounts. NEGATIVE: the guest's mount(2) changes the sandbox's own table
# only: a remount rw of a --bind :ro leaves it read-only (the host file is
# unchanged), a tmpfs the guest mounts over a rw bind takes the writes (the
# host directory gets nothing) and the host's mount table is the same after;
# --tmpfs DST:size=N is ENOSPC past N. Nesting: --tmpfs, ro and rw binds
# under each other, each keeping its own mode.
. "$(dirname "$0")/lib.sh"

H=$T_TMP/host
mkdir -p "$H/ro" "$H/rw"
echo orig >"$H/ro/f"; echo orig >"$H/rw/f"
chmod -R a+rwX "$H"
hostmounts() { awk '{print $5}' /proc/self/mountinfo | sort; }
before=$(hostmounts)

out=$(moat run --bind "$H/ro:/r:ro" -- /bin/sh -c '
mount -o remount,rw /r 2>/dev/null; mount -o remount,bind,rw /r 2>/dev/null
{ echo changed > /r/f && echo wrote; } 2>/dev/null; cat /r/f' 2>&1)
expect_eq remount_rw_of_ro_bind_refused "$out|$(cat "$H/ro/f")" "orig|orig"

if [ "$(id -u)" != 0 ]; then
	skip guest_tmpfs_over_rw_bind "the guest is not root inside (rootless)"
elif [ "$MOAT" = "${MOAT%fake-moat}" ]; then
	# (not against the fake: natively this would mount on the host)
	out=$(moat run --bind "$H/rw:/w:rw" -- /bin/sh -c '
mount -t tmpfs none /w && echo x > /w/g && ls /w && umount /w && cat /w/f' 2>&1)
	expect_eq guest_tmpfs_over_rw_bind "$out|$(ls "$H/rw")" "g
orig|f"
	expect_eq host_mount_table_unchanged "$(hostmounts)" "$before"
else
	fail guest_tmpfs_over_rw_bind "not run natively"
fi

# Red team 39: noexec (and nosymfollow) was accepted and ignored (a guest root's remount of
# /tmp noexec succeeded and a program there still ran). It cannot be
# enforced on the native mmap(PROT_EXEC) of a file (the gofer's fd is of an
# exec mount), so it is refused: the mount fails, or exec there fails; never
# a noexec mount that runs programs. Not against the fake (it would remount
# the host's /tmp).
if [ "$MOAT" = "${MOAT%fake-moat}" ]; then
	out=$(moat run --user 0:0 -- /bin/sh -c '
cp /bin/true /tmp/t; mkdir -p /tmp/m
for how in "-o remount,noexec /tmp" "-t tmpfs -o noexec none /tmp/m"; do
	mount $how 2>/dev/null || { echo refused; continue; }
	cp /bin/true /tmp/m/t 2>/dev/null; d=/tmp; case $how in *tmpfs*) d=/tmp/m ;; esac
	if "$d/t" 2>/dev/null; then echo ran; else echo exec-refused; fi
done' 2>&1)
	expect_eq noexec_never_pretended "$(echo $out)" "refused refused"
	out=$(moat run --user 0:0 -- /bin/sh -c 'mkdir -p /tmp/m
if mount -t tmpfs -o nosymfollow none /tmp/m 2>/dev/null; then
	ln -s /etc/hostname /tmp/m/l; cat /tmp/m/l >/dev/null 2>&1 && echo followed || echo eloop
else echo refused; fi' 2>&1)
	case $out in refused | eloop) ok nosymfollow_never_pretended ;; *) fail nosymfollow_never_pretended "$out" ;; esac
	# Red team 44: a new tmpfs's data options were ignored whole: a guest
	# root's `mount -t tmpfs -o mode=0700` for a private directory made a
	# 1777 one any user of the sandbox listed and wrote, and an unknown
	# option (Linux: EINVAL) was taken. mode=, uid=, gid= now set the root;
	# an unknown option is refused. (uid= of 1000 only root-run: rootless,
	# 1000 is not mapped, EINVAL as in Linux's user namespace.)
	uid=0; [ "$(id -u)" = 0 ] && uid=1000
	out=$(moat run --user 0:0 -- /bin/sh -c 'mkdir -p /tmp/m /tmp/n
mount -t tmpfs -o nosuchopt none /tmp/n 2>/dev/null && echo taken || echo refused
mount -t tmpfs -o mode=0700,size=1m none /tmp/m && stat -c %a /tmp/m && touch /tmp/m/secret
setpriv --reuid 65534 --regid 65534 --clear-groups ls /tmp/m >/dev/null 2>&1 && echo listed || echo denied
mount -t tmpfs -o mode=750,uid='$uid',gid='$uid' none /tmp/n && stat -c "%a %u:%g" /tmp/n' 2>&1)
	expect_eq tmpfs_mode_option_honoured "$(echo $out)" "refused 700 denied 750 $uid:$uid"
else
	fail noexec_never_pretended "not run natively (it would remount the host's /tmp)"
	fail nosymfollow_never_pretended "not run natively (it would mount on the host)"
	fail tmpfs_mode_option_honoured "not run natively (it would mount on the host)"
fi

out=$(moat run --tmpfs /s:size=1m -- /bin/sh -c '
dd if=/dev/zero of=/s/big bs=64k count=64 2>&1 | grep -c "No space left"; df -k /s | awk "NR==2{print \$2}"' 2>&1)
expect_eq tmpfs_size_enospc "$out" "1
1024"

out=$(moat run --tmpfs /a --bind "$H/ro:/a/r:ro" --bind "$H/rw:/a/r/w:rw" -- /bin/sh -c '
echo m > /a/x && echo tmpfs-ok
{ echo y > /a/r/y; } 2>/dev/null || echo ro-erofs
echo z > /a/r/w/z && echo rw-ok
awk "\$2 ~ /^\/a/ {print \$2, \$4}" /proc/self/mounts' 2>&1)
expect_eq nested_tmpfs_ro_rw "$out|$(ls "$H/ro" | tr '\n' ' ')|$(ls "$H/rw" | tr '\n' ' ')" "tmpfs-ok
ro-erofs
rw-ok
/a rw,nosuid,nodev,relatime
/a/r ro,nosuid,nodev,relatime
/a/r/w rw,nosuid,nodev,relatime|f |f z "

# ---- inotify on every kind of mount (sanity: it works natively too) ----
mkdir -p "$H/cow"; chmod 777 "$H/cow"
if [ -n "$SYSCALL_BIN" ] && [ -x "$SYSCALL_BIN/inotify" ]; then
	for where in /w /c /tmp /etc; do
		args=(); [ $where = /etc ] && args=(--overlay memory)
		if [ $where = /etc ] && [ "$MOAT" != "${MOAT%fake-moat}" ]; then
			fail syscalls_inotify_in_etc "not run natively (it writes /etc)"; continue
		fi
		out=$(moat run --bind "$H/rw:/w:rw" --bind "$H/cow:/c:cow" "${args[@]}" --bind "$SYSCALL_BIN:/t:ro" \
			--env MOAT_GUEST=1 -- /t/inotify "$where" 2>&1)
		rc=$?
		if [ $rc -eq 0 ]; then ok_sanity "syscalls_inotify_in_${where#/}"
		else fail "syscalls_inotify_in_${where#/}" "exit $rc: $(grep -v '^ok' <<<"$out" | head -5)"; fi
	done
else
	skip syscalls_inotify "no SYSCALL_BIN"
fi
PYINO='
import ctypes, os, struct, sys
libc = ctypes.CDLL("libc.so.6", use_errno=True)
d = sys.argv[1] + "/pyino"; os.mkdir(d)
fd = libc.inotify_init1(os.O_NONBLOCK)
wd = libc.inotify_add_watch(fd, d.encode(), 0x100 | 0x2 | 0x40 | 0x80 | 0x200)
if wd < 0: print("add_watch", os.strerror(ctypes.get_errno())); sys.exit(1)
open(d + "/a", "w").write("x"); os.rename(d + "/a", d + "/b"); os.unlink(d + "/b")
buf = os.read(fd, 4096); out = []
while buf:
    w, m, c, l = struct.unpack("iIII", buf[:16]); out.append("%x %s" % (m, buf[16:16 + l].rstrip(b"\0").decode())); buf = buf[16 + l:]
print(",".join(out))'
if [ "$MOAT" != "${MOAT%fake-moat}" ]; then
	fail python_inotify_in_overlay "not run natively (it writes /etc)"
else
	out=$(moat run --overlay memory -- $PY -c "$PYINO" /etc 2>&1)
	SANITY=1 expect_eq python_inotify_in_overlay "$out" "100 a,2 a,40 a,80 b,200 b"
fi

# A guest's bind of a deep subdirectory: a path whose name inside the export
# (the bound directory's path, then the rest) would not fit is refused
# (ENAMETOOLONG) and never another file. Before red-team round 8 it became
# "-" at the export's root: a process that dropped root, through its own
# deep directories under the bind, read, unlinked and re-created root's
# /data/- (its directory 0755 root's). Holds natively too (Linux has no such
# limit: ENOENT); not against the fake (it would mount on the host).
if [ "$MOAT" = "${MOAT%fake-moat}" ]; then
	D=$T_TMP/deep
	mkdir -p "$D" && chmod 755 "$D"
	out=$(moat run --user 0:0 --bind "$D:/data:rw" -- $PY -c '
import os, ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
os.umask(0)
C = "a" * 200
open("/data/-", "w").write("DASH\n"); os.chmod("/data/-", 0o644)
fd = os.open("/data", os.O_DIRECTORY)
os.mkdir("s", 0o777, dir_fd=fd)
for i in range(42):
    nfd = os.open("s" if i == 0 else C, os.O_DIRECTORY, dir_fd=fd); os.close(fd); fd = nfd
    if i < 41: os.mkdir(C, 0o777, dir_fd=fd)
os.fchdir(fd)
os.makedirs("/m", exist_ok=True)
if libc.mount(b".", b"/m", None, 4096, None): print("mount", os.strerror(ctypes.get_errno())); sys.exit()
os.chdir("/")
pid = os.fork()
if pid == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    fd = os.open("/m", os.O_DIRECTORY)
    for i in range(40):
        os.mkdir(C, 0o777, dir_fd=fd)
        nfd = os.open(C, os.O_DIRECTORY, dir_fd=fd); os.close(fd); fd = nfd
    r = []
    for f in (lambda: os.read(os.open("z" * 200, os.O_RDONLY, dir_fd=fd), 9),
              lambda: os.unlink("z" * 200, dir_fd=fd),
              lambda: os.open("z" * 200, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)):
        try: r.append(repr(f()))
        except OSError as e: r.append(errno.errorcode[e.errno])
    print(*r, flush=True); os._exit(0)
os.waitpid(pid, 0)
print(open("/data/-").read().strip())' </dev/null 2>&1)
	case $out in
	"ENAMETOOLONG ENAMETOOLONG ENAMETOOLONG"*DASH) SANITY=1 ok bind_subdir_too_deep_reaches_nothing ;;
	*) fail bind_subdir_too_deep_reaches_nothing "$(printf %s "$out" | tr '\n' ' ' | head -c 300)" ;;
	esac
fi

# A guest's bind of a subdirectory is that directory, not its name: a process
# that dropped root renames the source away (its parent is 0777:
# rootless too, where no other uid can own it)
# and puts a symlink to / or a directory of its own in its place; root's
# read-only bind shows neither (ENOENT, as a deleted source; Linux keeps the
# directory). Before red-team round 8 /m listed the sandbox's root through
# the symlink and served the new directory's files. Not against the fake.
if [ "$MOAT" = "${MOAT%fake-moat}" ]; then
	D=$T_TMP/ren
	mkdir -p "$D" && chmod 755 "$D"
	out=$(moat run --user 0:0 --bind "$D:/data:rw" -- $PY -c '
import os, ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def t(f):
    try: return repr(f())
    except OSError as e: return errno.errorcode[e.errno]
os.makedirs("/data/s"); os.chmod("/data", 0o777)
open("/data/s/f", "w").write("orig")
os.makedirs("/m", exist_ok=True)
libc.mount(b"/data/s", b"/m", None, 4096, None)
libc.mount(None, b"/m", None, 4096 | 32 | 1, None)
pid = os.fork()
if pid == 0:
    os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
    os.rename("/data/s", "/data/s2"); os.symlink("/", "/data/s")
    a = t(lambda: "etc" in os.listdir("/m"))
    os.unlink("/data/s"); os.mkdir("/data/s"); open("/data/s/f", "w").write("attacker")
    b = t(lambda: open("/m/f").read())
    print(a, b, flush=True); os._exit(0)
os.waitpid(pid, 0)
os.rename("/data/s", "/data/s3"); os.rename("/data/s2", "/data/s")
print(t(lambda: open("/m/f").read()))' </dev/null 2>&1)
	expect_eq bind_subdir_follows_no_replacement "$(echo $out)" "ENOENT ENOENT 'orig'"
fi

# Two binds of one host directory, rw and ro (and a ro bind of a
# subdirectory of an rw bind): a directory fd (O_RDONLY or O_PATH) or a cwd
# (chdir, fchdir) taken through the read-only one stays on it, however the
# same directory is opened through the writable one after: creating,
# removing, renaming, chmod and utimensat relative to it are EROFS, and
# /proc/self/fd/N and getcwd show the read-only path. Before red team 36
# the inode map named a held directory by the last path recorded for its
# inode (the rw one) and every write through the ro fd went to the host.
# ro_first: the ro bind before the rw one, and the inode map made to forget
# the fd (6300 other directories opened): it is named again in its own
# mount, not the rw one. As guest root and as a user (the files are
# everyone's: EROFS is the mount's answer, not a permission's).
A=$T_TMP/alias_ro
alias_tree() {
	rm -rf "$A"; mkdir -p "$A/d" "$A/sub/e"; echo f >"$A/d/f"; echo f >"$A/sub/e/f"
	chmod -R a+rwX "$A"
}
ALIAS_PY='
import errno, os, sys
ro, rw, forget = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
res = []
def tr(name, fn):
    try:
        fn(); res.append(name + ":ok")
    except OSError as e:
        res.append(name + ":" + errno.errorcode[e.errno])
def writes(fd, tag):
    tr(tag + "creat", lambda: os.close(os.open("new", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)))
    tr(tag + "mkdir", lambda: os.mkdir("nd", dir_fd=fd))
    tr(tag + "unlink", lambda: os.unlink("f", dir_fd=fd))
    tr(tag + "rename", lambda: os.rename("f", "g", src_dir_fd=fd, dst_dir_fd=fd))
    tr(tag + "chmod", lambda: os.chmod("f", 0o600, dir_fd=fd))
    tr(tag + "utime", lambda: os.utime("f", (1, 1), dir_fd=fd))
fd = os.open(ro, os.O_RDONLY | os.O_DIRECTORY)
fp = os.open(ro, os.O_PATH | os.O_DIRECTORY)
if forget:
    os.makedirs("/tmp/many", exist_ok=True)
    for i in range(6300):
        p = "/tmp/many/%d" % i
        os.mkdir(p); os.close(os.open(p, os.O_RDONLY | os.O_DIRECTORY))
w = os.open(rw, os.O_RDONLY | os.O_DIRECTORY)   # the same inode, last seen rw
writes(fd, "fd_"); writes(fp, "opath_")
res.append("link=" + os.readlink("/proc/self/fd/%d" % fd))
os.fchdir(fd); os.close(os.open(rw, os.O_RDONLY | os.O_DIRECTORY))
res.append("fchdir_cwd=" + os.getcwd()); writes(None, "fchdir_")
os.chdir("/"); os.chdir(ro); os.close(os.open(rw, os.O_RDONLY | os.O_DIRECTORY))
res.append("chdir_cwd=" + os.getcwd()); writes(None, "chdir_")
tr("rw_creat", lambda: os.close(os.open("made", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=w)))
if forget and open("/proc/1/comm").read().strip() != "moat-init":
    # (against fake-moat: the host /tmp; a sandbox'"'"'s goes with it, and
    # 6300 removals took a second of the case)
    __import__("shutil").rmtree("/tmp/many", ignore_errors=True)
print(" ".join(res))'
def_writes() { local t=$1; echo "${t}creat:EROFS ${t}mkdir:EROFS ${t}unlink:EROFS ${t}rename:EROFS ${t}chmod:EROFS ${t}utime:EROFS"; }
alias_want() {
	echo "$(def_writes fd_) $(def_writes opath_) link=$1 fchdir_cwd=$1 $(def_writes fchdir_)" \
		"chdir_cwd=$1 $(def_writes chdir_) rw_creat:ok"
}
for u in root user; do
	uo=(--user 0:0); [ $u = user ] && uo=(--user 1000:1000)
	for c in same ro_first subdir; do
		alias_tree
		case $c in
		same) b=(--bind "$A:/w1:rw" --bind "$A:/w2:ro"); ro=/w2/d; rw=/w1/d; forget=0 ;;
		ro_first) b=(--bind "$A:/w2:ro" --bind "$A:/w1:rw"); ro=/w2/d; rw=/w1/d; forget=1 ;;
		subdir) b=(--bind "$A:/w1:rw" --bind "$A/sub:/w2:ro"); ro=/w2/e; rw=/w1/sub/e; forget=0 ;;
		esac
		out=$(moat run "${uo[@]}" "${b[@]}" -- "$PY" -c "$ALIAS_PY" "$ro" "$rw" "$forget" </dev/null 2>&1)
		tree=". ./d ./d/f ./d/made ./sub ./sub/e ./sub/e/f "
		[ $c = subdir ] && tree=". ./d ./d/f ./sub ./sub/e ./sub/e/f ./sub/e/made "
		expect_eq "alias_ro_dirfd_${c}_$u" "$(echo $out)|$(cd "$A" && find . | sort | tr '\n' ' ')" \
			"$(echo $(alias_want "$ro"))|$tree"
	done
done

# The sandbox's mounts are locked, as mounts a container inherits are: a
# guest's bind (recursive or not) of a directory with one of them beneath
# is EINVAL (Linux's has_locked_children), a bind of one without still
# works. Before red-team round 24 the new mount showed the source's export
# bare: `--bind D:/w:rw --bind D/.git:/w/.git:ro --tmpfs /w/secrets`, root
# bound /w at /y (or --rbind) and wrote D/.git/HEAD through /y/.git, read
# D/secrets/key through /y/secrets. Rootless too (--user 0). Not against
# the fake (it would mount on the host).
if [ "$MOAT" = "${MOAT%fake-moat}" ]; then
	D=$T_TMP/locked
	mkdir -p "$D/.git" "$D/secrets" "$D/sub"
	echo HEAD >"$D/.git/HEAD"; echo pw >"$D/secrets/key"; echo s >"$D/sub/f"
	chmod -R a+rwX "$D"
	out=$(moat run --user 0:0 --bind "$D:/w:rw" --bind "$D/.git:/w/.git:ro" --tmpfs /w/secrets -- /bin/sh -c '
mkdir -p /tmp/y /tmp/z /tmp/s
mount --bind /w /tmp/y 2>/dev/null && echo bound
mount --rbind /w /tmp/z 2>/dev/null && echo rbound
mount --bind / /tmp/z 2>/dev/null && echo root-bound
for d in /tmp/y /tmp/z /tmp/z/w; do cat $d/secrets/key 2>/dev/null; { echo x >>$d/.git/HEAD; } 2>/dev/null; done
mount --bind /w/sub /tmp/s && cat /tmp/s/f' </dev/null 2>&1)
	expect_eq bind_shows_nothing_mounts_cover "$(echo $out)|$(cat "$D/.git/HEAD")" "s|HEAD"
fi

finish
