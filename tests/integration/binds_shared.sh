#!/bin/bash
# --bind SRC:DST:ro,shared / rw,shared: the host changes the bound directory
# while the guest runs, and the guest sees every change at once (no cached
# lookup, positive or negative, no cached stat or symlink target; fs/dcache.h).
# Each step: the guest looks at the names first (so an exclusive mount would
# have them cached), tells the host through a FIFO, the host changes them and
# answers, and the guest looks again. The cases hold natively too (ok_sanity):
# they fail under moat only when something is stale. Also: the --bind option
# list refuses nonsense with exit 2 and one line.
. "$(dirname "$0")/lib.sh"

# The guest: argv = mount point, sync directory. Prints "step: observation"
# for each step after the host's change.
GUEST='
import os, select, stat, sys
m, sync = sys.argv[1], sys.argv[2]
g2h = os.open(sync + "/g2h", os.O_WRONLY)
h2g = os.open(sync + "/h2g", os.O_RDONLY | os.O_NONBLOCK)  # the host holds both ends
def look(p):
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return "-"
    except OSError as e:
        return e.__class__.__name__
    k = "d" if stat.S_ISDIR(st.st_mode) else "l" if stat.S_ISLNK(st.st_mode) else "f"
    s = "%s%o" % (k, stat.S_IMODE(st.st_mode))
    if k == "f":
        s += ",%d,%d" % (st.st_size, int(st.st_mtime))
    if k == "l":
        s += ">" + os.readlink(p)
    return s
def content(p):
    try:
        with open(p) as f:
            return f.read().strip()
    except OSError as e:
        return e.__class__.__name__
def step(name, fn):
    fn()                               # prime: what an exclusive mount caches
    os.write(g2h, (name + "\n").encode())
    r, _, _ = select.select([h2g], [], [], 60)
    if not r:
        print(name + ": timeout"); sys.exit(1)
    assert os.read(h2g, 64).decode().strip() == name
    print(name + ": " + fn(), flush=True)
def new():
    return " ".join([look(m + "/new"), content(m + "/new"), str("new" in os.listdir(m))])
def gone():
    return " ".join([look(m + "/del"), content(m + "/del")])
def renamed():
    return " ".join([look(m + "/a"), look(m + "/b"), content(m + "/b")])
def meta():
    return look(m + "/f")
def replaced():
    return " ".join([look(m + "/x/inner"), look(m + "/x")])
def retarget():
    return " ".join([content(m + "/ld/f"), look(m + "/l"), content(m + "/l")])
def deep():
    return " ".join([look(m + "/d1/d2/z"), content(m + "/d1/d2/z")])
def dirmove():
    return os.path.basename(os.getcwd()) + " " + content("here")
os.chdir(m + "/cwd")
for n, fn in [("new", new), ("gone", gone), ("renamed", renamed), ("meta", meta),
              ("replaced", replaced), ("retarget", retarget), ("deep", deep),
              ("dirmove", dirmove)]:
    step(n, fn)
'

# host_side DIR: perform each step's change when the guest asks for it.
host_side() {
	local d=$1 step
	while read -r -t 60 -u 7 step; do
		case $step in
		new) echo N >"$d/new" ;;
		gone) rm "$d/del" ;;
		renamed) mv "$d/a" "$d/b" ;;
		meta) echo more >>"$d/f"; chmod 600 "$d/f"; touch -m -d @1000000000 "$d/f" ;;
		replaced) rm "$d/x"; mkdir "$d/x"; : >"$d/x/inner" ;;
		retarget) ln -sfn t2 "$d/l"; ln -sfn dt2 "$d/ld" ;;
		deep) mkdir -p "$d/d1/d2"; echo Z >"$d/d1/d2/z" ;;
		dirmove) mv "$d/cwd" "$d/cwd2" ;;
		esac
		echo "$step" >&8
		[ "$step" = dirmove ] && return 0
	done
	return 1
}

# run_shared NAME OPTS: a fresh directory bound at /m with OPTS; checks each step.
run_shared() {
	local name=$1 opts=$2 d=$T_TMP/$1 s=$T_TMP/$1-sync out hp
	mkdir -p "$d/cwd" "$s"
	echo D >"$d/del"
	echo A >"$d/a"
	printf 'twelve bytes' >"$d/f"; chmod 644 "$d/f"; touch -m -d @1500000000 "$d/f"
	echo X >"$d/x"
	echo T1 >"$d/t1"; echo T2 >"$d/t2"; ln -s t1 "$d/l"
	mkdir "$d/dt1" "$d/dt2"; echo 1 >"$d/dt1/f"; echo 2 >"$d/dt2/f"; ln -s dt1 "$d/ld"
	echo H >"$d/cwd/here"
	chmod -R a+rX "$d"
	mkfifo "$s/h2g" "$s/g2h"
	chmod 666 "$s/h2g" "$s/g2h"
	exec 7<>"$s/g2h" 8<>"$s/h2g"
	host_side "$d" &
	hp=$!
	out=$(moat run --bind "$d:/m:$opts" --bind "$s:/sync:rw" -- \
		"$PY" -c "$GUEST" /m /sync </dev/null 2>&1)
	kill "$hp" 2>/dev/null; wait "$hp" 2>/dev/null
	exec 7>&- 8>&-
	got() { printf '%s\n' "$out" | sed -n "s/^$1: //p"; }
	mt() { stat -c %Y "$d/$1" 2>/dev/null; }
	SANITY=1 expect_eq "${name}_new_file_seen" "$(got new)" "f644,2,$(mt new) N True"
	SANITY=1 expect_eq "${name}_deleted_file_gone" "$(got gone)" "- FileNotFoundError"
	SANITY=1 expect_eq "${name}_renamed_file_moves" "$(got renamed)" "- f644,2,$(mt b) A"
	SANITY=1 expect_eq "${name}_size_mode_mtime_fresh" "$(got meta)" "f600,17,1000000000"
	SANITY=1 expect_eq "${name}_file_replaced_by_dir" "$(got replaced)" "f644,0,$(mt x/inner) d755"
	SANITY=1 expect_eq "${name}_symlink_retargeted" "$(got retarget)" "2 l777>t2 T2"
	SANITY=1 expect_eq "${name}_new_subtree_seen" "$(got deep)" "f644,2,$(mt d1/d2/z) Z"
	SANITY=1 expect_eq "${name}_cwd_renamed_on_host" "$(got dirmove)" "cwd2 H"
	[ "$(got dirmove)" ] || echo "# guest output: $(printf '%s' "$out" | tail -5)"
}
umask 022
run_shared ro_shared ro,shared
run_shared rw_shared rw,shared

# The option list: nonsense is refused before anything runs (exit 2, one line).
mkdir -p "$T_TMP/p"
refused() {
	local name=$1 spec=$2 want=$3 err rc
	err=$(moat run --bind "$spec" -- /bin/true 2>&1 </dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ $err == *"$want"* ]]; then
		ok_sanity "$name"
	else
		fail "$name" "exit $rc, message [$err] (want exit 2, one line with '$want')"
	fi
}
refused bind_bogus_option_refused "$T_TMP/p:/p:rw,bogus" "unknown option 'bogus'"
refused bind_two_modes_refused "$T_TMP/p:/p:ro,shared,rw" "'ro' and 'rw' both given"
refused bind_cow_shared_refused "$T_TMP/p:/p:cow,shared" "cow mount cannot be shared"
refused bind_empty_option_refused "$T_TMP/p:/p:rw," "unknown option ''"
SANITY=1 check bind_shared_alone_accepted moat run --bind "$T_TMP/p:/p:shared" -- /bin/true
finish
