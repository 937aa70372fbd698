#!/bin/bash
# tests/integration/fs_semantics.sh: file semantics real programs rely on, in
# each kind of writable mount (rw bind, cow bind, the --overlay root), compared
# with the same commands run natively: tar -xf of a tree with directories,
# modes and symlinks (glibc restores a directory's mode through an O_PATH fd
# and /proc/self/fd/N); a directory fd and the cwd that follow a rename;
# mv across mounts (EXDEV, which coreutils turns into a copy); EROFS in a
# read-only bind.
. "$(dirname "$0")/lib.sh"

src=$T_TMP/src
mkdir -p "$src/a/b/c" "$T_TMP/rw" "$T_TMP/cow" "$T_TMP/ro"
echo one >"$src/a/b/c/f"
echo two >"$src/a/g"
chmod 604 "$src/a/b/c/f"
chmod 711 "$src/a/b/c"
chmod 750 "$src/a/b"
chmod 2755 "$src/a" 2>/dev/null || chmod 755 "$src/a"
ln -s b/c/f "$src/a/l"
ln -s /nowhere "$src/a/dangling"
tar -cf "$T_TMP/t.tar" -C "$src" a
chmod 777 "$T_TMP/rw" "$T_TMP/cow"
chmod 644 "$T_TMP/t.tar"
tree() { (cd "$1" && find . -mindepth 1 -printf '%p %y %m %l\n' | sort); }
mkdir "$T_TMP/native" && tar -xf "$T_TMP/t.tar" -C "$T_TMP/native"
want=$(tree "$T_TMP/native")
listing='cd "$1" && find . -mindepth 1 -printf "%p %y %m %l\n" | sort'

# (in a rw bind a set-id bit is virtual: the guest sees it, the host file
# never has it)
out=$(moat run --bind "$T_TMP/t.tar:/t.tar:ro" --bind "$T_TMP/rw:/w:rw" -- \
	/bin/sh -c 'tar -xf /t.tar -C /w && echo tar-ok && sh -c "$0" _ /w' "$listing" </dev/null 2>&1)
expect_eq tar_rw_tree "$out" "tar-ok
$want"
expect_eq tar_rw_host_tree "$(tree "$T_TMP/rw" | sed 's/^\(\.\/a d \)2755/\1755/')" \
	"$(echo "$want" | sed 's/^\(\.\/a d \)2755/\1755/')"

out=$(moat run --bind "$T_TMP/t.tar:/t.tar:ro" --bind "$T_TMP/cow:/w:cow" -- \
	/bin/sh -c 'tar -xf /t.tar -C /w && echo tar-ok && sh -c "$0" _ /w' "$listing" </dev/null 2>&1)
expect_eq tar_cow_tree "$out" "tar-ok
$want"
[ -z "$(ls -A "$T_TMP/cow")" ] && ok tar_cow_host_untouched || fail tar_cow_host_untouched "$(ls -A "$T_TMP/cow")"

out=$(moat run --overlay memory --bind "$T_TMP/t.tar:/t.tar:ro" -- \
	/bin/sh -c 'mkdir -p /opt/fs_sem && tar -xf /t.tar -C /opt/fs_sem && echo tar-ok && sh -c "$0" _ /opt/fs_sem' \
	"$listing" </dev/null 2>&1)
expect_eq tar_overlay_tree "$out" "tar-ok
$want"
[ ! -e /opt/fs_sem ] && ok tar_overlay_root_untouched || fail tar_overlay_root_untouched "/opt/fs_sem exists"

# as_natively CASE DIR: the Python $prog (its argument a directory) run
# natively in a new $T_TMP/DIR-native, its output in $want; then in a bind
# of $T_TMP/DIRrw and of $T_TMP/DIRcow (CASE_rw, CASE_cow): the same output.
as_natively() {
	local kind out
	mkdir -p "$T_TMP/$2-native"
	want=$($PY -c "$prog" "$T_TMP/$2-native")
	for kind in rw cow; do
		mkdir -p "$T_TMP/$2$kind" && chmod 777 "$T_TMP/$2$kind"
		out=$(moat run --bind "$T_TMP/$2$kind:/w:$kind" -- $PY -c "$prog" /w </dev/null 2>&1)
		expect_eq "$1_$kind" "$out" "$want"
	done
}

# A held directory and the cwd follow a rename (python: os.open + os.rename).
prog='
import os, sys
w = sys.argv[1]
os.makedirs(w + "/d", exist_ok=True)
open(w + "/d/x", "w").write("old")
fd = os.open(w + "/d", os.O_RDONLY | os.O_DIRECTORY)
os.chdir(w + "/d")
os.rename(w + "/d", w + "/e")
os.mkdir(w + "/d")
open(w + "/d/x", "w").write("impostor")
print(open(os.open("x", os.O_RDONLY, dir_fd=fd)).read(), open("x").read(), os.getcwd() == w + "/e")
os.unlink(w + "/d/x")
os.rmdir(w + "/d")
os.rename(w + "/e", w + "/gone")
os.unlink(w + "/gone/x")
os.rmdir(w + "/gone")
try:
    os.open("y", os.O_CREAT | os.O_WRONLY, dir_fd=fd)
except OSError as e:
    print(e.errno == 2)
'
as_natively dirfd_follows_rename m
out=$(moat run --overlay memory -- /bin/sh -c 'mkdir -p /opt/fs_sem2 && exec "$0" -c "$1" /opt/fs_sem2' \
	$PY "$prog" </dev/null 2>&1)
expect_eq dirfd_follows_rename_overlay "$out" "$want"

# mv across mounts: rename(2) is EXDEV, mv copies; a read-only bind is EROFS.
out=$(moat run --bind "$T_TMP/mrw:/w:rw" --bind "$T_TMP/ro:/r:ro" -- /bin/sh -c '
	echo data >/w/f
	'"$PY"' -c "import os
try: os.rename(\"/w/f\", \"/tmp/f\")
except OSError as e: print(e.errno)
try: os.open(\"/r/x\", os.O_CREAT | os.O_WRONLY)
except OSError as e: print(e.errno)"
	mv /w/f /tmp/f && cat /tmp/f && test ! -e /w/f && echo moved' </dev/null 2>&1)
expect_eq exdev_erofs_mv "$out" "18
30
data
moved"

# statfs of the overlay: what the lower layer holds is used, what the upper
# layer can take is free (overlayfs alone reports an empty scratch: used 0,
# and Python's shutil.disk_usage test fails)
out=$(moat run --overlay memory -- "$PY" -c '
import os, shutil
u = shutil.disk_usage("/usr")
print(u.used > 0, u.free > 0, u.total >= u.used + u.free - 1)' </dev/null 2>&1)
SANITY=1 expect_eq overlay_statfs_used "$out" "True True True"

# --user 1000 in a rw bind: what the program makes is its own (the gofer
# makes every host file as itself; the creator's ids are virtual), so it
# can append to it, chmod it and fill its own 0700 directory; the host
# files keep the caller's owner. Before: EACCES on the append.
mkdir -p "$T_TMP/uw" && chmod 777 "$T_TMP/uw"
out=$(moat run --user 1000:1000 --bind "$T_TMP/uw:/w:rw" -- /bin/sh -c 'cd /w && echo a >f && echo b >>f &&
chmod 600 f && mkdir -m 700 d && echo c >d/x && cat f d/x && stat -c "%u:%g %a" f d' </dev/null 2>&1)
expect_eq user_rw_bind_own_files "$out" "a
b
c
1000:1000 600
1000:1000 700"
expect_eq user_rw_bind_host_owner "$(stat -c %u "$T_TMP/uw/f" 2>&1)" "$(id -u)"

# What the program makes is its own in every writable mount, as root (its DAC
# override on its own 0000 file and 0444 directory, none once it drops ids
# or capabilities: tests/syscalls/owner_root.c) or as another user (its own
# 0000 file refused): the same cases as natively in a cow bind, the overlay
# root and a tmpfs (the rw bind: tests/syscalls/run.sh). Before: guest root
# had no override on what it made in the cow bind and the overlay.
if [ -x "$SYSCALL_BIN/owner_root" ]; then
	mkdir -p "$T_TMP/own_native" "$T_TMP/own_cow" && chmod 755 "$T_TMP/own_native" "$T_TMP/own_cow"
	want=$("$SYSCALL_BIN/owner_root" "$T_TMP/own_native" </dev/null 2>&1; echo "exit $?")
	out=$(moat run --bind "$SYSCALL_BIN:/t:ro" --bind "$T_TMP/own_cow:/c:cow" -- /t/owner_root /c </dev/null 2>&1; echo "exit $?")
	expect_eq owner_root_cow "$out" "$want"
	out=$(moat run --overlay memory --bind "$SYSCALL_BIN:/t:ro" -- /bin/sh -c 'mkdir -p /opt/own && exec /t/owner_root /opt/own' \
		</dev/null 2>&1; echo "exit $?")
	expect_eq owner_root_overlay "$out" "$want"
	out=$(moat run --tmpfs /s --bind "$SYSCALL_BIN:/t:ro" -- /t/owner_root /s </dev/null 2>&1; echo "exit $?")
	expect_eq owner_root_tmpfs "$out" "$want"
else
	skip owner_root_mounts "no SYSCALL_BIN/owner_root"
fi

# Guest root (--user 0:0) in a rw bind, root-run and rootless (where the
# caller's ids are root's inside, as in unshare -r: the bind is root's, and
# root acts as the caller on host files): it fills
# its own 0444 directory and reads its own 0000 file; the host's own 0000
# file stays unreadable (no override on what the sandbox did not make), and
# once it drops to nobody it is refused all three. Before: rootless, guest
# root could not even create in the caller's own directory (EACCES).
mkdir -p "$T_TMP/r0" && chmod 755 "$T_TMP/r0" && : >"$T_TMP/r0/pre" && chmod 000 "$T_TMP/r0/pre"
out=$(moat run --user 0:0 --bind "$T_TMP/r0:/w:rw" -- "$PY" -c '
import os
os.chdir("/w")
os.mkdir("d", 0o444); os.mkdir("d/sub")
with open("f", "w") as f: f.write("x")
os.chmod("f", 0)
r = [open("f").read()]
try:
    open("pre").read(); r.append("read-pre")
except PermissionError: r.append("EACCES")
pid = os.fork()
if pid == 0:
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    for fn in (lambda: open("f"), lambda: os.mkdir("d/x"), lambda: os.mkdir("y")):
        try:
            fn(); print("allowed", flush=True)
        except PermissionError: print("EACCES", flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print(*r, os.stat("/w").st_uid, os.stat("f").st_uid)' </dev/null 2>&1)
expect_eq guest_root_rw_bind "$out" "EACCES
EACCES
EACCES
x EACCES 0 0"

# A directory's link count by "x/.", "x/y/.." and a cwd's "." after the
# guest's own mkdir/rmdir in it: the walk's last "." or ".." is stat'ed fresh
# as a final name is (they said the cached count from before: find -printf %n
# and rsync's view of a tree in a bind; realprogs 34)
prog='
import os, sys
os.chdir(sys.argv[1]); os.mkdir("x"); os.stat("x/.")
n = lambda: [os.stat(p).st_nlink for p in ("x", "x/.", "x/y/..", "x/z/..") if os.path.exists(p)]
r = [n()]; os.mkdir("x/y"); r.append(n()); os.mkdir("x/z"); r.append(n())
os.chdir("x"); r.append(os.stat(".").st_nlink); os.rmdir("z"); r.append(os.stat(".").st_nlink)
print(r)'
as_natively dir_nlink_dot_after_mkdir n

finish
