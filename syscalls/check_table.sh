#!/bin/sh
# syscalls/check_table.sh - build-time check of syscall_table.def.
#
#   check_table.sh CC TABLE.def STAMP
#
# 1. Every row has the one strict form (so the table stays greppable):
#      SYSCALL(nr, name, ARGS(A_...), class, handler, status, "note")
# 2. Numbers and names are unique, rows are in number order, nr < SC_NR_MAX.
# 3. Every __NR_<name> that <asm/unistd.h> defines (read with `CC -dD -E`, as
#    minijail's gen_syscalls.sh does) has a row with the same number, and no
#    row gives a header number to another name. Rows the header does not know
#    are allowed: the build host's headers may be older than the kernel.
# 4. EMULATE, FAST_TRAP and FAST_TRAP_UNLESS[_NET] rows name the handler sys_<name>; other rows NONE_H.
# 5. No more PATH/STR and OPEN_HOW/SOCKADDR arguments per row than the
#    pipeline has copy-in slots for (strbuf/structbuf of struct sc_call, read
#    from sc.h next to the .def).
# On success STAMP is written; on failure the problems go to stderr, exit 1.
set -eu
CC=$1
DEF=$2
STAMP=$3
NR_MAX=512
SC_H=$(dirname "$DEF")/sc.h
NSTR=$(sed -n 's/.*char strbuf\[\([0-9]*\)\].*/\1/p' "$SC_H")
NBUF=$(sed -n 's/.*structbuf\[\([0-9]*\)\].*/\1/p' "$SC_H")
if [ -z "$NSTR" ] || [ -z "$NBUF" ]; then
	echo "check_table: cannot read the copy-in slots from $SC_H" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo '#include <asm/unistd.h>' | $CC -dD -E - |
	awk '$1 == "#define" && $2 ~ /^__NR_/ { sub(/^__NR_/, "", $2); print $2, $3 }' \
	>"$tmp/header"
if [ ! -s "$tmp/header" ]; then
	echo "check_table: no __NR_ definitions from <asm/unistd.h>" >&2
	exit 1
fi

grep '^SYSCALL(' "$DEF" >"$tmp/rows" || true
if grep -n '^[[:space:]]\{1,\}SYSCALL(' "$DEF" >&2; then
	echo "check_table: rows must start at column 0" >&2
	exit 1
fi

awk -v nrmax="$NR_MAX" -v nstrmax="$NSTR" -v nbufmax="$NBUF" -v hdr="$tmp/header" '
BEGIN {
	while ((getline line < hdr) > 0) {
		split(line, f, " ")
		if (f[2] !~ /^[0-9]+$/) {
			printf "check_table: header: __NR_%s is not a number: %s\n", f[1], f[2] > "/dev/stderr"
			bad = 1
			continue
		}
		hnr[f[1]] = f[2] + 0
		hname[f[2] + 0] = f[1]
	}
	re = "^SYSCALL\\(([0-9]+), ([a-z0-9_]+), ARGS\\(((A_[A-Z_]+)(, A_[A-Z_]+)*)?\\), " \
	     "(FAST|EMULATE|EXEC|KILL|DENY_ERR\\(E[A-Z0-9]+\\)|FAST_EXCEPT\\([a-z0-9_]+, E[A-Z0-9]+\\)|FAST_ONLY\\([a-z0-9_]+, E[A-Z0-9]+\\)|FAST_TRAP\\([a-z0-9_]+\\)|FAST_TRAP_UNLESS\\([a-z0-9_]+\\)|FAST_TRAP_UNLESS_NET\\([a-z0-9_]+, [a-z0-9_]+\\)|EXEC_UNLESS\\([a-z0-9_]+\\)), " \
	     "([a-z0-9_]+|NONE_H), (FULL|PARTIAL|NONE), \"[^\"]*\"\\)$"
	last = -1
}
{
	if ($0 !~ re) {
		printf "check_table: malformed row: %s\n", $0 > "/dev/stderr"
		bad = 1
		next
	}
	s = $0
	sub(/^SYSCALL\(/, "", s)
	nr = substr(s, 1, index(s, ",") - 1) + 0
	s = substr(s, index(s, ",") + 2)
	name = substr(s, 1, index(s, ",") - 1)
	s = substr(s, index(s, "ARGS(") + 5)
	args = substr(s, 1, index(s, ")") - 1)
	s = substr(s, index(s, ")") + 3)
	if (s ~ /^(DENY_ERR|FAST_EXCEPT|FAST_ONLY|FAST_TRAP_UNLESS_NET|FAST_TRAP_UNLESS|FAST_TRAP|EXEC_UNLESS)\(/) {
		cls = substr(s, 1, index(s, "(") - 1)
		s = substr(s, index(s, ")") + 3)
	} else {
		cls = substr(s, 1, index(s, ",") - 1)
		s = substr(s, index(s, ",") + 2)
	}
	handler = substr(s, 1, index(s, ",") - 1)

	if (nr >= nrmax) {
		printf "check_table: %s: number %d >= SC_NR_MAX %d\n", name, nr, nrmax > "/dev/stderr"
		bad = 1
	}
	if (nr <= last) {
		printf "check_table: %s: row %d is out of order (after %d)\n", name, nr, last > "/dev/stderr"
		bad = 1
	}
	last = nr
	if (nr in tname) {
		printf "check_table: number %d used by %s and %s\n", nr, tname[nr], name > "/dev/stderr"
		bad = 1
	}
	if (name in tnr) {
		printf "check_table: name %s used by %d and %d\n", name, tnr[name], nr > "/dev/stderr"
		bad = 1
	}
	tname[nr] = name
	tnr[name] = nr
	if ((nr in hname) && hname[nr] != name) {
		printf "check_table: %d is %s in the table but %s in <asm/unistd.h>\n", nr, name, hname[nr] > "/dev/stderr"
		bad = 1
	}
	if ((cls == "EMULATE" || cls == "FAST_TRAP" || cls == "FAST_TRAP_UNLESS" || cls == "FAST_TRAP_UNLESS_NET") && handler != "sys_" name) {
		printf "check_table: %s: %s row needs handler sys_%s, has %s\n", name, cls, name, handler > "/dev/stderr"
		bad = 1
	}
	if (cls != "EMULATE" && cls != "FAST_TRAP" && cls != "FAST_TRAP_UNLESS" && cls != "FAST_TRAP_UNLESS_NET" && handler != "NONE_H") {
		printf "check_table: %s: %s row must have NONE_H, has %s\n", name, cls, handler > "/dev/stderr"
		bad = 1
	}
	nstr = gsub(/A_PATH|A_STR/, "&", args)
	nbuf = gsub(/A_OPEN_HOW|A_SOCKADDR/, "&", args)
	if (nstr > nstrmax || nbuf > nbufmax) {
		printf "check_table: %s: more string (max %d) or struct (max %d) arguments than copy-in slots\n", name, nstrmax, nbufmax > "/dev/stderr"
		bad = 1
	}
	nrows++
}
END {
	for (n in hnr) {
		if (!(n in tnr)) {
			printf "check_table: __NR_%s (%d) has no row\n", n, hnr[n] > "/dev/stderr"
			bad = 1
		} else if (tnr[n] != hnr[n]) {
			printf "check_table: %s is %d in the table but %d in <asm/unistd.h>\n", n, tnr[n], hnr[n] > "/dev/stderr"
			bad = 1
		}
	}
	if (nrows == 0) {
		print "check_table: no rows" > "/dev/stderr"
		bad = 1
	}
	exit bad
}' "$tmp/rows"

nrows=$(wc -l <"$tmp/rows")
nhdr=$(wc -l <"$tmp/header")
echo "syscall table: $nrows rows, $nhdr checked against <asm/unistd.h>" >"$STAMP"
