#!/bin/bash
# bench/macro.sh: macro workloads and process loops, natively and under moat,
# bwrap, proot and runsc (ptrace platform) in ONE run; bench/run.sh calls it.
#
# usage: bench/macro.sh [--build DIR] [--quick] [--only KEY[,KEY...]]
# Prints a markdown table: median time per workload (hyperfine), the ratio to
# native, and moat against bwrap; then PSS per sandbox at 1 and 20 sandboxes.
# A missing runtime is n/a, with its reason printed above the table.
# Workloads that write run in a writable directory: an rw bind (moat --bind
# SRC:DST:rw, bwrap --bind), and for tar also a copy-on-write overlay (moat
# --bind SRC:DST:cow, bwrap --overlay-src/--tmp-overlay); native and proot
# write the host directory itself.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=$top/build
quick=0 only=""
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--quick) quick=1 ;;
	--only) only=,$2,; shift ;;
	*) echo "usage: bench/macro.sh [--build DIR] [--quick] [--only KEY,...]" >&2; exit 2 ;;
	esac
	shift
done
moat=$build/cli/moat
bdir=$build/bench
command -v hyperfine >/dev/null || { echo "bench: hyperfine missing (apt-get install hyperfine)" >&2; exit 1; }
for p in forkwait_loop forkexec_loop thread_loop pipe_loop; do
	[ -x "$bdir/$p" ] || { echo "bench: build first ($bdir/$p missing)" >&2; exit 1; }
done
RUNS=5 LOOPRUNS=3 N_FORK=1000 N_THREAD=5000 N_PIPE=50000 NSB=20
[ $quick = 1 ] && RUNS=2 LOOPRUNS=1 N_FORK=100 N_THREAD=500 N_PIPE=5000 NSB=5
want() { [ -z "$only" ] || [[ $only == *",$1,"* ]]; }

T=$(mktemp -d /tmp/moat-macro.XXXXXX) # inputs and the rw work directory
O=$(mktemp -d /tmp/moat-macro-ovl.XXXXXX) # the overlay's lower directory
chmod 755 "$T" "$O"
pids=()
# runsc do (root) chowns the host's /dev/null to nobody:nogroup (gVisor's
# doing, seen here: ctime and owner change at each `runsc do true`); the
# bench puts its owner back when it ends
devnull_owner=$(stat -c %u:%g /dev/null 2>/dev/null)
cleanup() {
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T" "$O"
	if [ -n "$devnull_owner" ] && [ "$(stat -c %u:%g /dev/null 2>/dev/null)" != "$devnull_owner" ]; then
		chown "$devnull_owner" /dev/null 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$T/w" "$T/home" "$T/bin"
cp "$bdir"/forkwait_loop "$bdir"/forkexec_loop "$bdir"/thread_loop "$bdir"/pipe_loop "$T/bin/"
W=$T/w
# one environment for every runtime, moat's own defaults (the caller's PATH
# may hold wrappers, e.g. a pyenv shim for python3, that moat never sees)
CLEAN=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$T/home" LANG=C.UTF-8 TERM=xterm)

# --- inputs (made natively, once) ---
mkfiles() { # mkfiles DIR N: N small files in 10 subdirectories
	python3 - "$1" "$2" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    sub = os.path.join(d, "d%02d" % (i % 10))
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, "f%05d.txt" % i), "w") as f:
        f.write(("line %d of file %d\n" % (i, i)) * (1 + i % 20))
PY
}
G="git -c user.name=bench -c user.email=bench@example.com -c safe.directory=* -c init.defaultBranch=main"
mkfiles "$T/src500" 500
mkfiles "$T/st5000" 5000
(cd "$T/st5000" && $G init -q && $G add -A && $G commit -qm init) || echo "bench: git setup failed" >&2
mkfiles "$T/tarsrc" 3000
tar -cf "$T/t3000.tar" -C "$T/tarsrc" . && rm -rf "$T/tarsrc"
python3 - "$T/big.c" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("#include <string.h>\n#include <stdlib.h>\n")
    for i in range(200):   # 200 functions of 10 lines: 2,000 lines
        f.write("int f%d(int *a, int n) {\n  int s = %d;\n  for (int i = 0; i < n; i++) {\n"
                "    s += a[i] * %d;\n    if (s > 1000) s -= a[i] >> 1;\n    else s ^= i;\n"
                "  }\n  qsort(a, n, sizeof *a, 0);\n  return s + (int)strlen((char *)a);\n}\n" % (i, i, i + 1))
PY
mkdir -p "$W/proj"
for i in 1 2 3 4 5 6 7 8; do
	python3 -c "
import sys
print('#include <stdio.h>')
for j in range(40):
    print('int m${i}_%d(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * %d; return s; }' % (j, j))
print('int part${i}(void) { return m${i}_1(3); }')" > "$W/proj/p$i.c"
done
{
	printf 'int part%d(void);\n' 1 2 3 4 5 6 7 8
	printf 'int main(void) { return part1() + part2() + part3() + part4() + part5() + part6() + part7() + part8() > 0 ? 0 : 1; }\n'
} > "$W/proj/main.c"
printf 'OBJS = main.o p1.o p2.o p3.o p4.o p5.o p6.o p7.o p8.o\napp: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) -O2 -pipe -c $<\n' > "$W/proj/Makefile"
chmod -R a+rwX "$T" "$O"

# --- runtimes: a prefix with the rw work directory, and one with the overlay ---
runtimes=(native moat bwrap proot runsc)
declare -A prefix oprefix avail why
prefix[native]="" oprefix[native]=""
prefix[moat]="$moat run --bind $T:$T:rw --env HOME=$T/home --"
oprefix[moat]="$moat run --bind $T:$T:ro --bind $O:$O:cow --env HOME=$T/home --"
prefix[bwrap]="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind $T $T --unshare-all --setenv HOME $T/home --"
oprefix[bwrap]="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --ro-bind $T $T --overlay-src $O --tmp-overlay $O --unshare-all --setenv HOME $T/home --"
prefix[proot]="proot -r /" oprefix[proot]="proot -r /"
prefix[runsc]="runsc --network=none --platform=ptrace do" oprefix[runsc]="${prefix[runsc]}"
# bwrap < 0.9 has no overlay: that row is n/a for it (said below the table)
bwrap --help 2>&1 | grep -q -- --overlay-src || oprefix[bwrap]=-
avail[native]=1
for r in moat bwrap proot runsc; do
	avail[$r]=0
	read -r -a cmd0 <<<"${prefix[$r]}"
	if ! command -v "${cmd0[0]}" >/dev/null; then why[$r]="not installed"; continue; fi
	if [ "$r" = runsc ] && [ "$(id -u)" != 0 ]; then why[$r]="runs as root only"; continue; fi
	# shellcheck disable=SC2086
	if timeout 60 ${prefix[$r]} /bin/true >/dev/null 2>&1; then avail[$r]=1; else why[$r]="cannot start /bin/true"; fi
done
for r in "${runtimes[@]}"; do [ "${avail[$r]}" = 1 ] || echo "bench: $r skipped: ${why[$r]}" >&2; done

declare -A val
json_median() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print(r["median"]*1e3 if r.get("exit_codes", [0]).count(0) == len(r.get("exit_codes", [0])) else "")' "$1" 2>/dev/null; }
# hf KEY RUNTIME OVERLAY PREPARE CMD...: median ms of CMD under the runtime
hf() {
	local key=$1 r=$2 ovl=$3 prep=$4 pre
	shift 4
	[ "$ovl" = 1 ] && pre=${oprefix[$r]} || pre=${prefix[$r]}
	[ "$pre" = - ] && return
	local args=(-N --warmup 1 --runs "$RUNS" --export-json "$T/hf.json")
	[ -n "$prep" ] && args+=(--prepare "$prep")
	rm -f "$T/hf.json"
	if ! "${CLEAN[@]}" hyperfine "${args[@]}" "$pre $*" >"$T/hf.log" 2>&1; then
		echo "bench: $key under $r failed: $(grep -m1 -i 'error\|fail' "$T/hf.log")" >&2
		return
	fi
	val[$key,$r]=$(json_median "$T/hf.json")
}
# loop KEY RUNTIME PROG N: ns per op, the median of LOOPRUNS runs
loop() {
	local out=() i v
	for ((i = 0; i < LOOPRUNS; i++)); do
		# shellcheck disable=SC2086
		v=$("${CLEAN[@]}" timeout 600 ${prefix[$2]} "$T/bin/$3" "$4" 2>/dev/null | awk '{print $2}')
		[ -n "$v" ] && out+=("$v")
	done
	[ ${#out[@]} -gt 0 ] && val[$1,$2]=$(printf '%s\n' "${out[@]}" | sort -g | sed -n "$(((${#out[@]} + 1) / 2))p")
}

# one workload at a time under every runtime in turn: a load that changes
# during the run (shared machines) then weighs on every column alike
one() { # one KEY RUNTIME
	local r=$2
	case $1 in
	true) hf true "$r" 0 "" /bin/true ;;
	git_commit) hf git_commit "$r" 0 "sh -c 'rm -rf $W/gc && cp -r $T/src500 $W/gc'" \
		sh -c "'cd $W/gc && $G init -q && $G add -A && $G commit -qm m'" ;;
	git_status) hf git_status "$r" 0 "" $G -C "$T/st5000" status --porcelain ;;
	tar_rw) hf tar_rw "$r" 0 "sh -c 'rm -rf $W/x'" \
		sh -c "'mkdir $W/x && tar -xf $T/t3000.tar -C $W/x && rm -rf $W/x'" ;;
	tar_ovl) hf tar_ovl "$r" 1 "sh -c 'rm -rf $O/x'" \
		sh -c "'mkdir $O/x && tar -xf $T/t3000.tar -C $O/x && rm -rf $O/x'" ;;
	# tree walks relative to a directory fd (fts: fstatat/openat(dirfd,
	# name) per name), the system view's /usr/include (~9,000 names)
	du) hf du "$r" 0 "" du -s /usr/include ;;
	grep_r) hf grep_r "$r" 0 "" grep -r -c -s PTHREAD_MUTEX_INITIALIZER /usr/include ;;
	py_pass) hf py_pass "$r" 0 "" python3 -c pass ;;
	py_import) hf py_import "$r" 0 "" python3 -c "'import json, sqlite3, ssl'" ;;
	gcc) hf gcc "$r" 0 "" gcc -O2 -pipe -c "$T/big.c" -o /dev/null ;;
	make) hf make "$r" 0 "sh -c 'rm -f $W/proj/*.o $W/proj/app'" make -s -j2 -C "$W/proj" ;;
	fork_wait) loop fork_wait "$r" forkwait_loop $N_FORK ;;
	fork_exec) loop fork_exec "$r" forkexec_loop $N_FORK ;;
	thread) loop thread "$r" thread_loop $N_THREAD ;;
	pipe) loop pipe "$r" pipe_loop $N_PIPE ;;
	esac
}
for k in true git_commit git_status tar_rw tar_ovl du grep_r py_pass py_import gcc make fork_wait fork_exec thread pipe; do
	want $k || continue
	for r in "${runtimes[@]}"; do
		[ "${avail[$r]}" = 1 ] && one $k "$r"
	done
done

# --- PSS per sandbox: N idle sandboxes (`sleep`), the runtime's processes only ---
descendants() { ps -e -o pid=,ppid= | awk -v root="$1" '{ parent[$1] = $2 } END { for (p in parent) { q = p; while (q in parent && q != root && q > 1) q = parent[q]; if (q == root) print p } }'; }
pss_of() { # pss_of RUNTIME N -> MiB per sandbox
	local r=$1 n=$2 i p q k kb=0 mine=()
	for ((i = 0; i < n; i++)); do
		# shellcheck disable=SC2086
		"${CLEAN[@]}" ${prefix[$r]} /bin/sleep 120 </dev/null >/dev/null 2>&1 &
		mine+=($!)
		pids+=($!)
	done
	sleep $((2 + n / 4))
	for p in "${mine[@]}"; do
		for q in $(descendants "$p"); do
			[ "$(cat "/proc/$q/comm" 2>/dev/null)" = sleep ] && continue
			k=$(awk '/^Pss:/ {print $2}' "/proc/$q/smaps_rollup" 2>/dev/null)
			kb=$((kb + ${k:-0}))
		done
	done
	for p in "${mine[@]}"; do
		local kids
		kids=$(descendants "$p")
		kill -9 "$p" 2>/dev/null
		for q in $kids; do kill -9 "$q" 2>/dev/null; done
		{ wait "$p"; } 2>/dev/null
	done
	awk -v k=$kb -v n="$n" 'BEGIN { printf "%.2f", k / 1024 / n }'
}
if want pss; then
	for r in moat bwrap proot runsc; do
		[ "${avail[$r]}" = 1 ] || continue
		val[pss1,$r]=$(pss_of "$r" 1)
		val[pssN,$r]=$(pss_of "$r" $NSB)
	done
fi

# --- the table ---
fmt() { # fmt KEY RUNTIME UNIT SCALE
	local v=${val[$1,$2]:-} n=${val[$1,native]:-}
	[ -z "$v" ] && { printf 'n/a'; return; }
	if [ -n "$n" ] && [ "$2" != native ]; then
		awk -v v="$v" -v n="$n" -v u="$3" -v s="$4" 'BEGIN { printf "%.3g %s (%.2fx)", v / s, u, v / n }'
	else
		awk -v v="$v" -v u="$3" -v s="$4" 'BEGIN { printf "%.3g %s", v / s, u }'
	fi
}
vs_bwrap() {
	local m=${val[$1,moat]:-} b=${val[$1,bwrap]:-}
	[ -n "$m" ] && [ -n "$b" ] && awk -v m="$m" -v b="$b" 'BEGIN { printf "%.2fx", m / b }' || printf 'n/a'
}
echo "moat macro bench, $(date -u +%Y-%m-%d), $(uname -r), $(nproc) CPUs, hyperfine medians of $RUNS runs (loops: median of $LOOPRUNS)"
echo
printf '| workload | %s | moat/bwrap |\n' "$(IFS='|'; echo "${runtimes[*]}" | sed 's/|/ | /g')"
printf '|---|%s---|\n' "$(for r in "${runtimes[@]}"; do printf -- '---|'; done)"
row() { # row KEY LABEL UNIT SCALE
	want "$1" || return 0
	local r
	printf '| %s |' "$2"
	for r in "${runtimes[@]}"; do printf ' %s |' "$(fmt "$1" "$r" "$3" "$4")"; done
	printf ' %s |\n' "$(vs_bwrap "$1")"
}
row true '`true` start-up' ms 1
row git_commit '`git init`+`add -A`+`commit`, 500 files (rw bind)' ms 1
row git_status '`git status`, 5,000-file work tree' ms 1
row tar_rw '`tar -xf` 3,000 files + `rm -rf` (rw bind)' ms 1
row tar_ovl '`tar -xf` 3,000 files + `rm -rf` (overlay)' ms 1
row du '`du -s /usr/include` (~9,000 names)' ms 1
row grep_r '`grep -r` over `/usr/include`' ms 1
row py_pass '`python3 -c pass`' ms 1
row py_import "\`python3 -c 'import json, sqlite3, ssl'\`" ms 1
row gcc '`gcc -O2` of a 2,000-line file' ms 1
row make '`make -j2`, 9 C files' ms 1
row fork_wait 'fork+wait' µs 1000
row fork_exec 'fork+exec /bin/true' µs 1000
row thread 'thread create+join' µs 1000
row pipe 'pipe ping-pong, round trip' µs 1000
if want pss; then
	for k in pss1 pssN; do
		[ $k = pss1 ] && printf '| PSS per idle sandbox, 1 sandbox |' || printf '| PSS per idle sandbox, %d sandboxes |' $NSB
		for r in "${runtimes[@]}"; do
			if [ "$r" = native ]; then printf ' - |'; else printf ' %s |' "$([ -n "${val[$k,$r]:-}" ] && echo "${val[$k,$r]} MiB" || echo n/a)"; fi
		done
		m=${val[$k,moat]:-} b=${val[$k,bwrap]:-}
		printf ' %s |\n' "$([ -n "$m" ] && [ -n "$b" ] && awk -v m="$m" -v b="$b" 'BEGIN { printf "%.2fx", m / b }' || echo n/a)"
	done
fi
for r in "${runtimes[@]}"; do [ "${avail[$r]}" = 1 ] || echo "$r: n/a (${why[$r]})"; done
[ "${oprefix[bwrap]}" = - ] && echo "bwrap overlay: n/a (this bwrap has no --overlay-src; 0.9 added it)"
