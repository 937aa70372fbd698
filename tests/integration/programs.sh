#!/bin/bash
# Real programs under moat; where it makes sense, output equal to native.
. "$(dirname "$0")/lib.sh"

# same NAME CMD...: stdout and exit status of CMD under moat equal native's.
same() {
	local name=$1; shift
	local n m nrc mrc
	n=$(cd / && env -i PATH=/usr/bin:/bin HOME="$HOST_HOME" LANG=C "$@" </dev/null 2>/dev/null); nrc=$?
	m=$(moat run --env LANG=C -- "$@" </dev/null 2>"$T_TMP/err"); mrc=$?
	if [ "$nrc" = "$mrc" ] && [ "$n" == "$m" ]; then ok "$name"
	else fail "$name" "exit $mrc (native $nrc); moat [$(printf %s "$m" | head -c 300)] native [$(printf %s "$n" | head -c 300)] stderr [$(head -c 300 "$T_TMP/err")]"; fi
}

same sh_echo_ls_os_release /bin/sh -c 'echo hello; ls /etc | head -3; head -1 /etc/os-release'
same pipeline_sort /bin/sh -c 'seq 1 100000 | sort -r | head -1'
same find_usr_include /bin/sh -c "find /usr/include -name '*.h' | wc -l"
same coreutils /bin/sh -c 'ls -la /usr/bin/env | cut -c1-10; wc -l < /etc/passwd; md5sum /etc/os-release; stat -c %s /etc/os-release; basename /a/b/c; date -d @0 -u +%Y'
same sha256_usr_bin /bin/sh -c 'sha256sum /usr/bin/env /bin/sh | cut -d" " -f1'
same tar_list /bin/sh -c 'tar -cf - -C /usr/include stdio.h stdlib.h | tar -tf -'
same git_version git --version
if command -v busybox >/dev/null; then
	same busybox_sh busybox sh -c 'echo $((6*7)); busybox ls /etc/os-release; busybox wc -c /etc/os-release'
else skip busybox_sh "busybox not installed"; fi

# python3: json, sqlite3, hashlib, subprocess with a child.
out=$(mrun "$PY" -c '
import json, sqlite3, hashlib, subprocess
db = sqlite3.connect(":memory:"); db.execute("create table t(x)"); db.execute("insert into t values (41)")
v = db.execute("select x+1 from t").fetchone()[0]
h = hashlib.sha256(b"moat").hexdigest()[:8]
c = subprocess.run(["/bin/sh", "-c", "echo child"], capture_output=True, text=True).stdout.strip()
print(json.dumps({"v": v, "h": h, "c": c}, sort_keys=True))' 2>"$T_TMP/err")
want=$("$PY" -c 'import hashlib,json; print(json.dumps({"v": 42, "h": hashlib.sha256(b"moat").hexdigest()[:8], "c": "child"}, sort_keys=True))')
expect_eq python3_stdlib_and_child "$out" "$want"

# sqlite3 CLI in a rw bind.
mkdir -p "$T_TMP/sq" && chmod 777 "$T_TMP/sq"
if command -v sqlite3 >/dev/null; then
	out=$(moat run --bind "$T_TMP/sq:/work:rw" --workdir /work -- sqlite3 db.sqlite \
		'create table t(a); insert into t values (1),(2),(3); select sum(a) from t;' </dev/null 2>"$T_TMP/err")
	expect_eq sqlite3_cli "$out" 6
	check sqlite3_file_on_host test -s "$T_TMP/sq/db.sqlite"
else skip sqlite3_cli "sqlite3 not installed"; fi

# Locks inside the sandbox (the sentry's lock table): 4 concurrent sqlite3
# writers (POSIX locks, busy-waiting on SQLITE_BUSY) lose no row; flock(1)
# serialises a read-modify-write counter; python's fcntl.lockf conflicts
# between two processes.
if command -v sqlite3 >/dev/null; then
	out=$(moat run --bind "$T_TMP/sq:/work:rw" --workdir /work -- /bin/sh -c '
		sqlite3 w.sqlite "create table t(w, i)" || exit 1
		for w in 1 2 3 4; do
			( i=0; while [ $i -lt 25 ]; do
				sqlite3 -cmd ".timeout 20000" w.sqlite "insert into t values ($w, $i)" || exit 1
				i=$((i + 1)); done ) &
		done
		wait
		sqlite3 w.sqlite "select count(*), count(distinct w) from t"' </dev/null 2>"$T_TMP/err")
	expect_eq sqlite3_concurrent_writers "$out" "100|4"
else skip sqlite3_concurrent_writers "sqlite3 not installed"; fi
out=$(moat run --bind "$T_TMP/sq:/work:rw" --workdir /work -- /bin/sh -c '
	echo 0 > n
	for w in 1 2 3 4; do
		( for i in 1 2 3 4 5 6 7 8 9 10; do
			flock lk sh -c "v=\$(cat n); echo \$((v + 1)) > n"; done ) &
	done
	wait; cat n; flock -n lk true && echo free' </dev/null 2>"$T_TMP/err")
expect_eq flock1_counter "$(echo $out)" "40 free"
out=$(mrun "$PY" -c '
import fcntl, os
f = open("/tmp/pl", "w")
fcntl.lockf(f, fcntl.LOCK_EX)
if os.fork() == 0:
    g = open("/tmp/pl", "w")
    try:
        fcntl.lockf(g, fcntl.LOCK_EX | fcntl.LOCK_NB); os._exit(1)
    except OSError:
        os._exit(0)
_, st = os.wait()
print("conflict" if os.WEXITSTATUS(st) == 0 else "no conflict")' 2>"$T_TMP/err")
expect_eq python_lockf_conflict "$out" conflict
# A flock holder that exits frees its lock for a waiter, on a file whose
# inode number is the loader's (2: the first file of a fresh tmpfs, as a
# lock file made first in /tmp): the holder scan took the loader's mapping
# in every guest process for a reference to the file and the waiter hung
# for good (realprogs 34). A parent blocked in flock cannot reap: the holder
# is a zombie meanwhile.
out=$(moat run --tmpfs /lk --timeout 10 -- "$PY" -c '
import fcntl, os, time
p = "/lk/x"
r, w = os.pipe()
if os.fork() == 0:
    f = open(p, "w"); fcntl.flock(f, fcntl.LOCK_EX); os.write(w, b"1"); time.sleep(0.1); os._exit(0)
os.read(r, 1)
g = open(p); fcntl.flock(g, fcntl.LOCK_SH); print("got", os.stat(p).st_ino)' </dev/null 2>"$T_TMP/err")
expect_eq flock_holder_exit_frees_ino2 "$out" "got 2"

# git init/add/commit in a rw bind; the host sees the repository.
mkdir -p "$T_TMP/repo" && chmod 777 "$T_TMP/repo"
moat run --bind "$T_TMP/repo:/work:rw" --workdir /work -- /bin/sh -c '
	git init -q . && git config user.email t@example.com && git config user.name t &&
	for i in 1 2 3 4 5; do echo "$i" > "f$i"; done && mkdir -p sub && echo x > sub/y &&
	git add . && git commit -qm first && git log --oneline | wc -l && git status --porcelain | wc -l' \
	>"$T_TMP/git.out" 2>"$T_TMP/err" </dev/null
expect_eq git_init_add_commit "$(tr '\n' ' ' <"$T_TMP/git.out")" "1 0 "
expect_eq git_repo_on_host "$(git -C "$T_TMP/repo" log --format=%s 2>/dev/null)" first

# gcc: compile and run hello.c in a rw bind.
mkdir -p "$T_TMP/cc" && chmod 777 "$T_TMP/cc"
printf '#include <stdio.h>\nint main(void) { printf("hello from %%s\\n", "moat"); return 3; }\n' >"$T_TMP/cc/hello.c"
chmod 666 "$T_TMP/cc/hello.c"
out=$(moat run --bind "$T_TMP/cc:/work:rw" --workdir /work -- /bin/sh -c 'gcc -O2 -o hello hello.c && ./hello' </dev/null 2>"$T_TMP/err"); rc=$?
expect_eq gcc_hello "$out/$rc" "hello from moat/3"
check gcc_binary_on_host test -x "$T_TMP/cc/hello"

# make with a two-step Makefile.
mkdir -p "$T_TMP/mk" && chmod 777 "$T_TMP/mk"
printf 'all: b\nb: a\n\tcat a a > b\na:\n\techo made > a\n' >"$T_TMP/mk/Makefile"
out=$(moat run --bind "$T_TMP/mk:/work:rw" --workdir /work -- /bin/sh -c 'make -s && cat b' </dev/null 2>"$T_TMP/err")
expect_eq make "$(echo $out)" "made made"

# Writes to the private /tmp and home work, and do not reach the host.
out=$(mrun /bin/sh -c "echo x > /tmp/$T_MARK && cat /tmp/$T_MARK && echo y > \"\$HOME/$T_MARK\" && cat \"\$HOME/$T_MARK\"" 2>"$T_TMP/err")
expect_eq private_tmp_and_home_writable "$(echo $out)" "x y"
if [ -e "/tmp/$T_MARK" ] || [ -e "$HOST_HOME/$T_MARK" ]; then
	fail private_tmp_not_on_host "guest file appeared on the host"; rm -f "/tmp/$T_MARK" "$HOST_HOME/$T_MARK"
else ok private_tmp_not_on_host; fi
out=$(mrun /bin/sh -c 'ls -A /tmp | wc -l; ls -A "$HOME" | wc -l' 2>/dev/null)
expect_eq tmp_and_home_start_empty "$(echo $out)" "0 0"

# The scratch places of every Linux system (FHS) exist, as root and
# rootless: mktemp -p /var/tmp, a daemon's /run/NAME (screen's /run/screen),
# /var/run -> /run; private and empty, and none of the host's /var shows
# (before: no /var, no /run; mktemp -p /var/tmp failed, rootless for good).
out=$(mrun /bin/sh -c "ls -A /var/tmp | wc -l; ls -A /run | wc -l; f=\$(mktemp -p /var/tmp) && echo x > \"\$f\" && cat \"\$f\" &&
	echo y > /var/tmp/$T_MARK && mkdir /run/$T_MARK && stat -c %a /var/tmp && readlink /var/run && ls -A /var" 2>"$T_TMP/err")
expect_eq fhs_var_tmp_and_run "$(echo $out)" "0 0 x 1777 /run run tmp"
if [ -e "/var/tmp/$T_MARK" ] || [ -e "/run/$T_MARK" ]; then
	fail fhs_scratch_not_on_host "guest file appeared on the host"; rm -rf "/var/tmp/$T_MARK" "/run/$T_MARK"
else ok fhs_scratch_not_on_host; fi

# The mount table is one tree: every mountinfo line's parent is a listed
# mount (before: /sys/fs/cgroup's parent was 1, no mount's id, and findmnt
# showed it as a second root above /).
out=$(mrun /bin/sh -c 'awk "{ id[\$1] = 1; p[NR] = \$2 } END { for (i in p) if (!(p[i] in id)) n++; print n + 0 }" /proc/self/mountinfo
	findmnt -rn -o TARGET | head -1' 2>&1)
expect_eq mountinfo_one_tree "$(echo $out)" "0 /"


# Network inside the guest's own network namespace: python sockets over
# loopback, NETLINK_ROUTE (ip addr), curl to a loopback HTTP server.
out=$(mrun /bin/sh -c '
ip -o addr show lo | grep -c "inet 127.0.0.1"
python3 -c "import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); c=socket.create_connection(s.getsockname()); a,_=s.accept(); c.sendall(b\"ping\"); print(a.recv(4).decode())"
python3 -m http.server --bind 127.0.0.1 8731 --directory /etc >/dev/null 2>&1 &
for i in $(seq 1 40); do code=$(curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:8731/os-release) && break; sleep 0.25; done
echo "$code"; kill $!' 2>"$T_TMP/err")
expect_eq net_socket_netlink_curl "$(echo $out)" "1 ping 200"
finish
