#!/bin/bash
# NEGATIVE tests, files and identity: the guest sees none of the host's secrets,
# fails the way Linux would, and never gets the canary content.
. "$(dirname "$0")/lib.sh"

# Canaries on the host, removed at exit.
CANARY="secret-$T_MARK"
canary_files=()
plant() { # plant PATH: write the canary to PATH if we can
	if (umask 077; printf '%s\n' "$CANARY" >"$1") 2>/dev/null; then canary_files+=("$1"); at_exit "rm -f '$1'"; fi
}
plant "$HOST_HOME/moat-canary-$T_MARK"
[ "$(id -u)" = 0 ] && plant "/root/moat-canary-$T_MARK"
[ "$(id -u)" = 0 ] && { mkdir -p /var/log && plant "/var/log/moat-canary-$T_MARK"; }
[ "$(id -u)" = 0 ] && [ -d /srv ] && plant "/srv/moat-canary-$T_MARK"
[ "$(id -u)" = 0 ] && [ -d /mnt ] && plant "/mnt/moat-canary-$T_MARK"

# ENOENT NAME PATH: reading PATH in the guest fails with ENOENT and prints no canary.
# A PATH the host does not have (or the caller cannot read) proves nothing: skipped.
enoent() {
	local out
	[ -r "$2" ] || { skip "$1" "$2 not readable on this host"; return; }
	out=$(mrun "$PY" -c '
import errno, os, sys
p = sys.argv[1]
try:
    data = open(p, "rb").read()
    print("READ", data.decode(errors="replace"))
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
' "$2" 2>&1)
	case $out in *"$CANARY"*) fail "$1" "CANARY LEAKED from $2"; return ;; esac
	expect_eq "$1" "$out" ENOENT
}
enoent read_root_canary "/root/moat-canary-$T_MARK"
enoent read_root_dir_file /root/.bashrc
enoent read_home_canary "$HOST_HOME/moat-canary-$T_MARK"
enoent read_other_home /home/cloudsdk/.bashrc
enoent read_etc_shadow /etc/shadow
enoent read_etc_gshadow /etc/gshadow
enoent read_sudoers /etc/sudoers
for k in /etc/ssh/ssh_host_rsa_key /etc/ssh/ssh_host_ecdsa_key /etc/ssh/ssh_host_ed25519_key; do
	enoent "read_$(basename "$k")" "$k"
done
enoent read_docker_sock /run/docker.sock
enoent read_var_run_docker_sock /var/run/docker.sock
enoent read_var_log_canary "/var/log/moat-canary-$T_MARK"
enoent read_var_log_syslog /var/log/syslog
enoent read_srv_canary "/srv/moat-canary-$T_MARK"
enoent read_mnt_canary "/mnt/moat-canary-$T_MARK"

# Directories that must be absent or empty (/var holds the sandbox's own
# empty scratch places only: /var/tmp and the /var/run symlink to /run).
out=$(mrun /bin/sh -c 'for d in /root /var /var/tmp /run /srv /mnt /home/cloudsdk /media; do [ -e "$d" ] && ls -A "$d" | sed "s|^|$d/|"; done; ls /etc/ssh 2>/dev/null | grep -c key' 2>/dev/null)
expect_eq hidden_dirs_empty "$(echo $out)" "/var/run /var/tmp 0"
# (bounded: the directories the canaries were planted in, so a run without
# isolation finds them at once instead of timing out on a whole-tree grep)
cdirs=$(for f in "${canary_files[@]}"; do dirname "$f"; done | sort -u | tr '\n' ' ')
out=$(mrun /bin/sh -c "find $cdirs -maxdepth 1 -type f -name 'moat-canary-*' -exec grep -l '$CANARY' {} + 2>/dev/null | head -3" 2>/dev/null)
expect_eq canary_nowhere_in_view "$out" ""
out=$(mrun /bin/sh -c 'ls /etc/shadow /etc/gshadow 2>&1 | grep -c "No such file"' 2>/dev/null)
expect_eq shadow_not_listed "$out" 2
out=$(mrun /bin/sh -c 'ls -a /etc | grep -cxE "shadow|gshadow|sudoers|shadow-|gshadow-"' 2>/dev/null)
expect_eq etc_listing_hides_secrets "$out" 0
# ---- red team 30: an /etc/ssh host key the host makes after the sandbox
#      started (sshd-keygen, cloud-init at first boot) was the guest's: the
#      hidden list was what a readdir of /etc/ssh found at start. Now
#      OpenSSH's fixed key names are hidden whether they exist or not. The
#      host's /etc is never written: moat runs in a private mount namespace
#      whose /etc is a copy (in a 0700 directory of this test's), and the key
#      is made in the copy while the guest waits; the default overlay's /etc
#      and --overlay none's read-only host /etc ----
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	FE=$T_TMP/etcview
	mkdir -m 0700 "$FE" && cp -a /etc "$FE/etc" && mkdir -p "$FE/etc/ssh"
	KEY=
	for k in ed25519 ecdsa rsa dsa; do
		[ -e "$FE/etc/ssh/ssh_host_${k}_key" ] || { KEY=ssh_host_${k}_key; break; }
	done
	W=$T_TMP/keysync
	for ov in overlay none; do
		mkdir -p "$W" && chmod 0777 "$W" && rm -f "$W"/* "$FE/etc/ssh/$KEY"
		ovarg=(); [ $ov = none ] && ovarg=(--overlay none)
		timeout -k 5 60 unshare -m --propagation private /bin/sh -c 'mount --bind "$1" /etc && shift && exec "$@"' \
			sh "$FE/etc" "$MOAT" run "${ovarg[@]}" --bind "$W:/w:rw,shared" -- /bin/sh -c '
ls /etc/ssh >/dev/null; : >$3/up; i=0
while [ ! -e $3/go ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
if [ -e /etc/ssh/$1 ]; then echo seen; else echo absent; fi
cat /etc/ssh/$1 2>/dev/null | grep -c "$2"; ls -a /etc/ssh | grep -cx "$1"' sh "$KEY" "$CANARY" /w </dev/null >"$W.out" 2>&1 &
		kpid=$!
		for _ in $(seq 200); do [ -e "$W/up" ] && break; sleep 0.05; done
		# (0644, not a real key's 0600: the content is the guest's to read
		# unless the name is hidden, whatever its ids)
		(umask 022; printf '%s\n' "$CANARY" >"$FE/etc/ssh/$KEY")
		: >"$W/go"
		wait $kpid
		out=$(cat "$W.out")
		case $out in *"$CANARY"*) fail "host_key_made_later_hidden_$ov" "CANARY LEAKED: $out" ;;
		*) expect_eq "host_key_made_later_hidden_$ov" "$(echo $out)" "absent 0 0" ;; esac
	done
else
	skip host_key_made_later_hidden "not root: the private mount namespace over /etc needs it"
fi
# ---- the host's fingerprints in /etc: /etc/fstab's and /etc/crypttab's
#      UUID= lines name the host's disks, and the host keys' public halves
#      (/etc/ssh/ssh_host_*key.pub, *-cert.pub) name the host (one value per
#      machine, the same in every sandbox). Hidden now, as the private halves
#      are (an absent fstab is a normal state: minimal images have none,
#      util-linux reads a missing one as empty). Same private /etc copy as
#      above, files there before the start; both views ----
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	FP=$T_TMP/etcfp
	mkdir -m 0700 "$FP" && cp -a /etc "$FP/etc" && mkdir -p "$FP/etc/ssh"
	(umask 022
	printf 'UUID=%s / ext4 defaults 0 1\n' "$CANARY" >"$FP/etc/fstab"
	printf 'cr UUID=%s none luks\n' "$CANARY" >"$FP/etc/crypttab"
	for k in ssh_host_ed25519_key.pub ssh_host_rsa_key-cert.pub ssh_host_custom_key.pub; do
		printf 'ssh-ed25519 %s root@host\n' "$CANARY" >"$FP/etc/ssh/$k"
	done)
	for ov in overlay none; do
		ovarg=(); [ $ov = none ] && ovarg=(--overlay none)
		out=$(timeout -k 5 60 unshare -m --propagation private /bin/sh -c 'mount --bind "$1" /etc && shift && exec "$@"' \
			sh "$FP/etc" "$MOAT" run "${ovarg[@]}" -- /bin/sh -c '
for f in fstab crypttab ssh/ssh_host_ed25519_key.pub ssh/ssh_host_rsa_key-cert.pub ssh/ssh_host_custom_key.pub; do
	if [ -e /etc/$f ]; then echo "seen:$f"; cat /etc/$f; fi
done
ls -a /etc /etc/ssh | grep -cE "^(fstab|crypttab|ssh_host_.*)$"' </dev/null 2>&1)
		case $out in *"$CANARY"*) fail "etc_host_fingerprints_hidden_$ov" "CANARY LEAKED: $out" ;;
		*) expect_eq "etc_host_fingerprints_hidden_$ov" "$(echo $out)" "0" ;; esac
	done
else
	skip etc_host_fingerprints_hidden "not root: the private mount namespace over /etc needs it"
fi
# An inotify watch of a host directory holding hidden names (--overlay none:
# /etc is the host's own, read-only) would name them in its events, and the
# host's own opens of /etc/shadow (every login, sudo) come to it: refused
# (EACCES). Before red team 15 the watch was made and a host read of
# /etc/shadow arrived as "shadow" IN_OPEN/IN_ACCESS. A root overlay over a
# lower layer with submounts is the host's /etc read-only: refused too. The
# overlay's own /etc (the default) is watched: its hidden names are
# whiteouts of its upper layer (absent names, gofer/setup.c hide_in_upper),
# and the host's reads of the lower /etc/shadow reach the lower inode, never
# the overlay's (inotify_overlay_etc: no event while the host reads it; the
# guest's own change is seen). A directory without hidden names is watched.
inw='import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True); fd = l.inotify_init1(0)
w = l.inotify_add_watch(fd, sys.argv[1].encode(), 0xfff)
print("wd" if w >= 0 else os.strerror(ctypes.get_errno()))'
expect_eq inotify_host_dir_with_hidden_names "$(moat run --overlay none -- "$PY" -c "$inw" /etc </dev/null 2>&1)" "Permission denied"
# (the watch, then 3 s of the host's reads of /etc/shadow and /etc/hosts,
# then the guest's own file: the names its events gave)
inwe='import ctypes, os, select, struct, sys, time
l = ctypes.CDLL(None, use_errno=True); fd = l.inotify_init1(0)
w = l.inotify_add_watch(fd, b"/etc", 0xfff)
print("wd" if w >= 0 else os.strerror(ctypes.get_errno()), flush=True)
names = set()
def drain(secs):
    end = time.time() + secs
    while w >= 0 and time.time() < end:
        if select.select([fd], [], [], 0.1)[0]:
            b = os.read(fd, 65536); i = 0
            while i < len(b):
                ln = struct.unpack_from("iIII", b, i)[3]
                names.add(b[i + 16:i + 16 + ln].rstrip(b"\0").decode()); i += 16 + ln
drain(3)
open("/etc/moat-w", "w").close(); drain(0.5)
print(" ".join(sorted(names)))'
( end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do cat /etc/shadow /etc/hosts >/dev/null 2>&1; sleep 0.05; done ) &
hpid=$!
out=$(mrun "$PY" -c "$inwe" 2>&1)
wait $hpid
expect_eq inotify_overlay_etc "$(echo $out)" "wd moat-w"
SANITY=1 expect_eq inotify_etc_subdir "$(mrun "$PY" -c "$inw" /usr 2>&1)" wd
# dnotify (fcntl F_NOTIFY) is the same watch without names: on the host's
# /etc its DN_ACCESS came for every host read of /etc/shadow (red team 27:
# --overlay none, 399 SIGIOs in 3 s on the loaded VM while the host read
# /etc/shadow; before, granted natively). Refused where inotify is.
dnw='import fcntl, os, signal, sys
signal.signal(signal.SIGIO, signal.SIG_IGN)
d = os.open(sys.argv[1], os.O_RDONLY)
try:
    fcntl.fcntl(d, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MODIFY | fcntl.DN_MULTISHOT)
    print("granted")
except OSError as e:
    print(e.strerror)'
expect_eq dnotify_host_dir_with_hidden_names "$(moat run --overlay none -- "$PY" -c "$dnw" /etc </dev/null 2>&1)" "Permission denied"
# the overlay's /etc: granted (see inotify_overlay_etc), and the host's reads
# of /etc/shadow and /etc/hosts during 3 s bring no signal
dnwe='import fcntl, os, signal, time
n = [0]
signal.signal(signal.SIGIO, lambda *a: n.__setitem__(0, n[0] + 1))
d = os.open("/etc", os.O_RDONLY)
try:
    fcntl.fcntl(d, fcntl.F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MODIFY | fcntl.DN_MULTISHOT)
    print("granted", flush=True)
except OSError as e:
    print(e.strerror)
end = time.time() + 3
while time.time() < end:
    time.sleep(0.1)
print(n[0])'
( end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do cat /etc/shadow /etc/hosts >/dev/null 2>&1; sleep 0.05; done ) &
hpid=$!
out=$(mrun "$PY" -c "$dnwe" 2>&1)
wait $hpid
expect_eq dnotify_overlay_etc "$(echo $out)" "granted 0"
SANITY=1 expect_eq dnotify_etc_subdir "$(mrun "$PY" -c "$dnw" /usr 2>&1)" granted
# A watch of a host file counted the host's own use of it (red team 32):
# the device nodes (the host's null, urandom, tty: a password prompt reads
# /dev/tty a key at a time) whatever the overlay, and with --overlay none
# every system file (/etc/group at each login, `id`, `ls -l`;
# /usr/bin/sudo at each run): IN_OPEN, IN_ACCESS, IN_CLOSE_NOWRITE, and on
# devices IN_MODIFY and IN_CLOSE_WRITE, came for each host open, read and
# write (main: 125 and 221 events in 3 s). Those events are left out of
# watches of host files; a host write to a bind's file still shows.
inhost='import ctypes, os, select, sys, time
l = ctypes.CDLL(None, use_errno=True); fd = l.inotify_init1(0)
for p in sys.argv[2:]:
    if l.inotify_add_watch(fd, p.encode(), int(sys.argv[1], 16)) < 0: print("nowatch", p, os.strerror(ctypes.get_errno()))
n = 0; end = time.time() + 3
while time.time() < end:
    if select.select([fd], [], [], 0.2)[0]: n += len(os.read(fd, 65536)) // 16
print("events", "none" if n == 0 else "some")'
mkdir -p "$T_TMP/hostev"; : >"$T_TMP/hostev/f"
( end=$((SECONDS + 30)); while [ $SECONDS -lt $end ]; do
	cat /dev/null /etc/group >/dev/null; head -c1 /dev/urandom >/dev/null; echo >/dev/null
	echo x >>"$T_TMP/hostev/f"; /usr/bin/id >/dev/null; sleep 0.05
done ) </dev/null >/dev/null 2>&1 &
at_exit "kill $! 2>/dev/null"
expect_eq inotify_host_devices_no_host_activity \
	"$(mrun "$PY" -c "$inhost" 3b /dev/null /dev/urandom /dev/tty /dev 2>&1)" "events none"
expect_eq inotify_overlay_none_no_host_activity \
	"$(moat run --overlay none -- "$PY" -c "$inhost" 3b /etc/group /usr/bin/id /usr/bin </dev/null 2>&1)" "events none"
SANITY=1 expect_eq inotify_bind_host_write_seen \
	"$(moat run --bind "$T_TMP/hostev:/hv:ro" -- "$PY" -c "$inhost" 2 /hv/f </dev/null 2>&1)" "events some"
# dnotify's DN_ACCESS is the same (DN_MODIFY too on the device mount);
# the call runs natively with the guest's argument, so it is refused
expect_eq dnotify_overlay_none_access "$(moat run --overlay none -- "$PY" -c "$dnw" /usr/bin </dev/null 2>&1)" "Permission denied"
expect_eq dnotify_dev "$(mrun "$PY" -c "$dnw" /dev 2>&1)" "Permission denied"
# hidden names that start with a dot (/etc/.pwd.lock) are left out of the
# listing too: main listed it (getdents skipped the hidden check for every
# name starting with '.') while its look-up said ENOENT
if [ -e /etc/.pwd.lock ]; then
	out=$(mrun /bin/sh -c 'ls -a /etc | grep -cxF .pwd.lock' 2>/dev/null)
	expect_eq etc_listing_hides_dot_secrets "$out" 0
else
	skip etc_listing_hides_dot_secrets "/etc/.pwd.lock not on this host"
fi

# ---- hidden names are absent names of the overlay for every operation,
#      creation included: guest root's useradd failed ("cannot lock
#      /etc/passwd": /etc/.pwd.lock, hidden, was ENOENT to create, as was
#      every other hidden name). The gofer now whites each hidden name out in
#      the overlay's upper layer at start (gofer/setup.c hide_in_upper): what
#      the guest makes there is its own, and the host's content never shows
#      (no copy-up of a hidden name: the lower file is never reached) ----
out=$(mrun /bin/sh -c 'printf "g\n" >>/etc/.pwd.lock && cat /etc/.pwd.lock && ls -a /etc | grep -cxF .pwd.lock' 2>&1)
# (sanity: natively root appends to the host's empty one alike)
SANITY=1 expect_eq hidden_lock_created "$(echo $out)" "g 1"
if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null; then
	out=$(mrun /bin/sh -c 'useradd -m moatbob && id -u moatbob >/dev/null && grep -c "^moatbob:" /etc/passwd && ls -d /home/moatbob && ls /etc/shadow' 2>&1)
	expect_eq useradd_in_overlay "$(echo $out)" "1 /home/moatbob ls: cannot access '/etc/shadow': No such file or directory"
else
	skip useradd_in_overlay "rootless: copy-up of the host's root-owned /etc/passwd is EACCES (no useradd, or not root)"
fi
# A persistent layer (--overlay DIR): what the guest made at a hidden name
# in one run is its own in the next (a first cut masked it on the merged
# view as a host file: EXDEV, EACCES), the host's still absent
PL=$T_TMP/persist
mkdir -p "$PL"
moat run --overlay "$PL" -- /bin/sh -c 'echo a >/etc/.pwd.lock; mkdir /etc/sudoers.d && echo s >/etc/sudoers.d/x' </dev/null >/dev/null 2>&1
out=$(moat run --overlay "$PL" -- /bin/sh -c 'cat /etc/.pwd.lock /etc/sudoers.d/x; cat /etc/shadow 2>&1 | grep -c "No such"' </dev/null 2>&1)
expect_eq hidden_names_created_persist "$(echo $out)" "a s 1"
# The host's hidden files hold the canary (a private copy of /etc in a
# private mount namespace, as above); every operation on their names first
# acts as on an absent name, then makes the guest's own. Root only.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	FH=$T_TMP/etchide
	mkdir -m 0700 "$FH" && cp -a /etc "$FH/etc"
	hid=".pwd.lock shadow gshadow shadow- gshadow- sudoers sudoers.d/moat ssl/private/moat.key
ssh/ssh_host_ed25519_key crypttab fstab machine-id security/opasswd"
	for f in $hid; do
		mkdir -p "$(dirname "$FH/etc/$f")" && (umask 077; printf '%s\n' "$CANARY" >"$FH/etc/$f")
	done
	out=$(timeout -k 5 60 unshare -m --propagation private /bin/sh -c 'mount --bind "$1" /etc && shift && exec "$@"' \
		sh "$FH/etc" "$MOAT" run -- /bin/sh -c '
cd /etc
for f in shadow sudoers.d ssl/private machine-id; do mv $f moatmv 2>/dev/null && echo "moved $f"; done
ln gshadow moatln 2>/dev/null && echo linked
rm security/opasswd 2>&1 | grep -c "No such"
printf "g1\n" >>.pwd.lock; printf "g2\n" >>shadow; printf "g2b\n" >>ssh/ssh_host_ed25519_key
python3 -c "import os; os.write(os.open(\"gshadow\", os.O_WRONLY | os.O_CREAT | os.O_EXCL), b\"g3\n\")"
mkdir sudoers.d ssl/private && find sudoers.d ssl/private -mindepth 1 | wc -l
ln -s hosts crypttab && readlink crypttab
mkfifo fstab && [ -p fstab ] && echo fifo
echo g4 >moatx && mv moatx shadow- && echo g5 >moaty && ln moaty gshadow- && mkdir -p security && echo g6 >security/opasswd
cat .pwd.lock shadow ssh/ssh_host_ed25519_key gshadow shadow- gshadow- security/opasswd
cat sudoers machine-id 2>&1 | grep -c "No such"' </dev/null 2>&1)
	case $out in *"$CANARY"*) fail hidden_names_created_are_the_guests "CANARY LEAKED: $out" ;;
	*) expect_eq hidden_names_created_are_the_guests "$(echo $out)" "1 0 hosts fifo g1 g2 g2b g3 g4 g5 g6 2" ;; esac
	n=0
	for f in $hid; do grep -qxF "$CANARY" "$FH/etc/$f" && n=$((n + 1)); done
	expect_eq hidden_names_host_files_untouched "$n" "$(echo $hid | wc -w)"
else
	skip hidden_names_created_are_the_guests "not root: the private mount namespace over /etc needs it"
fi

# Root-only files of the system view are sealed (red-team round 4): run as
# root, guest root acted as host uid 0 on host files, the owner of root's
# 0600 files, and read them through the gofer (/etc/default/cacerts, keys
# under /opt). A file or directory others may not read is now read, listed,
# searched, written, chmod'ed or linked by nobody inside; what the guest
# makes there itself stays its own. Planted only when run as root.
SEALED_F="/etc/moat-sealed-$T_MARK" SEALED_D="/opt/moat-sealed-$T_MARK.d"
if [ "$(id -u)" = 0 ] && [ -d /opt ] &&
   (umask 077; printf '%s\n' "$CANARY" >"$SEALED_F" && mkdir "$SEALED_D" &&
    printf '%s\n' "$CANARY" >"$SEALED_D/f" && chmod 644 "$SEALED_D/f" && : >"$SEALED_D/$CANARY"); then
	at_exit "rm -rf '$SEALED_F' '$SEALED_F.mv' '$SEALED_D'"
	# a program others may run but not read (0711): the loader would map it
	# into the guest, which could read it; it does not run
	cp /bin/true "$SEALED_D.x" && chmod 711 "$SEALED_D.x" && at_exit "rm -f '$SEALED_D.x'"
	out=$(mrun /bin/sh -c "$SEALED_D.x && echo RAN" 2>&1)
	case $out in *RAN*) fail sealed_exec_only_program "it ran: $out" ;; *"Permission denied"*) ok sealed_exec_only_program ;;
	*) fail sealed_exec_only_program "got [$out]" ;; esac
	sealed() { # sealed NAME SHELL-CMD: the canary never shows, the command's errors do
		local out
		out=$(mrun /bin/sh -c "$2" 2>&1)
		case $out in *"$CANARY"*) fail "$1" "CANARY LEAKED: $out" ;; *) ok "$1" ;; esac
	}
	sealed sealed_etc_file_read "cat $SEALED_F"
	sealed sealed_opt_dir_search "cat $SEALED_D/f; ls $SEALED_D"
	sealed sealed_chmod_then_read "chmod 644 $SEALED_F; chmod 755 $SEALED_D; cat $SEALED_F $SEALED_D/f"
	sealed sealed_link_then_read "ln $SEALED_F /etc/moat-ln-$T_MARK; cat /etc/moat-ln-$T_MARK"
	# an O_PATH directory fd is a read-only one inside: getdents on it is
	# EBADF (then the plain listing, which a non-isolating moat gives)
	sealed sealed_opath_dir_list "$PY -c '
import os
for f in (lambda: os.open(\"$SEALED_D\", os.O_PATH), lambda: \"$SEALED_D\"):
    try: print(os.listdir(f()))
    except OSError as e: print(e.errno)'"
	sealed sealed_python_open "$PY -c 'import sys; sys.stdout.write(open(\"$SEALED_F\").read())'"
	out=$(mrun /bin/sh -c "cat $SEALED_F" 2>&1)
	case $out in *"Permission denied"*) ok sealed_is_eacces ;; *) fail sealed_is_eacces "got [$out]" ;; esac
	# last: a copy-up by touch and rename (natively the host file moves)
	sealed sealed_copy_up_then_read "touch $SEALED_F; mv $SEALED_F $SEALED_F.mv; cat $SEALED_F.mv"
	[ -e "$SEALED_F.mv" ] && fail sealed_host_untouched "a guest rename reached the host" || ok sealed_host_untouched
	# --export never reads a sealed file (red team round 7: guest root
	# removed root's 0600 /etc/default/cacerts, or renamed it and put its
	# own file in its place, and the export's 0644 changes.patch held the
	# host file's content); the change is refused and listed, and a sealed
	# file is not renamed (EPERM: the rename copied it up). Natively
	# (fake-moat) no export is written and these fail.
	for how in delete replace; do
		[ -e "$SEALED_F" ] || (umask 077; printf '%s\n' "$CANARY" >"$SEALED_F")
		case $how in
		delete) cmd="rm -f $SEALED_F" ;;
		replace) cmd="mv $SEALED_F $SEALED_F.st; echo mine >$SEALED_F.new; mv $SEALED_F.new $SEALED_F" ;;
		esac
		rm -rf "$T_TMP/exp-$how"
		moat run --export "$T_TMP/exp-$how" -- /bin/sh -c "$cmd" </dev/null >"$T_TMP/exp-$how.out" 2>&1
		if grep -rq "$CANARY" "$T_TMP/exp-$how" 2>/dev/null; then
			fail "sealed_export_$how" "CANARY LEAKED into the export: $(grep -rl "$CANARY" "$T_TMP/exp-$how" | head -3)"
		elif ! grep -q '(sealed)' "$T_TMP/exp-$how/root/manifest.json" 2>/dev/null; then
			fail "sealed_export_$how" "no refusal in the export: $(head -c 300 "$T_TMP/exp-$how.out")"
		else
			ok "sealed_export_$how"
		fi
	done
	[ -e "$SEALED_F.st" ] && fail sealed_export_host_untouched "a guest rename reached the host" || ok sealed_export_host_untouched
	rm -f "$SEALED_F.st" "$SEALED_F.new"
	# what the guest makes in the view, 0600 or 0700, stays its own
	out=$(mrun /bin/sh -c "umask 077; echo own-\$\$ >/etc/moat-own-$T_MARK; mkdir /opt/moat-own-$T_MARK;
		echo in >/opt/moat-own-$T_MARK/f; cat /etc/moat-own-$T_MARK /opt/moat-own-$T_MARK/f | sed 's/[0-9]*\$//'" 2>&1)
	SANITY=1 expect_eq sealed_own_files_readable "$(echo $out)" "own- in"
	at_exit "rm -rf '/etc/moat-own-$T_MARK' '/opt/moat-own-$T_MARK' '/etc/moat-ln-$T_MARK'"
else
	skip sealed_files "not root, or no /opt"
fi
# An O_PATH open of a directory the task may not read (here: root's 0700
# directory in a bind, for --user 1000; the gofer could read it) is the
# placeholder, not a directory fd it can list (red-team round 4); one it may
# search still works as a dirfd (0711).
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$T_TMP/ob/priv" "$T_TMP/ob/srch" && : >"$T_TMP/ob/priv/$CANARY" &&
		echo pub >"$T_TMP/ob/srch/pub" && chmod 700 "$T_TMP/ob/priv" && chmod 711 "$T_TMP/ob/srch"
	out=$(moat run --user 1000 --bind "$T_TMP/ob:/ob:ro" -- "$PY" -c '
import os, errno
try: print(os.listdir(os.open("/ob/priv", os.O_PATH)))
except OSError as e: print(errno.errorcode.get(e.errno, e.errno))
try: print(os.listdir(os.open("/ob/srch", os.O_PATH)))
except OSError as e: print(errno.errorcode.get(e.errno, e.errno))
print(open(os.open("pub", os.O_RDONLY, dir_fd=os.open("/ob/srch", os.O_PATH))).read().strip())' </dev/null 2>&1 | tr '\n' ' ')
	case $out in *"$CANARY"*) fail opath_dir_unreadable "CANARY LEAKED: $out" ;; *) expect_eq opath_dir_unreadable "$out" "EBADF EBADF pub " ;; esac
fi

# Writes to the view (default --overlay memory) land in the sandbox's
# overlay, never on the host: the guest reads back what it wrote, the host's
# files keep their content and times, new names never appear there. With
# --overlay none they fail with EROFS (EACCES accepted when rootless).
# These must stay harmless even when run WITHOUT isolation (the harness
# self-check runs them natively as root): existing files are opened for writing
# but never written; new names are unique and removed at exit.
for p in "/usr/moat-$T_MARK" "/etc/moat-$T_MARK" "/usr/bin/moat-$T_MARK" "/usr/moatdir-$T_MARK" \
	"/moat-$T_MARK"; do
	at_exit "rm -rf '$p'"
done
# werr NAME PATH WANT [MOAT OPTIONS...]: open PATH for writing (create, append)
werr() {
	local out want=$3 name=$1 path=$2
	shift 3
	out=$(moat run "$@" -- "$PY" -c '
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    print("OPENED")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
' "$path" </dev/null 2>&1)
	case " $want " in *" $out "*) ok "$name" ;; *) fail "$name" "got [$out] want one of [$want]" ;; esac
}
hoststate() { sha256sum /etc/passwd /etc/os-release; stat -L -c '%n %s %Y %Z %a' /etc/passwd /etc/os-release; }
hb=$(hoststate)
# the overlay: root-run every write is the guest's; rootless only what the
# caller could change on the host (a copy-up of a root-owned file is EACCES)
ov="OPENED"; [ "$(id -u)" != 0 ] && ov="OPENED EACCES"
SANITY=1 werr write_usr_new_overlay "/usr/moat-$T_MARK" "$ov"
SANITY=1 werr write_etc_passwd_overlay /etc/passwd "$ov"
SANITY=1 werr write_bin_new_overlay "/bin/moat-$T_MARK" "$ov"
SANITY=1 werr write_slash_new_overlay "/moat-$T_MARK" OPENED
out=$(mrun /bin/sh -c "echo guest-$T_MARK >/moat-$T_MARK && mkdir /usr/moatdir-$T_MARK 2>/dev/null;
	{ echo x >>/etc/passwd; } 2>/dev/null; cat /moat-$T_MARK" 2>&1)
SANITY=1 expect_eq overlay_write_read_back "$out" "guest-$T_MARK"
if [ -e "/usr/moat-$T_MARK" ] || [ -e "/etc/moat-$T_MARK" ] || [ -e "/usr/bin/moat-$T_MARK" ] ||
   [ -e "/moat-$T_MARK" ] || [ -e "/usr/moatdir-$T_MARK" ]; then
	fail overlay_root_untouched "a guest create reached the host"
else
	expect_eq overlay_root_untouched "$(hoststate)" "$hb"
fi
ro="EROFS"; [ "$(id -u)" != 0 ] && ro="EROFS EACCES"
werr write_usr_new "/usr/moat-$T_MARK" "$ro" --overlay none
werr write_etc_passwd /etc/passwd "$ro" --overlay none
werr write_bin_new "/bin/moat-$T_MARK" "$ro" --overlay none
werr write_etc_new "/etc/moat-$T_MARK" "$ro" --overlay none
werr write_slash_new "/moat-$T_MARK" "$ro" --overlay none
if [ -e "/usr/moat-$T_MARK" ] || [ -e "/etc/moat-$T_MARK" ] || [ -e "/usr/bin/moat-$T_MARK" ]; then
	fail ro_root_untouched "a guest create reached the host"
else ok ro_root_untouched; fi
# mkdir, symlink, and a chmod to the file's current mode (a no-op if it ever got through).
osr_mode=$(stat -L -c %a /etc/os-release)
out=$(moat run --overlay none -- /bin/sh -c "mkdir /usr/moatdir-$T_MARK 2>&1; ln -s x /etc/moat-$T_MARK 2>&1; chmod $osr_mode /etc/os-release 2>&1" </dev/null 2>&1)
n=$(printf '%s\n' "$out" | grep -c "Read-only file system")
[ "$(id -u)" != 0 ] && n=$(printf '%s\n' "$out" | grep -cE "Read-only file system|Permission denied|Operation not permitted")
expect_eq rw_ops_erofs "$n" 3
# A :ro bind is read-only too.
mkdir -p "$T_TMP/robind"
out=$(moat run --bind "$T_TMP/robind:/data:ro" -- /usr/bin/touch /data/f </dev/null 2>&1); rc=$?
if [ $rc -ne 0 ] && [ ! -e "$T_TMP/robind/f" ]; then ok ro_bind_denies_write; else fail ro_bind_denies_write "exit $rc, $out"; fi
# Every other way to change a :ro bind's file (red team 57): its bytes
# through an fd (O_TRUNC on a read-only open, fallocate's punch/zero/
# collapse, copy_file_range, splice, sendfile, FICLONE, a shared mapping
# made writable, MADV_REMOVE, an O_PATH fd reopened for writing), its
# times (UTIME_NOW needs only ownership: the caller owns it), mode, owner,
# xattrs, flags and name; afterwards the host file's content, mode, owner,
# times, link count and xattrs are what they were. Natively (the caller
# owns the file) utimensat, chmod and setxattr change it.
mkdir -p "$T_TMP/roatk"
printf 'keep\n' >"$T_TMP/roatk/f"
chmod 0644 "$T_TMP/roatk/f"
printf 'PWNED' >"$T_TMP/roatk/src"
roatk_state() { (cd "$T_TMP/roatk" && sha256sum f && stat -c '%a %u %g %Y %Z %h %i' f && ls && "$PY" -c 'import os; print(sorted(os.listxattr("f")))') 2>&1; }
roatk_before=$(roatk_state)
sleep 1.1
moat run --bind "$T_TMP/roatk:/ra:ro" -- "$PY" -c '
import ctypes, fcntl, os, sys
d = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def t(f, *a):
    try: f(*a)
    except Exception: pass
ro = os.open(d + "/f", os.O_RDONLY)
src = os.open(d + "/src", os.O_RDONLY)
t(os.open, d + "/f", os.O_RDONLY | os.O_TRUNC)
t(os.open, d + "/f", os.O_RDWR)
for mode in (0x1 | 0x2, 0x10, 0x8, 0):  # punch, zero range, collapse, extend
    libc.fallocate(ro, mode, ctypes.c_long(0), ctypes.c_long(4096))
t(os.copy_file_range, src, ro, 5, 0, 0)
r, w = os.pipe(); os.write(w, b"PWNED")
t(os.splice, r, ro, 5, None, 0)
t(os.sendfile, ro, src, 0, 5)
t(fcntl.ioctl, ro, 0x40049409, src)  # FICLONE
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long)
a = libc.mmap(None, 4096, 1, 1, ro, 0)  # PROT_READ, MAP_SHARED
if a and a != ctypes.c_void_p(-1).value:
    if libc.mprotect(ctypes.c_void_p(a), 4096, 3) == 0:  # PROT_READ|PROT_WRITE
        ctypes.memmove(a, b"PWNED", 5)
    libc.madvise(ctypes.c_void_p(a), 4096, 9)  # MADV_REMOVE
    libc.msync(ctypes.c_void_p(a), 4096, 4)
op = os.open(d + "/f", os.O_PATH)
t(os.open, "/proc/self/fd/%d" % op, os.O_WRONLY | os.O_TRUNC)
t(os.utime, d + "/f", None)
t(os.utime, ro, None)
t(os.chmod, d + "/f", 0o4777)
t(os.chown, d + "/f", 1234, 1234)
t(os.setxattr, d + "/f", "user.pwn", b"1")
t(os.setxattr, d + "/f", "trusted.pwn", b"1")
t(fcntl.ioctl, ro, 0x40086602, bytes(8))  # FS_IOC_SETFLAGS
t(os.link, d + "/f", d + "/g")
t(os.rename, d + "/f", d + "/g")
t(os.unlink, d + "/f")
' /ra </dev/null >/dev/null 2>&1
roatk_after=$(roatk_state)
expect_eq ro_bind_file_unchanged_by_any_write "$roatk_after" "$roatk_before"

# The caller's environment does not reach the guest.
out=$(SECRET_TOKEN="tok-$T_MARK" AWS_SECRET_ACCESS_KEY="aws-$T_MARK" moat run -- /usr/bin/env </dev/null 2>/dev/null)
case $out in *"$T_MARK"*) fail env_secrets_absent "caller secrets visible in guest env" ;; *) ok env_secrets_absent ;; esac
out=$(SECRET_TOKEN="tok-$T_MARK" moat run -- /bin/sh -c 'cat /proc/1/environ /proc/self/environ 2>/dev/null | tr "\0" "\n"' </dev/null 2>/dev/null)
case $out in *"$T_MARK"*) fail env_secrets_absent_proc "secret in /proc/*/environ" ;; *) ok env_secrets_absent_proc ;; esac

# moat's own fds 3+ are not inherited by the guest.
out=$(moat run -- /bin/sh -c 'ls /proc/self/fd' 3</etc/hostname 4</etc/os-release 7>"$T_TMP/fd7" </dev/null 2>/dev/null | tr '\n' ' ')
case $out in "0 1 2 "|"0 1 2 3 ") ok no_inherited_fds ;; *) fail no_inherited_fds "guest fds: $out" ;; esac
out=$(moat run -- /bin/sh -c 'cat <&4 2>/dev/null; echo x >&7 2>/dev/null && echo wrote7' 4</etc/os-release 7>"$T_TMP/fd7" </dev/null 2>/dev/null)
expect_eq inherited_fd_unusable "$out" ""

# Identity: hostname is virtual (or at least not a way to learn the host's); uid map.
out=$(mrun /bin/sh -c 'cat /proc/sys/kernel/hostname 2>/dev/null || hostname' 2>/dev/null)
if [ -n "$out" ] && [ "$out" != "$(hostname)" ]; then ok hostname_virtual; else fail hostname_virtual "guest hostname [$out] host [$(hostname)]"; fi
# Renaming the guest's host must not rename the host (restored at exit in case it did).
# Where the caller cannot rename the host at all (no CAP_SYS_ADMIN over its UTS
# namespace) the case holds without isolation: a sanity case there.
# Natively (fake-moat, as root) the guest would rename the host while the
# self-check's other scripts run: it renames only where its kernel release
# is not the host's (a sandbox), and says "native" otherwise, which fails.
at_exit "[ \"\$(hostname)\" = '$(hostname)' ] || hostname '$(hostname)'"
cannot_rename=""; "$PY" -c 'import socket; socket.sethostname(socket.gethostname())' 2>/dev/null || cannot_rename=1
out=$(mrun "$PY" -c "import os, socket, sys
if os.uname().release == sys.argv[1]: print('native'); sys.exit()
socket.sethostname('moat-$T_MARK')" "$(uname -r)" 2>/dev/null)
if [ "$(hostname)" = "moat-$T_MARK" ]; then fail hostname_change_stays_inside "host renamed!"
elif [ "$out" = native ] && [ -z "$cannot_rename" ]; then fail hostname_change_stays_inside "the guest runs on the host's kernel release (natively?)"
else SANITY=$cannot_rename ok hostname_change_stays_inside; fi

# File handles never name host inodes ("shocker", CVE-2014-3519's class):
# a host handle of /etc/shadow, made natively and handed to the guest,
# opens nothing inside (moat's handles are its own: ESTALE); guest root
# gets handles for its own view only.
if [ "$(id -u)" = 0 ] && [ -r /etc/shadow ]; then
	HCODE='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class FH(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_uint), ("type", ctypes.c_int), ("h", ctypes.c_ubyte * 128)]
'
	hex=$("$PY" -c "$HCODE
fh = FH(128, 0); mid = ctypes.c_int()
if libc.name_to_handle_at(-100, b'/etc/shadow', ctypes.byref(fh), ctypes.byref(mid), 0) != 0: sys.exit(1)
print(bytes(fh)[:8 + fh.bytes].hex())" 2>/dev/null)
	if [ -z "$hex" ]; then
		skip host_handle_opens_nothing "no file handles on this host's /etc"
	else
		out=$(mrun "$PY" -c "$HCODE
raw = bytes.fromhex(sys.argv[1]); fh = FH.from_buffer_copy(raw + bytes(136 - len(raw)))
for mfd in (-100, os.open('/etc', os.O_RDONLY)):
    fd = libc.open_by_handle_at(mfd, ctypes.byref(fh), os.O_RDONLY)
    if fd >= 0: print('OPENED', os.read(fd, 64))
    else: print(os.strerror(ctypes.get_errno()))" "$hex" 2>&1)
		case $out in
		*OPENED*|*root:*) fail host_handle_opens_nothing "$out" ;;
		*"Stale file handle"*) ok host_handle_opens_nothing ;;
		*) fail host_handle_opens_nothing "got [$out]" ;;
		esac
	fi
fi

# Synthetic nodes' device numbers are no host file system's (found in
# review: /proc and the synthetic directories had fixed numbers, 0:0x4d and
# 0:0xfe, anonymous devices the kernel also hands to tmpfs, overlayfs and an
# overlay's lower-layer pseudo device; a stat with one counts as the
# sandbox's own file, and a sealed 0711 program on an overlay whose lower
# layer got 0:0x4d ran as root's own, half the runs). In a private mount
# namespace (gone with it) the host takes 300 fresh anonymous devices, tmpfs
# mounts under one directory the guest gets bound: no device the guest sees
# for /proc or a synthetic directory may be one of theirs.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	mkdir -p "$T_TMP/synthdev"
	out=$(T_D="$T_TMP/synthdev" T_M="moat-synth-$T_MARK" T_MOAT="$MOAT" timeout -k 5 120 \
		unshare -m --propagation private /bin/sh -c '
		i=0; while [ $i -lt 300 ]; do mkdir -p "$T_D/$i" && mount -t tmpfs t "$T_D/$i"; i=$((i+1)); done
		"$T_MOAT" run --bind "$T_D:/d:ro" --bind "$T_D/0:/$T_M/x:ro" -- /bin/sh -c \
			"stat -c %d /proc /$T_M; echo --; stat -c %d /d/*"' </dev/null 2>&1)
	guest_devs=$(echo "$out" | sed '/^--$/,$d' | sort -un)
	host_devs=$(echo "$out" | sed '1,/^--$/d' | sort -un)
	clash=$(comm -12 <(echo "$host_devs") <(echo "$guest_devs"))
	if [ "$(echo "$guest_devs" | grep -c .)" -lt 1 ] || [ "$(echo "$host_devs" | grep -c .)" -lt 300 ]; then
		fail synthetic_dev_unique "guest [$guest_devs], $(echo "$host_devs" | grep -c .) host devices: $(echo "$out" | tail -3)"
	elif [ -n "$clash" ]; then
		fail synthetic_dev_unique "guest device(s) $clash are host file systems' too"
	else
		ok synthetic_dev_unique
	fi
else
	skip synthetic_dev_unique "needs root and unshare"
fi

# Two binds of one host tree (/a and /b): root's chmod 600 of a file (and
# chmod 700 of a directory) through /a is seen through /b by a process that
# dropped root, which had read them through /b (red-team 9: each mount had
# its own cached entries). Linux enforces it natively: sanity.
mkdir -p "$T_TMP/alias"
out=$(moat run --user 0:0 --bind "$T_TMP/alias:/a:rw" --bind "$T_TMP/alias:/b:rw" -- "$PY" -c '
import os
os.makedirs("/a/d", exist_ok=True); os.chmod("/a/d", 0o755)
for p in ("/a/f", "/a/d/g"):
    open(p, "w").write("SECRET\n"); os.chmod(p, 0o644)
def as_user(paths):
    r, w = os.pipe()
    if os.fork() == 0:
        os.setresgid(1000, 1000, 1000); os.setresuid(1000, 1000, 1000)
        res = []
        for p in paths:
            try: res.append(open(p).read().strip())
            except OSError as e: res.append(e.strerror)
        os.write(w, " ".join(res).encode()); os._exit(0)
    os.close(w); out = os.read(r, 4096).decode(); os.wait(); return out
print(as_user(["/b/f", "/b/d/g"]))
os.chmod("/a/f", 0o600); os.chmod("/a/d", 0o700)
print(as_user(["/b/f", "/b/d/g"]))' </dev/null 2>&1)
SANITY=1 expect_eq two_binds_one_tree_chmod "$(echo $out)" "SECRET SECRET Permission denied Permission denied"

# ---- hard links: a chmod/chown through one name is the inode's ----
# tests/syscalls/link_chmod as root inside (rootless too), in an rw and a cow
# bind, a --tmpfs and the root overlay: root makes its file private through
# one link; a process that dropped root, which had looked up the other name,
# may not open it (red-team 9: the sentry re-cached only the changed name,
# and open checked the other's stale mode; red-team 34: the same on the
# private file systems, tmpfs and the overlay). Linux enforces it natively:
# sanity.
if [ -n "$SYSCALL_BIN" ] && [ -x "$SYSCALL_BIN/link_chmod" ]; then
	for kind in rw cow tmpfs overlay; do
		case $kind in
		rw | cow) mkdir -p "$T_TMP/lc_$kind"; mnt=(--bind "$T_TMP/lc_$kind:/w:$kind"); dir=/w ;;
		tmpfs) mnt=(--tmpfs /w); dir=/w ;;
		overlay) mnt=(); dir=/var/tmp ;;
		esac
		out=$(moat run --user 0:0 --bind "$SYSCALL_BIN:/t:ro" "${mnt[@]}" -- \
			/t/link_chmod "$dir" </dev/null 2>&1)
		rc=$?
		if [ $rc = 77 ]; then
			skip "link_chmod_$kind" "not root natively"
		else
			# (rootless, root inside owns no other host id: no chown to
			# the dropped uid, so no chown-only case)
			last="ok chown_only_other_name"
			[ "$(id -u)" = 0 ] || last="skip chown_only_other_name"
			SANITY=1 expect_eq "link_chmod_$kind" "$(echo $out | sed 's/ (chown: [^)]*)$//')" \
				"ok chmod_other_name ok fchmod_other_name ok chown_other_name $last"
		fi
	done
else
	skip link_chmod "no SYSCALL_BIN"
fi

# Red team 74: the host's page cache of a bind's file. A guest's
# posix_fadvise(POSIX_FADV_DONTNEED) ran natively and dropped the clean
# cached pages of host files it may only read (ro, cow, rw binds; the root
# overlay's lower files, /usr/bin/python3): every later reader on the host
# or in another sandbox went back to the disk, and preadv2(RWF_NOWAIT) then
# told the guest which pages the host read since. The host reads a 1 MB
# file into its cache (written and synced first: dirty pages are never
# dropped), the guest advises DONTNEED on it through each kind of bind, and
# the host counts its resident pages again (mincore of a fresh mapping).
pc=$T_TMP/pagecache
mkdir -p "$pc" && head -c 1048576 /dev/urandom >"$pc/f" && chmod -R a+rX "$pc" && sync "$pc/f"
resident() {
	"$PY" -c 'import ctypes, mmap, os, sys
l = ctypes.CDLL(None, use_errno=True)
l.mmap.restype = ctypes.c_void_p
l.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
n = os.fstat(fd).st_size
if sys.argv[2] == "read":
    os.pread(fd, n, 0)
a = l.mmap(None, n, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
v = (ctypes.c_ubyte * ((n + 4095) // 4096))()
l.mincore(ctypes.c_void_p(a), ctypes.c_size_t(n), v)
print(sum(b & 1 for b in v))' "$1" "$2"
}
dontneed='import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
print("advised")'
pcgot=
for mode in ro cow rw; do
	before=$(resident "$pc/f" read)
	out=$(moat run --bind "$pc:/pc:$mode" -- "$PY" -c "$dontneed" /pc/f </dev/null 2>&1)
	after=$(resident "$pc/f" keep)
	# kept: at least half of what was resident (the host's own reclaim
	# may take a few pages meanwhile: 254 of 256 seen under load); the
	# native DONTNEED leaves 0
	if [ "${before:-0}" -ge 128 ] && [ "${after:-0}" -ge $((before / 2)) ]; then
		pcgot="$pcgot$mode: $out kept; "
	else
		pcgot="$pcgot$mode: $out $before -> $after; "
	fi
done
expect_eq host_page_cache_kept_by_dontneed "$pcgot" "ro: advised kept; cow: advised kept; rw: advised kept; "

# Red team 83: a host directory the caller gives as stdio (`moat run ... <
# DIR`), outside every mount, is a removed directory to the guest: lookups
# in it were ENOENT already (fs/walk.c), but its listing, getdents64 on the
# fd or on a reopen through /proc/self/fd/0/, named the host's entries (`<
# /` listed the host's root). Linux's readdir of a dead directory is ENOENT.
# Natively both list the canary: not a sanity case.
SD=$T_TMP/stdio-dir
mkdir -p "$SD/$CANARY" && chmod 755 "$SD"
out=$(moat run -- /bin/sh -c 'exec 3<&0 </dev/null; '"$PY"' -c "
import ctypes, os
b = ctypes.create_string_buffer(4096)
n = ctypes.CDLL(None, use_errno=True).syscall(217, 3, b, 4096)
print(b.raw[:n] if n > 0 else \"getdents64 %d %d\" % (n, ctypes.get_errno()))"; ls -a /proc/self/fd/3/' <"$SD" 2>&1)
case $out in
*"$CANARY"*) fail stdio_host_dir_not_listed "CANARY LISTED: $out" ;;
"getdents64 -1 2") ok stdio_host_dir_not_listed ;;
*) fail stdio_host_dir_not_listed "got [$out]" ;;
esac

# Red team 83: the caller's stdio is a description, not the file: a
# write-only stdout (`moat run prog >>FILE`) was reopened for reading
# through /proc/self/fd/1 or /dev/stdout and read whole (rootless: any file
# of the caller's, a shell history, a log). A reopen of one of the caller's
# stdio objects the VFS cannot name asks no more access than one of the
# caller's descriptions of it has (EACCES); stdin's read back stays.
# Natively the reads succeed: not a sanity case.
SL=$T_TMP/stdio-log
printf '%s\n' "$CANARY" >"$SL" && chmod 644 "$SL"
printf '%s\n' stdin-ok >"$SL.in"
moat run -- "$PY" -c '
import sys
for p in ("/proc/self/fd/1", "/dev/stdout", "/dev/stdin"):
    try: d = open(p).read().strip()
    except OSError as e: d = e.strerror
    sys.stderr.write("%s: %s; " % (p, d))' <"$SL.in" >>"$SL" 2>"$SL.err"
out=$(cat "$SL.err")
case $out in
*"$CANARY"*) fail stdio_write_only_not_read "CANARY READ: $out" ;;
*) expect_eq stdio_write_only_not_read "$out" "/proc/self/fd/1: Permission denied; /dev/stdout: Permission denied; /dev/stdin: stdin-ok; " ;;
esac

# Red team 83: a memfd the caller gives as stdio is the caller's, not the
# guest's own: the guest's root chmod'ed it (the gofer sets a guest memfd's
# mode, GOFER_OP_MEMFDATTR, and took any memfd) and set its times; EPERM
# now, as on any other object of the caller's. Natively the owner's chmod
# succeeds: not a sanity case.
out=$("$PY" -c '
import os, sys
m = os.memfd_create("caller")
os.write(m, b"caller-data"); os.fchmod(m, 0o600); os.dup2(m, 0)
os.execvp(sys.argv[1], sys.argv[1:])' timeout -k 5 "${MOAT_TIMEOUT:-120}" "$MOAT" run -- "$PY" -c '
import os
r = []
for f in (lambda: os.fchmod(0, 0o666), lambda: os.utime(0, (1, 1))):
    try: f(); r.append("done")
    except OSError as e: r.append(e.strerror)
print(" ".join(r), "%o" % (os.fstat(0).st_mode & 0o7777))' 2>&1)
expect_eq stdio_caller_memfd_kept "$out" "Operation not permitted Operation not permitted 600"

# stdio39: what a host peer passes over an inherited socket stdio
# (SCM_RIGHTS) is no more the guest's than the caller's own stdio is: a host
# directory (its listing, a lookup beneath), an O_PATH fd of one, and a
# write-only fd of a file on no mount of the sandbox: its reopen through
# /proc/self/fd/N asks no more than the description has (before, rootless
# and root-run, a write-only fd of a 0644 file, or rootless of the caller's
# 0600 one, was reopened read-only and read whole; the directory cases held
# since red team 83); a pidfd of the peer signals nothing. Natively the
# file is read and the directory listed: not a sanity case.
SP=$T_TMP/scm-peer
mkdir -p "$SP/dir/$CANARY" && printf '%s\n' "$CANARY" >"$SP/wo" && chmod 644 "$SP/wo"
cat >"$T_TMP/scm_peer.py" <<'EOF'
import array, os, socket, subprocess, sys
a, b = socket.socketpair()
d = os.open(sys.argv[1] + "/dir", os.O_RDONLY | os.O_DIRECTORY)
opath = os.open(sys.argv[1] + "/dir", os.O_PATH)
wo = os.open(sys.argv[1] + "/wo", os.O_WRONLY | os.O_APPEND)
fds = [d, opath, wo, os.pidfd_open(os.getpid())]
p = subprocess.Popen(sys.argv[2:], stdin=a.fileno(), stdout=a.fileno())
b.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
b.settimeout(60)
print(b.recv(4000).decode(), flush=True)
p.wait()
EOF
out=$(timeout -k 5 80 "$PY" "$T_TMP/scm_peer.py" "$SP" "$MOAT" run -- "$PY" -c '
import array, errno, os, signal, socket
s = socket.socket(fileno=0)
msg, anc, fl, addr = s.recvmsg(10, socket.CMSG_SPACE(4 * 4))
fds = array.array("i"); fds.frombytes(anc[0][2])
d, opath, wo, pidfd = fds
def t(f):
    try:
        r = f(); return "ok" if r is None else repr(r)
    except OSError as e:
        return errno.errorcode[e.errno]
r = [t(lambda: os.listdir(d)), t(lambda: os.listdir("/proc/self/fd/%d/" % d)),
     t(lambda: os.stat(os.listdir("/proc/self/fd/%d" % opath)[0], dir_fd=opath)),
     t(lambda: os.close(os.open(".", os.O_RDONLY, dir_fd=opath))),
     t(lambda: open("/proc/self/fd/%d" % wo).read().strip()),
     t(lambda: open("/proc/self/fd/%d" % wo, "a").write("")),
     t(lambda: signal.pidfd_send_signal(pidfd, 0))]
s.send(" ".join(r).encode())' 2>&1)
case $out in
*"$CANARY"*) fail scm_rights_host_objects_not_reached "CANARY REACHED: $out" ;;
*) expect_eq scm_rights_host_objects_not_reached "$out" "[] [] EACCES ENOENT EACCES 0 EBADF" ;;
esac

# pts39: a memfd a host peer sends over an inherited socket stdio
# (SCM_RIGHTS) is the peer's, as the caller's stdio memfd is (red team 83):
# the guest's root chmod'ed the peer's 0600 memfd to 0666 and set its times
# (stdio39, root-run and rootless). The guest's own memfds are known by the
# file now (memfd_create made by the sentry, its inode recorded), not by the
# number or by the kernel's one memfd device: the peer's is EPERM, the
# guest's own still takes both. Natively the owner's chmod succeeds: not a
# sanity case.
cat >"$T_TMP/scm_memfd.py" <<'EOF'
import array, os, socket, subprocess, sys
a, b = socket.socketpair()
m = os.memfd_create("peer")
os.write(m, b"peer-data"); os.fchmod(m, 0o600); os.utime(m, (5, 5))
p = subprocess.Popen(sys.argv[1:], stdin=a.fileno(), stdout=a.fileno())
b.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [m]))])
b.settimeout(60)
got = b.recv(4000).decode()
p.wait()
st = os.fstat(m)
print(got, "peer=%o,%d" % (st.st_mode & 0o7777, st.st_mtime), flush=True)
EOF
out=$(timeout -k 5 80 "$PY" "$T_TMP/scm_memfd.py" "$MOAT" run -- "$PY" -c '
import array, errno, os, socket
s = socket.socket(fileno=0)
msg, anc, fl, addr = s.recvmsg(10, socket.CMSG_SPACE(4))
fds = array.array("i"); fds.frombytes(anc[0][2])
own = os.memfd_create("own")
r = []
for fd in (fds[0], own):
    for f in (lambda: os.fchmod(fd, 0o666), lambda: os.utime(fd, (1, 1))):
        try: f(); r.append("ok")
        except OSError as e: r.append(errno.errorcode[e.errno])
s.send(" ".join(r).encode())' 2>&1)
expect_eq scm_rights_peer_memfd_kept "$out" "EPERM EPERM ok ok peer=600,5"

finish
