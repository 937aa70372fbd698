# tests/integration/lib.sh: sourced by every tests/integration/*.sh.
#
# Environment (set by tests/integration/run.sh):
#   MOAT         the moat binary under test
#   SYSCALL_BIN  directory of the built tests/syscalls programs (readable by the caller)
# Each test prints "ok NAME" / "FAIL NAME: why" / "skip NAME: why" lines, ends
# with finish ("# FILE (user): N passed, M failed, K skipped") and exits non-zero
# if any case failed or none passed.
#
# Sanity cases: a case that holds whether or not moat isolates anything (a host
# listener answers natively, the guest still runs...) is reported with
# ok_sanity / SANITY=1 (its line ends in " # sanity").  The harness self-check
# (tests/run-all.sh, tier selfcheck) runs the isolation tests against
# tests/integration/fake-moat: every case there must FAIL except sanity ones.  Everything a test starts or creates is undone by
# the EXIT trap, also when the test fails or is interrupted.
set -uo pipefail

: "${MOAT:?MOAT must point at the moat binary}"
SYSCALL_BIN=${SYSCALL_BIN:-}
PY=/usr/bin/python3
T_NAME=$(basename "$0" .sh)
T_PASS=0
T_FAIL=0
T_SKIP=0
# The tiers' expectations (modes of what they and their guests create,
# another user reading it) are written for umask 022: a runner's 077
# (tests/ci-env.sh) failed fifteen cases of isolation_fs and isolation_cow,
# natively too. A case about the caller's umask sets its own (cli.sh
# caller_umask_kept).
umask 022
# Root's tools (sysctl, useradd) are in sbin, which a runner's PATH may lack
# (tests/ci-env.sh: /usr/bin:/bin): isolation_net's sysctls failed unseen
# (three cases: no ICMP without the rate limit off, no anycast route) and
# isolation_fs's useradd case skipped
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin:/sbin ;; esac
# sched_normal: this tier runs at nice 0 and SCHED_OTHER (the runners
# normalise as root: sched-normal.sh, MOAT_TEST_RENICED); else it prints why
# not and fails: started unprivileged at nice 19 or SCHED_IDLE, a runner's
# (tests/ci-env.sh), no one gets back, and a case about a guest's nice or
# class that needs that room skips
sched_normal() {
	local p
	p=$(chrt -p $$ 2>/dev/null | sed -n 's/.*policy: //p' | head -1)
	[ "$(nice)" = 0 ] && [ "${p:-SCHED_OTHER}" = SCHED_OTHER ] && return 0
	echo "started at nice $(nice), $p, not normalised (unprivileged, no way back to nice 0, SCHED_OTHER; root: run.sh normalises)"
	return 1
}
T_TMP=$(mktemp -d "/tmp/moat-it-$T_NAME.${IT_RUN:+$IT_RUN.}XXXXXX")  # IT_RUN: run.sh's id
chmod 755 "$T_TMP"
T_CLEANUPS=()

# at_exit CMD: run CMD (a string, eval'd) when the test exits, in reverse order.
at_exit() { T_CLEANUPS=("$*" "${T_CLEANUPS[@]}"); }
_t_exit() {
	local c
	exec 2>/dev/null # no "Killed" job notices for our own helpers
	for c in "${T_CLEANUPS[@]}"; do eval "$c" >/dev/null 2>&1; done
	# a guest's 0444 or 0000 directories (fs_semantics makes some in rw
	# binds): rootless, the caller cannot empty them until it owns the write bit
	chmod -R u+rwX "$T_TMP" 2>/dev/null
	rm -rf "$T_TMP"
}
trap _t_exit EXIT
trap 'exit 130' INT TERM HUP

# IT_CASE_TIMES=DIR: each case's time since the one before (or the script's
# start) appended to DIR/SCRIPT.times ("SECONDS CASE"): where CI's time goes
_t_last=${EPOCHREALTIME:-0}
_t_time() {
	[ -n "${IT_CASE_TIMES:-}" ] || return 0
	local now=$EPOCHREALTIME
	awk -v a="$_t_last" -v b="$now" -v n="$1" 'BEGIN { printf "%.2f %s\n", b - a, n }' >>"$IT_CASE_TIMES/$T_NAME.times"
	_t_last=$now
}
# ok NAME: a passed case (with SANITY=1 in its environment: a sanity case).
ok() { _t_time "$1"; echo "ok $T_NAME/$1${SANITY:+ # sanity}"; T_PASS=$((T_PASS + 1)); }
# ok_sanity NAME: a passed case that also passes without any isolation.
ok_sanity() { SANITY=1 ok "$1"; }
# fail/skip NAME WHY...: WHY on the one line (an output quoted there that
# holds a newline once put an "ok ..." line of a probe's at a line start,
# which the self-check counted as a case)
fail() { local n=$1; shift; _t_time "$n"; echo "FAIL $T_NAME/$n: $(printf '%s' "$*" | tr '\n' ' ')"; T_FAIL=$((T_FAIL + 1)); }
skip() { local n=$1; shift; _t_time "$n"; echo "skip $T_NAME/$n: $(printf '%s' "$*" | tr '\n' ' ')"; T_SKIP=$((T_SKIP + 1)); }
# check NAME CMD...: ok when CMD succeeds (SANITY=1 check ...: a sanity case).
check() { local n=$1; shift; if "$@"; then ok "$n"; else fail "$n" "command failed: $*"; fi; }
# expect_eq NAME GOT WANT
expect_eq() {
	if [ "$2" == "$3" ]; then ok "$1"; else fail "$1" "got [$(printf %s "$2" | head -c 400)] want [$(printf %s "$3" | head -c 400)]"; fi
}
# finish: the last line of every test.
finish() {
	echo "# $T_NAME ($(id -un)): $T_PASS passed, $T_FAIL failed, $T_SKIP skipped"
	[ "$T_FAIL" -eq 0 ] && [ "$T_PASS" -gt 0 ]
	exit $?
}

# runs N: how many times a repeated-run case runs (a window widened by a test
# hook, tried N times): N, or 1 with IT_RUNS_ONCE=1 (a developer's quick run:
# every code path once)
runs() { if [ "${IT_RUNS_ONCE:-0}" = 1 ]; then echo 1; else echo "$1"; fi; }

# wait_for SECONDS CMD...: poll CMD every 0.05 s until it succeeds, at most
# SECONDS (status 1 then): in place of a sleep sized for a slow machine.
wait_for() {
	local end=$((SECONDS + $1 + 1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# moat ARGS...: the binary under test, bounded in time.
moat() { timeout -k 5 "${MOAT_TIMEOUT:-120}" "$MOAT" "$@"; }
# mrun ARGS...: moat run -- ARGS..., no stdin.
mrun() { moat run -- "$@" </dev/null; }

# The caller's passwd home (the guest gets an empty private one at the same path).
HOST_HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
# A unique marker for canaries and process names.
T_MARK="moatcanary$$x$RANDOM"

# guest_tmp PATH...: fixed /tmp names (/tmp/NAME) a guest makes in its private
# /tmp. Against tests/integration/fake-moat (MOAT is the fake: no private
# /tmp, the guest runs natively) they land in the HOST's /tmp: removed now (a
# previous run's leftovers would change what the case sees) and at exit, so a
# self-check run leaves nothing there. Against moat nothing is done (the
# host's names are not the test's). Only entries of the caller, or of the ids
# these scripts' guests drop to natively (GUEST_TMP_UIDS: 1000 65534 61239),
# are removed: another user's file of that name is left (and said on stderr).
# rm -rf follows no symlink.
GUEST_TMP_UIDS=${GUEST_TMP_UIDS:-1000 65534 61239}
_guest_tmp_rm() {
	local p=$1 own u
	[ -e "$p" ] || [ -L "$p" ] || return 0
	own=$(stat -c %u -- "$p" 2>/dev/null) || return 0
	for u in "$(id -u)" $GUEST_TMP_UIDS; do
		[ "$own" = "$u" ] || continue
		# a guest's 0500 directories: the caller (rootless) needs the write
		# bit on its own (root needs none: no chmod of another's tree)
		[ "$own" = "$(id -u)" ] && [ "$own" != 0 ] && [ -d "$p" ] && [ ! -L "$p" ] &&
			chmod -R u+rwX -- "$p" 2>/dev/null
		rm -rf -- "$p"
		return 0
	done
	echo "# guest_tmp: $p is uid $own's, not the test's: left" >&2
}
guest_tmp() {
	[ "$MOAT" != "${MOAT%fake-moat}" ] || return 0
	local p
	for p in "$@"; do
		case $p in
		/tmp/*/* | /tmp/ | /tmp/. | /tmp/.. | *[[:space:]]*) echo "guest_tmp: $p: not a /tmp/NAME" >&2; return 1 ;;
		/tmp/?*) ;;
		*) echo "guest_tmp: $p: not a /tmp/NAME" >&2; return 1 ;;
		esac
		_guest_tmp_rm "$p"
		at_exit "_guest_tmp_rm $(printf %q "$p")"
	done
}

# cl_server NAME MODE ADDR [CMD...]: in the background (under CMD, as in_far,
# when given), an HTTP/1.1 server on ADDR that frames as a Content-Length-
# first server does (not RFC 9112: no Transfer-Encoding; no body on a GET, as
# Python http.server's do_GET). It answers "ok" to each request and appends
# a line of it to $T_TMP/NAME.log: MODE vhost: "VHOST AUTHORIZATION
# body=BODY" (an absolute-form target names the virtual host, RFC 9112
# 3.2.2), MODE head: "HEAD body=BODY" (CRLF as |); MODE lower: as head,
# and the answer is the header block with its names and the Host in lower
# case (as Node's req.headers, WSGI, Go and nginx's $host transform what
# they reflect) instead of "ok". Its port in $srv_port
# (empty when it did not start in 20 s); its stderr in $T_TMP/NAME.err.
cl_server() {
	local name=$1 mode=$2 addr=$3 i
	shift 3
	"$@" "$PY" -c '
import socket, sys, os
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[3], 0)); s.listen(8)
open(sys.argv[1] + ".t", "w").write(str(s.getsockname()[1])); os.rename(sys.argv[1] + ".t", sys.argv[1])
while True:
    c, _ = s.accept(); c.settimeout(5); buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d: raise EOFError
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            hs = dict((l.split(b":", 1)[0].strip().lower(), l.split(b":", 1)[1].strip()) for l in head.split(b"\r\n")[1:] if b":" in l)
            n = int(hs.get(b"content-length", b"0"))   # Content-Length first: not RFC 9112
            if head.startswith(b"GET "): n = 0  # nor the body of a GET (as http.server do_GET: red team 77)
            while len(buf) < n:
                d = c.recv(65536)
                if not d: raise EOFError
                buf += d
            body, buf = buf[:n], buf[n:]
            if sys.argv[4] == "vhost":
                tgt = head.split(b"\r\n")[0].split(b" ")[1]
                vh = tgt.split(b"/")[2] if tgt.lower().startswith(b"http://") else hs.get(b"host", b"-")
                line = vh + b" " + hs.get(b"authorization", b"-")
            else:
                line = head.replace(b"\r\n", b"|")
            with open(sys.argv[2], "ab") as f:
                f.write(line + b" body=" + body.replace(b"\r\n", b"|") + b"\n")
            ans = b"ok"
            if sys.argv[4] == "lower":  # the header block back, names and the Host lowered
                hl = [l.lower() if l.partition(b":")[0].lower() == b"host" else
                      l.partition(b":")[0].lower() + b":" + l.partition(b":")[2] for l in head.split(b"\r\n")[1:]]
                ans = b"\n".join(hl) + b"\n"
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(ans) + ans)
    except Exception: pass
    c.close()' "$T_TMP/$name.port" "$T_TMP/$name.log" "$addr" "$mode" </dev/null >"$T_TMP/$name.err" 2>&1 &
	at_exit "kill -9 $!"
	for ((i = 0; i < 200; i++)); do [ -s "$T_TMP/$name.port" ] && break; sleep 0.1; done
	srv_port=$(cat "$T_TMP/$name.port" 2>/dev/null)
}
