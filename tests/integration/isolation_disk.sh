#!/bin/bash
# NEGATIVE tests, --disk N: every writable layer (/tmp, the home, /dev/shm,
# a tmpfs the guest mounts, a cow bind's and the overlay's changes) shares
# one cap: a guest filling it gets ENOSPC, also writing natively through a
# held fd, and no upper layer lands on the host disk (no scratch directory
# appears under $TMPDIR or /var/tmp even with MOAT_COW_SCRATCH=host).
# Natively (fake-moat) the writes would land in the host's /tmp, /dev/shm and
# /etc: against the fake every case fails without running.
. "$(dirname "$0")/lib.sh"

if [ "$MOAT" != "${MOAT%fake-moat}" ]; then
	for c in tmp_enospc_at_quota one_quota_for_all_layers cow_enospc_upper_not_on_host \
		 overlay_enospc_at_quota cow_statfs_at_quota_path_and_fd tmpfs_inodes_follow_size; do
		fail $c "not run natively (it would fill the host's directories)"
	done
	finish
fi

H=$T_TMP/host
mkdir -p "$H/cow"
chmod -R a+rwX "$H"
# fill DIR: write 64K blocks through one fd until an error; print its errno
# name and how many KiB went in
FILL='import errno, os, sys
fd = os.open(sys.argv[1] + "/moat-disk-fill", os.O_WRONLY | os.O_CREAT, 0o644)
n = 0
try:
    while n < 16 << 20:
        n += os.write(fd, b"x" * 65536)
    print("no error", n >> 10)
except OSError as e:
    print(errno.errorcode[e.errno], "%d" % (n >> 20 >= 3 and n >> 20 <= 4))'

out=$(moat run --disk 4M -- $PY -c "$FILL" /tmp 2>&1)
expect_eq tmp_enospc_at_quota "$out" "ENOSPC 1"

out=$(moat run --disk 4M -- /bin/sh -c "head -c 3000000 /dev/zero > /tmp/a && $PY -c '$FILL' /dev/shm" 2>&1)
expect_eq one_quota_for_all_layers "$out" "ENOSPC 0"

if moat run --disk 4M --bind "$H/cow:/c:cow" -- /bin/true >/dev/null 2>&1; then
	marker=$T_TMP/marker; : >"$marker"
	out=$(MOAT_COW_SCRATCH=host moat run --disk 4M --bind "$H/cow:/c:cow" -- $PY -c "$FILL" /c 2>&1)
	new=$(find "${TMPDIR:-/tmp}" /var/tmp -maxdepth 1 -name 'moat-cow.*' -newer "$marker" 2>/dev/null)
	expect_eq cow_enospc_upper_not_on_host "$out|$(ls "$H/cow")|$new" "ENOSPC 1||"
	# issue 7: statfs of a cow bind under --disk says the quota's free
	# space, by path and through a held fd alike (before: the fd said the
	# upper layer alone, the path upper + the lower's used blocks)
	echo f >"$H/cow/f"; chmod a+r "$H/cow/f"
	out=$(moat run --disk 4M --bind "$H/cow:/c:cow" -- $PY -c '
import os
s = os.statvfs("/c/f"); fd = os.open("/c/f", os.O_RDONLY); t = os.fstatvfs(fd)
print((s.f_blocks, s.f_files) == (t.f_blocks, t.f_files), s.f_bavail * s.f_frsize <= 4 << 20, t.f_bavail * t.f_frsize <= 4 << 20)' 2>&1)
	rm -f "$H/cow/f"
	expect_eq cow_statfs_at_quota_path_and_fd "$out" "True True True"
	if [ "$(id -u)" = 0 ]; then
		out=$(moat run --disk 4M --overlay memory -- $PY -c "$FILL" /etc 2>&1)
		expect_eq overlay_enospc_at_quota "$out" "ENOSPC 1"
	else
		skip overlay_enospc_at_quota "rootless: the overlay of root-owned /etc is not writable"
	fi
else
	why=$(moat run --disk 4M --bind "$H/cow:/c:cow" -- /bin/true 2>&1 | head -1)
	case $why in
	*"user xattrs (Linux >= 6.6)"*) skip cow_enospc_upper_not_on_host "$why" ;;
	*) fail cow_enospc_upper_not_on_host "start-up: $why" ;;
	esac
fi

# red team 58: a tmpfs's size= bounds its data, not its inodes (the
# kernel's default nr_inodes is half of the host's RAM in pages for each
# tmpfs, whatever its size): empty files with long names held ~1.5 KiB of
# host kernel memory each, `df` saying 0 used, ~4.5 GB per 512M tmpfs
# without --disk/--memory. Now a tmpfs the guest writes has size/1024
# inodes (at least 4096), as the --disk pool: a 1M one is ENOSPC by the
# 4096th file, the default 512M /tmp has 524288.
INODES='import errno, os, sys
n = 0
try:
    while n < 6000:
        os.close(os.open("/t/f%05d" % n, os.O_CREAT | os.O_WRONLY, 0o600))
        n += 1
    r = "no error %d" % n
except OSError as e:
    r = "%s %d" % (errno.errorcode[e.errno], n <= 4096)
print(r, os.statvfs("/tmp").f_files <= 524288)'
out=$(moat run --tmpfs /t:size=1M -- $PY -c "$INODES" 2>&1)
expect_eq tmpfs_inodes_follow_size "$out" "ENOSPC 1 True"

finish
