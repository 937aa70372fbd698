#!/bin/bash
# Real work in a writable view (issue 7), each workload compared with the
# same commands run natively in a scratch copy: git init + add + commit,
# status, log, gc and fsck (fixed dates, so the commit ids must match);
# tar -xzf of a source tarball then rm -rf; a small C project built with
# make -j2 (and make -q: up to date); sqlite3 in WAL mode with transactions;
# pip install --no-index of a local wheel into a venv; cp -a, ln, chmod,
# touch -d and mv across mounts (EXDEV: mv copies, hard links kept).
# Run once in a cow bind (root and rootless) and once in the root overlay
# (root): the same output and the same tree as natively; the host tree is
# unchanged after (hashed before and after); the cow export's patch, applied
# with git apply to a copy of the original, gives the guest's final tree
# (what the export refused, named in its manifest, left out).
# Natively (fake-moat) the cow source is written and nothing is exported:
# the isolation cases fail; the "same as natively" cases are sanity cases.
. "$(dirname "$0")/lib.sh"

ROOT=0; [ "$(id -u)" = 0 ] && ROOT=1
command -v git >/dev/null && command -v make >/dev/null && command -v gcc >/dev/null &&
	command -v sqlite3 >/dev/null && "$PY" -m pip --version >/dev/null 2>&1 ||
	{ skip workloads "needs git, make, gcc, sqlite3 and pip for $PY"; finish; }

# expect_same NAME GOT WANT: expect_eq that names the lines that differ
expect_same() {
	if [ "$2" == "$3" ]; then ok "$1"; else fail "$1" "$(diff <(printf '%s\n' "$3") <(printf '%s\n' "$2") | head -20)"; fi
}
hosthash() { (cd "$1" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum) | sha256sum | cut -c1-64; }

# ---- inputs (read-only at /in): a source tarball, a C project, a wheel ----
IN=$T_TMP/in
mkdir -p "$IN/proj" "$T_TMP/gen"
(cd "$T_TMP/gen" && for d in 0 1 2 3 4 5 6 7 8 9; do
	mkdir -p "src-1.0/lib$d/sub"
	for f in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do printf 'int f%s_%s(void) { return %s; }\n' $d $f $f >"src-1.0/lib$d/f$f.c"; done
	printf '#!/bin/sh\necho %s\n' $d >"src-1.0/lib$d/sub/run.sh" && chmod 755 "src-1.0/lib$d/sub/run.sh"
	ln -s ../f0.c "src-1.0/lib$d/sub/link.c"
done && chmod 0750 src-1.0/lib3 && tar -czf "$IN/src.tar.gz" src-1.0)
for i in 1 2 3 4; do printf 'int part%s(void) { return %s; }\n' $i $i >"$IN/proj/p$i.c"; done
printf '#include <stdio.h>\nint part1(void); int part2(void); int part3(void); int part4(void);\nint main(void) { printf("sum %%d\\n", part1() + part2() + part3() + part4()); return 0; }\n' >"$IN/proj/main.c"
printf 'OBJS = main.o p1.o p2.o p3.o p4.o\napp: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) -O1 -c -o $@ $<\nclean:\n\trm -f app $(OBJS)\n' >"$IN/proj/Makefile"
"$PY" - "$IN/moatwl-1.0-py3-none-any.whl" <<'EOF'
import base64, hashlib, sys, zipfile
files = {"moatwl/__init__.py": b"VALUE = 42\n",
         "moatwl-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: moatwl\nVersion: 1.0\n",
         "moatwl-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: moat-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = "".join("%s,sha256=%s,%d\n" % (n, base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode(), len(d))
              for n, d in files.items()) + "moatwl-1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for n, d in files.items(): z.writestr(n, d)
    z.writestr("moatwl-1.0.dist-info/RECORD", rec)
EOF

# ---- the base tree: what the cow bind shows and the native copy starts from ----
BASE=$T_TMP/base
mkdir -p "$BASE/git/sub"
for i in $(seq 1 40); do echo "line $i" >"$BASE/git/f$i"; done
printf 'bin\0\1\2\n' >"$BASE/git/sub/blob"; chmod 755 "$BASE/git/f1"
chmod -R a+rX "$T_TMP"
[ $ROOT = 0 ] || chown -R "$(id -u)" "$BASE"

# The workloads: cwd is the tree's top; $IN the inputs, $XDIR a directory on
# another file system, $HOME outside the tree.  Each section prints its
# results; then its tree's signature (SIG below).
WORK='set -e
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t GIT_AUTHOR_DATE=2020-01-01T00:00:00Z \
	GIT_COMMITTER_DATE=2020-01-01T00:00:00Z LC_ALL=C TZ=UTC
top=$PWD
echo "== git"; cd "$top/git"
git init -q -b main . && git add -A && git commit -qm one
echo more >>f1; rm f2; mkdir -p n && echo n >n/x; chmod 644 f1
git status --porcelain
git add -A && git commit -qm two && git mv f3 n/f3 && git commit -qm three
git log --format="%H %s"
git gc -q && git count-objects -v | grep -E "^(count|in-pack|packs):"
git status --porcelain | wc -l; git fsck --no-progress && echo fsck-ok
echo "== tar"; mkdir "$top/tar" && cd "$top/tar"
tar -xzf "$IN/src.tar.gz" && find . | wc -l && stat -c "%a" src-1.0/lib3 src-1.0/lib1/sub/run.sh
cat src-1.0/lib*/*.c | cksum; readlink src-1.0/lib5/sub/link.c
mkdir keep && mv src-1.0/lib7 keep/ && rm -rf src-1.0 && ls -A
echo "== make"; cp -r "$IN/proj" "$top/make" && cd "$top/make"
make -s -j2 && ./app && make -q && echo up-to-date
touch p2.c && ! make -q && make -s -j2 && ./app
echo "== sqlite"; mkdir "$top/sq" && cd "$top/sq"
sqlite3 db "PRAGMA journal_mode=WAL;" "CREATE TABLE t(x);" "BEGIN;" "INSERT INTO t VALUES (1),(2),(3);" "COMMIT;" "SELECT sum(x) FROM t;"
sqlite3 db "PRAGMA journal_mode;" "BEGIN; UPDATE t SET x = x * 10; DELETE FROM t WHERE x = 20; COMMIT;" "SELECT sum(x) FROM t;" "PRAGMA integrity_check;"
ls -A
echo "== pip"; mkdir "$top/pip" && cd "$top/pip"
"$PY" -m venv --without-pip --system-site-packages venv
venv/bin/python -m pip install -q --no-index --no-cache-dir --disable-pip-version-check --no-warn-script-location "$IN/moatwl-1.0-py3-none-any.whl"
venv/bin/python -c "import moatwl; print(moatwl.VALUE, moatwl.__file__.replace(\"$top\", \"TOP\"))"
"$PY" -c "import moatwl" 2>/dev/null || echo not-outside-the-venv
echo "== files"; mkdir "$top/files" && cd "$top/files"
mkdir a && echo data >a/f && printf "x\n" >a/g && chmod 640 a/f && chmod 755 a/g
touch -d "2020-02-03 04:05:06" a/f a/g && ln a/f a/hard && ln -s f a/sym
cp -a a b && mv b "$XDIR/b" && mv "$XDIR/b" c && ln -s c/g cg && chmod 700 c
stat -c "%n %F %a %h" a c && stat -c "%n %F %a %h %s %Y" a/f a/g a/hard c/f c/g c/hard && stat -c "%n %N" a/sym c/sym cg
echo "== end"'
# SIG: one line per entry of the tree (.git and __pycache__ left out): path,
# type, and for files mode and content hash (pip and make trees: names only,
# their files name where they were made), for symlinks the target
SIG='cd "$1" && find . -mindepth 1 \( -name .git -o -name __pycache__ \) -prune -o -print | LC_ALL=C sort | while IFS= read -r p; do
  case $p in ./pip/*|./make/*) names=1 ;; *) names= ;; esac
  if [ -L "$p" ]; then echo "$p l $(readlink "$p")";
  elif [ -d "$p" ]; then [ "${2:-}" = git ] || echo "$p d $(stat -c %a "$p")";
  elif [ "${2:-}" = git ]; then x=-; [ -x "$p" ] && x=x; echo "$p f $x $(sha256sum <"$p" | cut -c1-64)";
  elif [ -n "$names" ]; then echo "$p f";
  else echo "$p f $(stat -c %a "$p") $(sha256sum <"$p" | cut -c1-64)"; fi; done'
sig() { sh -c "$SIG" sig "$@"; }

# ---- natively, in a scratch copy ----
NAT=$T_TMP/native
cp -a "$BASE" "$NAT"
mkdir -p "$T_TMP/nhome" "$T_TMP/nx"
XN=$(mktemp -d /dev/shm/moat-wl.XXXXXX) && at_exit "rm -rf '$XN'"
want=$(cd "$NAT" && IN=$IN XDIR=$XN HOME=$T_TMP/nhome PY=$PY sh -c "$WORK" 2>&1; echo "rc $?")
want_sig=$(sig "$NAT")
case $want in *"== end"*"rc 0") ;; *) fail workloads_native "the workloads fail natively: $(printf %s "$want" | tail -5)"; finish ;; esac
# a relative view of what each run printed: the tree's own path is its top
want=$(printf '%s\n' "$want" | sed "s#$NAT#TOP#g")

# guest OUT: the workloads' output and, after "== sig", the tree's
# signature, then after "== gitsig" its signature as git sees files
GUEST_TAIL='echo "== sig"; sh -c "$1" sig "$PWD"; echo "== gitsig"; sh -c "$1" sig "$PWD" git'
part() { printf '%s\n' "$1" | sed -n "/^== $2\$/,/^== $3\$/p" | sed '1d;$d'; }

# ---- in a cow bind (root and rootless) ----
before=$(hosthash "$BASE")
out=$(moat run --bind "$BASE:/w:cow" --bind "$IN:/in:ro" --export "$T_TMP/exp" --workdir /w \
	--env IN=/in --env XDIR=/dev/shm --env HOME=/tmp --env PY="$PY" -- \
	/bin/sh -c "sh -c \"\$0\" && echo 'rc 0' || echo \"rc \$?\"; $GUEST_TAIL" "$WORK" "$SIG" </dev/null 2>&1)
got=$(printf '%s\n' "$out" | sed '/^== sig$/,$d' | sed 's#/w/#TOP/#g')
SANITY=1 expect_same cow_same_output_as_native "$got" "$want"
SANITY=1 expect_same cow_same_tree_as_native "$(part "$out" sig gitsig)" "$want_sig"
expect_eq cow_host_unchanged "$(hosthash "$BASE")" "$before"
M=$T_TMP/exp/w/manifest.json
if [ -f "$T_TMP/exp/w/changes.patch" ]; then
	rm -rf "$T_TMP/copy" && cp -a "$BASE" "$T_TMP/copy"
	# what the export refused (the venv's symlinks to /usr/bin/python3, .git's
	# names) is named in its manifest; the rest must give the guest's tree
	refused=$("$PY" -c 'import json, sys; print("\n".join("./" + r["path"] for r in json.load(open(sys.argv[1]))["refused"]))' "$M")
	gsig=$(part "$out" gitsig '[^ ]*' | awk -v r="$refused" 'BEGIN { n = split(r, a, "\n"); for (i = 1; i <= n; i++) skip[a[i]] = 1 } !($1 in skip)')
	if aerr=$(cd "$T_TMP/copy" && git apply "$T_TMP/exp/w/changes.patch" 2>&1); then
		expect_same cow_export_reproduces_tree "$(sig "$T_TMP/copy" git)" "$gsig"
	else
		fail cow_export_reproduces_tree "git apply: $(printf %s "$aerr" | head -5)"
	fi
	# the only refusals: the venv's absolute symlinks
	bad=$(printf '%s\n' "$refused" | grep -v '^\./pip/venv/' | grep -v '^$')
	[ -n "$refused" ] && [ -z "$bad" ] && ok cow_export_refuses_only_venv_links ||
		fail cow_export_refuses_only_venv_links "refused: $(printf '%s ' $refused | head -c 300)"
else
	fail cow_export_reproduces_tree "no export: $(ls -R "$T_TMP/exp" 2>&1 | head -5)"
fi

# ---- in the root overlay (rootless: /opt as the caller sees it in the view) ----
if [ -d /opt ]; then
	OT=/opt/$T_MARK
	at_exit "rm -rf '$OT'"  # natively (fake-moat) the guest writes it
	ob=$(hosthash /opt)
	out=$(moat run --overlay memory --bind "$IN:/in:ro" --bind "$BASE:/base:ro" \
		--env IN=/in --env XDIR=/dev/shm --env HOME=/tmp --env PY="$PY" -- \
		/bin/sh -c "mkdir -p '$OT' && cp -a /base/. '$OT'/ && cd '$OT' || exit 1; sh -c \"\$0\" && echo 'rc 0' || echo \"rc \$?\"; $GUEST_TAIL" "$WORK" "$SIG" </dev/null 2>&1)
	got=$(printf '%s\n' "$out" | sed '/^== sig$/,$d' | sed "s#$OT#TOP#g")
	SANITY=1 expect_same overlay_same_output_as_native "$got" "$want"
	SANITY=1 expect_same overlay_same_tree_as_native "$(part "$out" sig gitsig)" "$want_sig"
	[ ! -e "$OT" ] && [ "$(hosthash /opt)" = "$ob" ] && ok overlay_host_unchanged || fail overlay_host_unchanged "$OT written on the host"
else
	skip overlay_workloads "no /opt"
fi
finish
