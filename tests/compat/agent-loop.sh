#!/bin/bash
# tests/compat/agent-loop.sh: a coding agent's loop, natively and inside moat,
# compared step by step. In one sandbox: clone a local git repository, create
# a venv, `pip install -e` the package from its directory (--no-index, no
# network), run its tests (one fails), edit a file, rerun them (all pass),
# show the diff and commit it. The same script runs natively first; each
# step's output and exit status must agree (paths masked).
#   tests/compat/agent-loop.sh [--moat BIN] [--repeat N] [--keep]
# Prints "ok agent-loop/STEP" or "FAIL agent-loop/STEP: ..." per step, then
# "# agent-loop: native S s, moat S s, ratio R" (the medians over --repeat runs;
# bench/agent_loop.sh uses that line). Exit 0 when every step agrees.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
MOAT=${MOAT:-$here/../../build/cli/moat}
REPEAT=1 KEEP=
while [ $# -gt 0 ]; do
	case $1 in
	--moat) MOAT=$2; shift ;;
	--repeat) REPEAT=$2; shift ;;
	--keep) KEEP=1 ;;
	*) echo "usage: $0 [--moat BIN] [--repeat N] [--keep]" >&2; exit 2 ;;
	esac
	shift
done
PY=/usr/bin/python3
[ -x "$MOAT" ] || { echo "agent-loop: no moat binary at $MOAT" >&2; exit 2; }
command -v git >/dev/null || { echo "skip agent-loop: git not installed"; exit 77; }
$PY -c 'import ensurepip' 2>/dev/null || { echo "skip agent-loop: python3-venv not installed"; exit 77; }

W=$(mktemp -d /tmp/moat-agent-loop.XXXXXX)
chmod 777 "$W"
[ -n "$KEEP" ] || trap 'rm -rf "$W"' EXIT

# The project the agent works on: a package with a bug its tests catch.
mkdir -p "$W/origin/calc" "$W/origin/tests"
cat >"$W/origin/setup.py" <<'EOF'
from setuptools import setup
setup(name="calc", version="0.1", packages=["calc"])
EOF
cat >"$W/origin/calc/__init__.py" <<'EOF'
def add(a, b):
    return a + b


def mean(xs):
    return sum(xs) / (len(xs) + 1)  # bug
EOF
cat >"$W/origin/tests/test_calc.py" <<'EOF'
import unittest
import calc


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)

    def test_mean(self):
        self.assertEqual(calc.mean([1, 2, 3]), 2)
EOF
touch "$W/origin/tests/__init__.py"
(cd "$W/origin" && git init -q && git add -A &&
	git -c user.name=dev -c user.email=dev@example.com commit -qm "calc: add and mean") || exit 2
chmod -R a+rwX "$W/origin"

# The loop: each step prints "== STEP", its output, then "== STEP exit N".
cat >"$W/loop.sh" <<'EOF'
set -u
D=$1; cd "$D" || exit 1
export HOME=$D/.home GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z \
	PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
mkdir -p "$HOME"
step() {
	local n=$1 t0 rc; shift
	t0=$(date +%s%N); echo "== $n"; "$@" 2>&1; rc=$?; echo "== $n exit $rc"
	echo "$n $(( ($(date +%s%N) - t0) / 1000000 ))" >>"$D/.step-ms"
}
step clone git clone -q "$(dirname "$D")/origin" repo
cd repo
step venv /usr/bin/python3 -m venv .venv
step install sh -c '.venv/bin/pip install -q --no-index --no-build-isolation -e . && .venv/bin/python -c "import calc; print(calc.__file__)"'
step test1 sh -c '.venv/bin/python -m unittest -q 2>&1 | grep -E "^(FAIL:|Ran|OK|FAILED)" | sed "s/ in [0-9.]*s//"; exit $(.venv/bin/python -m unittest -q >/dev/null 2>&1; echo $?)'
step edit sed -i 's#(len(xs) + 1)  \# bug#len(xs)#' calc/__init__.py
step test2 sh -c '.venv/bin/python -m unittest -q 2>&1 | grep -E "^(FAIL:|Ran|OK|FAILED)" | sed "s/ in [0-9.]*s//"'
step diff git diff
step commit sh -c 'git -c user.name=agent -c user.email=agent@example.com commit -qam "calc: fix mean" && git log --format="%H %s" && git status --short | grep -v "^?? " ; true'
EOF

now() { date +%s.%N; }
run_side() { # SIDE RUN: output in $W/SIDE.out, seconds on stdout
	local side=$1 d t0 t1
	d=$W/$side
	rm -rf "$d" && mkdir -p "$d" && chmod 777 "$d"
	t0=$(now)
	if [ "$side" = native ]; then
		env -i PATH=/usr/bin:/bin LANG=C.UTF-8 /bin/sh "$W/loop.sh" "$d" >"$W/$side.out" 2>&1 </dev/null
	else
		timeout -k 5 600 "$MOAT" run --bind "$W:$W:rw" --env LANG=C.UTF-8 --env PATH=/usr/bin:/bin \
			-- /bin/sh "$W/loop.sh" "$d" >"$W/$side.out" 2>&1 </dev/null
	fi
	t1=$(now)
	sed -i "s#$d#WD#g" "$W/$side.out"
	echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
nt=() mt=()
for _ in $(seq "$REPEAT"); do
	nt+=("$(run_side native)")
	mt+=("$(run_side moat)")
done

fails=0
for s in clone venv install test1 edit test2 diff commit; do
	n=$(sed -n "/^== $s\$/,/^== $s exit/p" "$W/native.out")
	m=$(sed -n "/^== $s\$/,/^== $s exit/p" "$W/moat.out")
	if [ -z "$n" ]; then
		echo "FAIL agent-loop/$s: no output natively"; fails=$((fails + 1))
	elif [ "$n" == "$m" ]; then
		echo "ok agent-loop/$s"
	else
		echo "FAIL agent-loop/$s: moat [$(printf %s "$m" | head -c 600)] native [$(printf %s "$n" | head -c 600)]"
		fails=$((fails + 1))
	fi
done
# the loop did what it says natively: the first test run fails, the second passes, one commit added
grep -q "^== test1 exit 1" "$W/native.out" && grep -q "^== test2 exit 0" "$W/native.out" &&
	grep -q "calc: fix mean" "$W/native.out" || { echo "FAIL agent-loop/native: the loop itself misbehaves natively"; fails=$((fails + 1)); }
# per-step wall time of the last run (ms), native and moat
while read -r s ms; do
	printf '#   %-8s native %6s ms  moat %6s ms\n' "$s" "$ms" "$(awk -v s="$s" '$1 == s {print $2}' "$W/moat/.step-ms")"
done <"$W/native/.step-ms"
n=$(printf '%s\n' "${nt[@]}" | median) m=$(printf '%s\n' "${mt[@]}" | median)
echo "# agent-loop: native $n s, moat $m s, ratio $(awk -v a="$m" -v b="$n" 'BEGIN {printf "%.2f", a / b}') ($REPEAT run(s)); $fails step(s) differ${KEEP:+ (kept: $W)}"
[ $fails -eq 0 ]
