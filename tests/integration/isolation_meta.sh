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

# ---- 2. rw bind: no set-id bits, owners or device nodes reach the host ----
RW=$T_TMP/rw
mkdir -p "$RW/sub"
chmod 0777 "$RW"
: >"$RW/theirs"
chmod 0644 "$RW/theirs"
[ $ROOT = 1 ] && chown -R 65534:65534 "$RW/theirs" "$RW/sub"
# --workdir, not "cd /w": a moat that isolates nothing (fake-moat) then acts
# on the host directory itself, so the host-side cases below must catch it
out=$(moat run --bind "$RW:/w:rw" --workdir /w -- /bin/sh -c '
: > mine; : > mine2; mkdir mdir
chmod 4755 mine; chmod 2755 mine2; chmod 2775 mdir
echo "A $(stat -c %a mine) $(stat -c %a mine2) $(stat -c %a mdir)"
chown 65534:65534 mine2 2>&1 && echo "B $(stat -c "%u %g %a" mine2)"
chmod 6755 mine2; chown 0:0 mine2 && echo "C $(stat -c "%u %g %a" mine2)"
chown 0:0 theirs 2>/dev/null; echo "D $(stat -c "%u:%g" theirs)"
chmod 4755 theirs 2>/dev/null; echo "E $(stat -c "%a" theirs)"
mknod cdev c 1 3 2>/dev/null; mknod bdev b 7 0 2>/dev/null
for d in cdev bdev; do python3 -c "import os; os.truncate(\"$d\", 4096)" 2>/dev/null; done
[ -c cdev ] && echo data >cdev 2>/dev/null; [ -b bdev ] && echo data >>bdev 2>/dev/null
ln theirs hl 2>/dev/null; echo "F done"
python3 -c "
import os
fd = os.open(\"fdmine\", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.utime(fd, ns=(5000000000, 5000000000)); os.fchmod(fd, 0o4755)
st = os.stat(\"fdmine\"); print(\"G\", oct(st.st_mode & 0o7777), int(st.st_mtime))"
' </dev/null 2>&1)
uid=$(id -u) gid=$(id -g)
if [ $ROOT = 1 ]; then
	SANITY=1 expect_eq rw_guest_sees_setid "$(echo "$out" | grep '^A ')" "A 4755 2755 2775"
	SANITY=1 expect_eq rw_guest_sees_chown "$(echo "$out" | grep '^B ')" "B 65534 65534 755"
	SANITY=1 expect_eq rw_guest_sees_chown_back "$(echo "$out" | grep '^C ')" "C 0 0 755"
	SANITY=1 expect_eq rw_guest_sees_virtual_owner "$(echo "$out" | grep '^D ')" "D 0:0"
	SANITY=1 expect_eq rw_chmod_not_owner_refused "$(echo "$out" | grep '^E ')" "E 644"
	if [ -e "$RW/hl" ]; then fail rw_no_link_to_unwritable "hard link to a file the guest may not write"
	else ok rw_no_link_to_unwritable; fi
fi
# tar's fchmod and futimens on the fd it made (the gofer makes them, CHMOD
# and UTIMENS; the sentry's filter has neither call): the guest sees its
# set-id bit, the host file the mode without it and the time
SANITY=1 expect_eq rw_fd_chmod_guest_view "$(echo "$out" | grep '^G ')" "G 0o4755 5"
expect_eq rw_fd_chmod_host "$(stat -c '%a %Y' "$RW/fdmine" 2>&1)" "755 5"
for f in mine mine2 mdir theirs fdmine; do
	m=$(stat -c %a "$RW/$f" 2>/dev/null)
	# mine2's bits are cleared natively too by the chowns that follow
	# its chmods: a sanity case
	case $m in [2-7]???) fail "rw_no_host_setid_$f" "host mode $m" ;;
	*) if [ $f = mine2 ]; then ok_sanity "rw_no_host_setid_$f"; else ok "rw_no_host_setid_$f"; fi ;; esac
done
SANITY=1 expect_eq rw_host_owner_kept_mine2 "$(stat -c '%u %g' "$RW/mine2")" "$uid $gid"
if [ $ROOT = 1 ]; then
	expect_eq rw_host_owner_kept_theirs "$(stat -c '%u %g %a' "$RW/theirs")" "65534 65534 644"
fi
# A host file's set-id bits and file capability go when the guest opens it
# for writing (as a write(2) of one without CAP_FSETID takes them off): a
# write through a shared mapping takes off neither. Before red-team round
# 24 guest root mapped a 4755 file of the rw bind (and one with
# security.capability) writable, wrote into it, and the host kept a set-uid
# (capable) file of the guest's content. Natively root's mapping keeps them.
PV=$T_TMP/privw
mkdir -p "$PV"
head -c 8192 /dev/zero | tr '\0' x >"$PV/suid"; cp "$PV/suid" "$PV/sgid"; cp "$PV/suid" "$PV/capf"
chmod 4755 "$PV/suid"; chmod 2755 "$PV/sgid"; chmod 0755 "$PV/capf"
want_cap=none
if [ $ROOT = 1 ]; then
	"$PY" -c 'import os, sys; os.setxattr(sys.argv[1], "security.capability", bytes.fromhex("0100000200140000000000000000000000000000"))' "$PV/capf" || want_cap=unset
fi
moat run --user 0:0 --bind "$PV:/w:rw" --workdir /w -- "$PY" -c '
import os, mmap
for p in ("suid", "sgid", "capf"):
    fd = os.open(p, os.O_RDWR); m = mmap.mmap(fd, 4096); m[0:4] = b"EVIL"; m.flush()' </dev/null >/dev/null 2>&1
cap=$("$PY" -c '
import os, sys
try: os.getxattr(sys.argv[1], "security.capability"); print("kept")
except OSError: print("none")' "$PV/capf")
expect_eq rw_mapped_write_keeps_no_setid_or_caps "$(stat -c %a "$PV/suid" "$PV/sgid" "$PV/capf" | tr '\n' ' ')$(head -c 4 "$PV/suid")|$cap" \
	"755 755 755 EVIL|$want_cap"

# (root inside may mknod: the node is virtual, an empty regular host file,
# which truncate, O_TRUNC and writes never grow)
if [ -c "$RW/cdev" ] || [ -b "$RW/bdev" ] || [ -s "$RW/cdev" ] || [ -s "$RW/bdev" ]; then
	fail rw_no_device_nodes "device node on the host: $(ls -l "$RW/cdev" "$RW/bdev" 2>&1 | tr '\n' ' ')"
else ok rw_no_device_nodes; fi

# tar -xpf and cp -a as guest root see what they set; the host sees none of it
if [ $ROOT = 1 ]; then
	TP=$T_TMP/tarp
	mkdir -p "$TP/src/d" "$TP/dst"
	echo hi >"$TP/src/a"
	chown 1000:1000 "$TP/src/a"; chmod 4755 "$TP/src/a"
	chown 123:456 "$TP/src/d"; chmod 2750 "$TP/src/d"
	tar cpf "$TP/a.tar" -C "$TP/src" .
	out=$(moat run --bind "$TP:/w:rw" --workdir /w -- /bin/sh -c \
		'tar -xpf a.tar -C dst && cp -a dst cp && stat -c "%n %a %u:%g" dst/a dst/d cp/a cp/d' </dev/null 2>&1)
	SANITY=1 expect_eq rw_tar_cp_guest_view "$(echo $out)" "dst/a 4755 1000:1000 dst/d 2750 123:456 cp/a 4755 1000:1000 cp/d 2750 123:456"
	expect_eq rw_tar_cp_host_view "$(cd "$TP" && stat -c '%n %a %u:%g' dst/a dst/d cp/a cp/d 2>&1 | tr '\n' ' ')" \
		"dst/a 755 0:0 dst/d 750 0:0 cp/a 755 0:0 cp/d 750 0:0 "
fi

# ---- 3. no DAC override for guest root on host files ----
RO=$T_TMP/ro
mkdir -p "$RO/priv"
echo "secret-$T_MARK" >"$RO/secret"
echo "inner-$T_MARK" >"$RO/priv/inner"
chmod 0640 "$RO/secret"; chmod 0700 "$RO/priv"; chmod 0644 "$RO/priv/inner"
ETCF=
if [ $ROOT = 1 ]; then
	chown 65534:65534 "$RO/secret" "$RO/priv" "$RO/priv/inner"
	ETCF=/etc/moat-dac-$T_MARK
	(umask 077; echo "secret-$T_MARK" >"$ETCF") && chown 65534:65534 "$ETCF" && chmod 0640 "$ETCF"
	at_exit "rm -f '$ETCF'"
else
	chmod 0000 "$RO/secret"; chmod 0000 "$RO/priv"
	at_exit "chmod -R u+rwx '$RO'"
fi
out=$(moat run --bind "$RO:/r:ro" -- "$PY" -c '
import os, sys
def tr(f):
    try:
        r = f(); return "ok " + str(r)[:40]
    except OSError as e:
        return e.strerror
for p in ["/r/secret"] + sys.argv[1:]:
    print("read", p, tr(lambda: open(p).read()))
print("list", tr(lambda: os.listdir("/r/priv")))
print("search", tr(lambda: os.stat("/r/priv/inner")))
print("write", tr(lambda: open("/r/secret", "a")))
' ${ETCF:+"$ETCF"} </dev/null 2>&1)
case $out in *"secret-$T_MARK"* | *"inner-$T_MARK"*) fail dac_canary "CANARY LEAKED: $out" ;; *) ok dac_canary ;; esac
expect_eq dac_read_0640_other "$(echo "$out" | grep '^read /r/secret' | cut -d' ' -f3-)" "Permission denied"
[ -n "$ETCF" ] && expect_eq dac_read_etc_0640_other "$(echo "$out" | grep "^read /etc" | cut -d' ' -f3-)" "Permission denied"
expect_eq dac_list_0700_other "$(echo "$out" | grep '^list' | cut -d' ' -f2-)" "Permission denied"
expect_eq dac_search_0700_other "$(echo "$out" | grep '^search' | cut -d' ' -f2-)" "Permission denied"

# What a guest makes in an rw bind is its own (a made entry; guest root has
# its DAC override there), but only what the gofer made: a thread renaming
# another user's 0600 file (or 0700 directory) onto the name of a new
# symlink, fifo or directory must not make it the guest's (red-team finding:
# it read, appended to and chmod'ed the victim), as --user 1000 or as guest
# root. Root-run: the victim needs another owner. (Natively, as root, the
# victim is readable at once: FAIL.)
if [ "$(id -u)" = 0 ] && [ -x "$SYSCALL_BIN/probe_made_race" ]; then
	for user in 1000 0; do
		for kind in symlink fifo dir; do
			name=made_entry_race_$kind
			[ $user = 0 ] && name=made_entry_race_root_$kind
			V=$T_TMP/made_${user}_$kind
			mkdir -p "$V" && chmod 777 "$V"
			if [ $kind = dir ]; then
				mkdir "$V/victim" && echo "made-$T_MARK" >"$V/victim/inner" && chmod 600 "$V/victim/inner"
				chown -R 65534:65534 "$V/victim" && chmod 700 "$V/victim"
			else
				echo "made-$T_MARK" >"$V/victim" && chown 65534:65534 "$V/victim" && chmod 600 "$V/victim"
			fi
			out=$(timeout 60 "$MOAT" run --user $user --bind "$SYSCALL_BIN:/t:ro" --bind "$V:/b:rw" -- \
				/t/probe_made_race /b victim $kind "${RACE_SECONDS:-3}" </dev/null 2>&1)
			case $out in "held "*) ok $name ;; *) fail $name "${out:0:200}" ;; esac
			SANITY=1 expect_eq ${name}_host_unchanged "$(stat -c '%U %a' "$V/victim" 2>&1)" \
				"nobody $([ $kind = dir ] && echo 700 || echo 600)"
		done
	done
else
	skip made_entry_race "not root: the victim needs another owner"
fi
# ---- red team 18: statfs's f_fsid of a host file system (ext4/xfs: from its
#      UUID, one value per host disk in every sandbox) was the host's through
#      a bind; now a per-sandbox keyed hash (stat and fstat agree) ----
hf=$(stat -f -c %i "$T_TMP")
got=$(moat run --bind "$T_TMP:/m" -- /bin/sh -c 'stat -f -c %i /m; stat -f -c %i /m/. </dev/null' </dev/null 2>&1 | tr '\n' ' ')
set -- $got
if [ "$hf" = 0 ]; then
	skip statfs_fsid_not_the_hosts "the host file system has no fsid"
elif [ "${1:-}" != "$hf" ] && [ "${1:-}" = "${2:-}" ] && [ -n "${1:-}" ]; then
	ok statfs_fsid_not_the_hosts
else
	fail statfs_fsid_not_the_hosts "host $hf, guest [$got]"
fi

# ---- red team 30: a file system's identity ioctls on a host file (a bind
#      and the default view's /etc) reached the host kernel: the host disk's
#      UUID (EXT4_IOC_GETFSUUID, FS_IOC_GETFSUUID) and block device name
#      (FS_IOC_GETFSSYSFSPATH, "ext4/vda"). Now ENOTTY, as a file system
#      without them answers; FS_IOC_GETFSLABEL (EPERM before, the btrfs
#      class's deny) and FAT_IOCTL_GET_VOLUME_ID too ----
FSID_PY='
import errno, fcntl, os, struct, sys
out = []
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    for req, arg in ((0x8008662c, struct.pack("II", 16, 0) + bytes(16)), (0x80111500, bytes(17)),
                     (0x80811501, bytes(129)), (0x81009431, bytes(256)), (0x80047213, bytes(4))):
        try:
            r = fcntl.ioctl(fd, req, arg)
            out.append(r.hex())
        except OSError as e:
            out.append(errno.errorcode.get(e.errno, str(e.errno)))
    os.close(fd)
print(" ".join(out))'
echo id >"$T_TMP/fsid"
hid=$("$PY" -c "$FSID_PY" "$T_TMP/fsid" 2>&1)
huuid=${hid%% *}
huuid=${huuid:16:32}   # (struct fsuuid: len, flags, then the UUID)
case $huuid in
"" | *[!0-9a-f]* | 00000000000000000000000000000000) skip fs_uuid_ioctl_not_the_hosts "no EXT4_IOC_GETFSUUID here: $hid" ;;
*)
	got=$(moat run --bind "$T_TMP:/m" -- "$PY" -c "$FSID_PY" /m/fsid /etc/hostname </dev/null 2>&1)
	case $got in
	*"$huuid"*) fail fs_uuid_ioctl_not_the_hosts "HOST UUID LEAKED: $got (host: $hid)" ;;
	*) expect_eq fs_uuid_ioctl_not_the_hosts "$got" "$(echo ENOTTY{,,,,} ENOTTY{,,,,})" ;;
	esac
	;;
esac

# ---- red team 31: an inode's generation (FS_IOC_GETVERSION, _IOR('v', 1),
#      and ext4's own number for it, EXT4_IOC_GETVERSION _IOR('f', 3)) on a
#      host file of a bind was the host's: a random 32-bit value ext4 gives
#      each inode at its creation, kept for its life (with the inode number,
#      what an ext4 file handle holds; the same in every sandbox and run: a
#      fingerprint of the host's files). The second number was not trapped
#      at all. Now ENOTTY, as the default view's overlay and tmpfs answer ----
GEN_PY='
import errno, fcntl, os, struct, sys
out = []
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    for req in (0x80087601, 0x80086603):
        try:
            out.append(str(struct.unpack("i", fcntl.ioctl(fd, req, bytes(8))[:4])[0] & 0xffffffff))
        except OSError as e:
            out.append(errno.errorcode.get(e.errno, str(e.errno)))
    os.close(fd)
print(" ".join(out))'
echo gen >"$T_TMP/gen"
hgen=$("$PY" -c "$GEN_PY" "$T_TMP/gen" 2>&1)
case $hgen in
[1-9]*" "[1-9]*)
	got=$(moat run --bind "$T_TMP:/m" -- "$PY" -c "$GEN_PY" /m/gen </dev/null 2>&1)
	case " $got " in
	*" ${hgen%% *} "*) fail inode_generation_not_the_hosts "HOST GENERATION LEAKED: $got (host: $hgen)" ;;
	*) expect_eq inode_generation_not_the_hosts "$got" "ENOTTY ENOTTY" ;;
	esac
	;;
*) skip inode_generation_not_the_hosts "no inode generation here: $hgen" ;;
esac

# ---- red team 18: a name_to_handle_at handle carried the host st_dev in
#      clear (stat shows the guest a virtual one); now sealed, and
#      open_by_handle_at still opens it ----
echo handled >"$T_TMP/hfile"
hd=$(stat -c %d "$T_TMP/hfile")
got=$(moat run --user 0:0 --bind "$T_TMP:/m" -- "$PY" -c '
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(8 + 128); struct.pack_into("I", buf, 0, 128)
mid = ctypes.c_int()
if libc.name_to_handle_at(-100, b"/m/hfile", buf, ctypes.byref(mid), 0): print("n2h", os.strerror(ctypes.get_errno()))
dev = struct.unpack_from("Q", buf.raw, 8)[0]
mfd = os.open("/m", os.O_RDONLY)
fd = libc.open_by_handle_at(mfd, buf, os.O_RDONLY)
print(dev, os.read(fd, 16).decode().strip() if fd >= 0 else os.strerror(ctypes.get_errno()))' </dev/null 2>&1)
set -- $got
if [ "${1:-}" != "$hd" ] && [ "${2:-}" = handled ]; then ok handle_no_host_dev; else fail handle_no_host_dev "host dev $hd, guest [$got]"; fi

# ---- red team 18: statfs of a cow view (/usr of the default view) counts
#      the host file system's used blocks, read live: a guest saw another
#      tenant's writes in `df` as they happened; now read once per run ----
mkdir -p "$T_TMP/dfw" && chmod a+rwx "$T_TMP/dfw" && rm -f "$T_TMP/dfw/"*
moat run --bind "$T_TMP/dfw:/w:rw,shared" -- /bin/sh -c 'stat -f -c %b /usr >/w/a; : >/w/up
i=0; while [ ! -e /w/go ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i+1)); done; stat -f -c %b /usr >/w/b' </dev/null >/dev/null 2>&1 &
dfpid=$!
for ((i = 0; i < 100; i++)); do [ -e "$T_TMP/dfw/up" ] && break; sleep 0.02; done
dd if=/dev/zero of="$T_TMP/dfblob" bs=1M count=8 2>/dev/null
: >"$T_TMP/dfw/go"
wait $dfpid
rm -f "$T_TMP/dfblob"
expect_eq statfs_cow_used_not_live "$(cat "$T_TMP/dfw/a" 2>&1)" "$(cat "$T_TMP/dfw/b" 2>&1)"

finish
