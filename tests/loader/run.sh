#!/bin/sh
# tests/loader/run.sh LOADER HARNESS PROBE_DIR
#
# Runs programs through the loader with loader-harness playing the sentry,
# and checks what they see. Exit 0: all passed; 1: a failure; 77: skipped
# (no seccomp user notification here). The last line counts the cases:
# "loader: N passed, M failed, K skipped".
set -u
L=$1
H=$2
D=$3
exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
fails=0
skips=0
skip() { skips=$((skips + 1)); echo "ok - # skip $1"; }
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() {
	n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"
	[ -s "$T/err" ] && sed 's/^/#   stderr: /' "$T/err" | head -5
	return 0
}

# run PROGRAM [harness options] -- ARGV...: stdout in $T/out, status in $st
run() {
	"$H" "$L" "$@" >"$T/out" 2>"$T/err"
	st=$?
}

# expect NAME STATUS EXPECTED_STDOUT PROGRAM [opts] -- ARGV...
expect() {
	name=$1 want_st=$2 want_out=$3
	shift 3
	run "$@"
	printf '%s\n' "$want_out" >"$T/want"
	if [ "$st" != "$want_st" ]; then
		bad "$name (status $st, want $want_st)"
	elif [ -n "$want_out" ] && ! cmp -s "$T/want" "$T/out"; then
		bad "$name (output)"
		diff "$T/want" "$T/out" | head -10 | sed 's/^/#   /'
	else
		ok "$name"
	fi
}

# has NAME PATTERN: the last run's stdout has a line matching PATTERN
has() {
	if grep -qx -- "$2" "$T/out"; then ok "$1"; else bad "$1"; fi
}

"$H" "$L" /bin/true -- true >/dev/null 2>"$T/err"
case $? in
0) ;;
125)
	echo "# skip: $(cat "$T/err")"
	echo "loader: 0 passed, 0 failed, 1 skipped"
	exit 77
	;;
*)
	echo "not ok - /bin/true does not run at all"
	cat "$T/err"
	exit 1
	;;
esac

size=$(wc -c <"$L")
if [ "$size" -lt 16384 ]; then ok "loader size $size < 16 KiB"; else bad "loader size $size"; fi
if [ -x "$D/loader-blob-dump" ]; then
	"$D/loader-blob-dump" >"$T/blob"
	if cmp -s "$T/blob" "$L"; then ok "embedded blob is the loader"; else bad "embedded blob"; fi
fi

expect "true" 0 "" /bin/true -- true
expect "false" 1 "" /bin/false -- false
expect "sh -c echo \$0 \$1" 0 "a b" /bin/sh -- sh -c 'echo $0 $1' a b
expect "killed by signal" 143 "" /bin/sh -- sh -c 'kill -TERM $$'
expect "exit status" 42 "" /bin/sh -- sh -c 'exit 42'
expect "cat /proc/pid/comm" 0 "sh" /bin/sh -- sh -c 'cat /proc/$$/comm'

# environment passed exactly
env -i A=1 'B=x  y' E= 'W= lead' "$H" "$L" /usr/bin/env -- env >"$T/out" 2>"$T/err"
st=$?
printf 'A=1\nB=x  y\nE=\nW= lead\n' >"$T/want"
if [ $st = 0 ] && cmp -s "$T/want" "$T/out"; then ok "env exact"; else bad "env exact"; fi
env -i "$H" "$L" /usr/bin/env -- env >"$T/out" 2>"$T/err"
if [ $? = 0 ] && [ ! -s "$T/out" ]; then ok "empty env"; else bad "empty env"; fi

# argv preserved exactly (empty strings, spaces)
expect "argv exact" 0 "" "$D/loader-probe-pie" -- p '' 'a b' '  ' '' x
has "argv empty" 'argv\[1\]=\[\]'
has "argv space" 'argv\[2\]=\[a b\]'
has "argv blanks" 'argv\[3\]=\[  \]'
has "argv last" 'argv\[5\]=\[x\]'
has "argc" 'argc=6'
expect "argv only argv0" 0 "" "$D/loader-probe-pie" -- p
has "argc 1" 'argc=1'

# every probe flavour sees what it sees when the kernel runs it
for p in pie nopie align static static-pie; do
	f=$D/loader-probe-$p
	[ -x "$f" ] || { skip "$p (not built)"; continue; }
	"$f" one '' 'two words' >"$T/native" 2>&1
	run "$f" -- "$f" one '' 'two words'
	if [ $st = 0 ] && cmp -s "$T/native" "$T/out" && ! grep -q BAD "$T/out"; then
		ok "probe $p same as native"
	else
		bad "probe $p same as native"
		diff "$T/native" "$T/out" | head -10 | sed 's/^/#   /'
	fi
done
# layouts the kernel itself cannot run: shared pages, packed segments
for p in tight static-tight; do
	f=$D/loader-probe-$p
	[ -x "$f" ] || continue
	run "$f" -- "$f" one
	if [ $st = 0 ] && grep -qx 'bss=ok' "$T/out" && ! grep -q BAD "$T/out" &&
	    grep -qx 'argv\[1\]=\[one\]' "$T/out"; then
		ok "probe $p (packed segments)"
	else
		bad "probe $p (packed segments)"
		sed 's/^/#   /' "$T/out"
	fi
done

# a program on a noexec host mount cannot be mmap'ed PROT_EXEC: copied
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
	mkdir "$T/nx"
	unshare -m sh -c 'mount -t tmpfs -o noexec none "$1" || exit 77
		cp "$2" "$1/p" && exec "$3" "$4" "$1/p" -- p x' sh \
		"$T/nx" "$D/loader-probe-pie" "$H" "$L" >"$T/out" 2>"$T/err"
	st=$?
	if [ $st = 77 ]; then
		skip "noexec mount (cannot mount)"
	elif [ $st = 0 ] && grep -qx 'bss=ok' "$T/out" && grep -qx 'argv\[1\]=\[x\]' "$T/out"; then
		ok "segments copied when mmap is refused (noexec)"
	else
		bad "segments copied when mmap is refused (noexec) (status $st)"
	fi
fi

# AT_EXECFN, comm, AT_RANDOM, vDSO
expect "execfn" 0 "" "$D/loader-probe-pie" --execfn /some/where -- p
has "AT_EXECFN from the exec info" 'execfn=/some/where'
has "AT_RANDOM" 'random=ok'
has "vDSO clock_gettime" 'vdso=ok'
has "AT_ENTRY" 'entry=ok'
has "AT_PHDR" 'phdr=ok'
has "bss zero" 'bss=ok'
has "fds closed" 'fd3=ok'
has "host /proc/self/cmdline" 'cmdline=ok'
has "comm default" 'name=loader-probe-pi'
expect "comm" 0 "" "$D/loader-probe-pie" --comm my-prog -- p
has "PR_GET_NAME" 'name=my-prog'
has "/proc/self/comm" 'comm=my-prog'
expect "static comm/execfn" 0 "" "$D/loader-probe-static" --comm st --execfn /x/st -- p
has "static PR_GET_NAME" 'name=st'
has "static AT_EXECFN" 'execfn=/x/st'

# #! scripts: prefix [interpreter, script], skip the old argv[0]
printf '#!/bin/sh\necho "script:$0:$1:$#"\n' >"$T/x.sh"
expect "script via /bin/sh" 0 "script:$T/x.sh:arg1:1" \
	/bin/sh --prefix /bin/sh --prefix "$T/x.sh" --skip 1 \
	--execfn "$T/x.sh" --comm x.sh -- "$T/x.sh" arg1
expect "script argv" 0 "" "$D/loader-probe-pie" \
	--prefix /usr/bin/probe --prefix -opt --prefix "$T/x.sh" --skip 1 \
	--execfn "$T/x.sh" --comm x.sh -- x.sh 'a 1' ''
has "script argc" 'argc=5'
has "script argv0" 'argv\[0\]=\[/usr/bin/probe\]'
has "script argv1" 'argv\[1\]=\[-opt\]'
has "script argv2" "argv\\[2\\]=\\[$T/x.sh\\]"
has "script argv3" 'argv\[3\]=\[a 1\]'
has "script argv4" 'argv\[4\]=\[\]'
has "script execfn" "execfn=$T/x.sh"
has "script comm" 'comm=x.sh'

# real programs
if [ -x /usr/bin/python3 ]; then
	py=$(readlink -f /usr/bin/python3)
	expect "python3 (non-PIE)" 0 "['-c', 'x', 'y z']" "$py" -- /usr/bin/python3 -c \
		'import sys,json,hashlib,sqlite3; print(sys.argv)' x 'y z'
fi
ldso=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || true)
if [ -n "$ldso" ]; then
	expect "ld.so run as the program" 0 "via ld.so" "$ldso" -- ld.so /bin/echo via ld.so
fi
bb=$(command -v busybox 2>/dev/null || true)
if [ -n "$bb" ]; then
	bb=$(readlink -f "$bb")
	expect "busybox echo" 0 "hi there" "$bb" -- busybox echo hi there
	expect "busybox sh" 0 "42" "$bb" -- sh -c 'echo $((6*7))'
else
	skip "busybox (not installed)"
fi

# big argv and environment (the stack grows)
big=$(head -c 100000 /dev/zero | tr '\0' x)
BIG=$big "$H" "$L" /bin/sh -- sh -c 'echo $# ${#BIG}' $(seq 1 5000) >"$T/out" 2>"$T/err"
if [ $? = 0 ] && [ "$(cat "$T/out")" = "4999 100000" ]; then ok "big argv/env"; else bad "big argv/env"; fi

# the loader itself makes only the syscalls the filter may allow natively
if command -v strace >/dev/null 2>&1 && [ -x "$D/loader-probe-static" ]; then
	strace -f -qq -o "$T/strace" "$H" "$L" "$D/loader-probe-static" -- p >/dev/null 2>&1
	awk -v L="$L" '
		$2 == "execve(\"" L "\"," { pid = $1; on = 1; next }
		on && $1 == pid && $2 ~ /^[a-z]/ {
			n = $2; sub(/\(.*/, "", n); print n
			if (n == "munmap") exit
		}' "$T/strace" >"$T/calls"
	grep -vx -e mmap -e munmap -e mprotect -e pread64 -e read -e close \
		-e prctl -e write -e exit_group -e syscall_0x6d6f "$T/calls" >"$T/extra"
	if [ -s "$T/calls" ] && [ ! -s "$T/extra" ] && grep -qx munmap "$T/calls"; then
		ok "loader syscalls within the allowlist"
	else
		bad "loader syscalls: $(tr '\n' ' ' <"$T/extra")"
	fi
fi

# errors: exit 127 with a message on fd 2
printf 'not an elf\n' >"$T/text"
run "$T/text" --interp none -- text
if [ $st = 127 ] && grep -q '^moat-loader: cannot load the program' "$T/err"; then
	ok "not an ELF"
else
	bad "not an ELF (status $st)"
fi
run /bin/true --interp none -- true
if [ $st = 127 ] && grep -q '^moat-loader: program needs an interpreter' "$T/err"; then
	ok "missing interpreter"
else
	bad "missing interpreter (status $st)"
fi
"$L" >"$T/out" 2>"$T/err"
st=$?
if [ $st = 127 ] && grep -q '^moat-loader: not started by moat' "$T/err"; then
	ok "loader without sentry"
else
	bad "loader without sentry (status $st)"
fi

echo "1..$n"
echo "loader: $((n - fails)) passed, $fails failed, $skips skipped"
[ $fails = 0 ] && [ $n -gt $fails ]
