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
finish
