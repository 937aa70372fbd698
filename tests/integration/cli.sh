#!/bin/bash
# CLI contract: exit statuses, usage errors, the compatibility listing, --trace, --audit.
. "$(dirname "$0")/lib.sh"

# Exit status is the guest's; 128+N when killed by signal N.
mrun /bin/sh -c 'exit 7' >/dev/null 2>&1; expect_eq exit_7 "$?" 7
mrun /bin/sh -c 'exit 0' >/dev/null 2>&1; expect_eq exit_0 "$?" 0
mrun /bin/sh -c 'kill -9 $$' >/dev/null 2>&1; expect_eq killed_9_is_137 "$?" 137
mrun /bin/sh -c 'kill -TERM $$' >/dev/null 2>&1; expect_eq killed_15_is_143 "$?" 143
mrun /bin/false >/dev/null 2>&1; expect_eq bin_false "$?" 1

# Missing program: 127 and "moat: PROGRAM: not found".
err=$(mrun /no/such/program-$T_MARK 2>&1 >/dev/null); rc=$?
expect_eq missing_program_127 "$rc" 127
case $err in *"moat: /no/such/program-$T_MARK: not found"*) ok missing_program_message ;;
*) fail missing_program_message "stderr: $err" ;; esac
err=$(mrun no-such-cmd-$T_MARK 2>&1 >/dev/null); rc=$?
expect_eq missing_in_path_127 "$rc" 127

# stdout/stderr/stdin pass through.
out=$(echo piped | moat run -- /bin/cat 2>/dev/null); expect_eq stdin_passthrough "$out" piped
err=$(mrun /bin/sh -c 'echo to-stderr >&2' 2>&1 >/dev/null); expect_eq stderr_passthrough "$err" to-stderr

# Bad usage: usage text on stderr, exit 2.
usage_case() {
	local name=$1; shift
	local e rc
	e=$(moat "$@" 2>&1 >/dev/null </dev/null); rc=$?
	if [ "$rc" -eq 2 ] && [ -n "$e" ]; then ok "$name"; else fail "$name" "exit $rc stderr [$e]"; fi
}
usage_case unknown_option run --no-such-option -- /bin/true
usage_case missing_program run --
usage_case missing_dashdash_program run
usage_case unknown_subcommand frobnicate
usage_case no_arguments
# --root that does not exist, malformed --bind: exactly one line, exit 2.
one_line_case() {
	local name=$1; shift
	local e rc
	e=$(moat "$@" 2>&1 >/dev/null </dev/null); rc=$?
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$e" | grep -c .)" -eq 1 ]; then ok "$name"
	else fail "$name" "exit $rc stderr [$e]"; fi
}
one_line_case bad_root run --root "/nonexistent-$T_MARK" -- /bin/true
one_line_case bad_bind_no_colon run --bind /tmp -- /bin/true
one_line_case bad_bind_mode run --bind /tmp:/x:wx -- /bin/true
one_line_case bad_bind_relative_dst run --bind /tmp:relative -- /bin/true
one_line_case bad_bind_missing_src run --bind "/nonexistent-$T_MARK:/x" -- /bin/true
# red team 28: these ran, the option silently ignored (an empty GID was 0;
# the root mount won over a --tmpfs or --bind at /)
one_line_case bad_user_empty_gid run --user 1: -- /bin/true
one_line_case bad_user_plus run --user +1 -- /bin/true
one_line_case bad_tmpfs_root run --tmpfs / -- /bin/true
one_line_case bad_tmpfs_root_dot run --tmpfs //. -- /bin/true
one_line_case bad_bind_root run --bind "$T_TMP:/" -- /bin/true
one_line_case bad_audit_max_bytes run --audit-max-bytes 12X -- /bin/true
one_line_case bad_audit_rate run --audit-rate -5 -- /bin/true
# limits: bad sizes, durations, fractions
one_line_case bad_memory run --memory 12X -- /bin/true
one_line_case bad_memory_tiny run --memory 1K -- /bin/true
one_line_case bad_pids run --pids 1 -- /bin/true
one_line_case bad_pids_word run --pids many -- /bin/true
one_line_case bad_cpus run --cpus 0 -- /bin/true
one_line_case bad_cpus_word run --cpus half -- /bin/true
one_line_case bad_timeout_unit run --timeout 2x -- /bin/true
one_line_case bad_timeout_zero run --timeout 0s -- /bin/true
one_line_case bad_timeout_negative run --timeout -1s -- /bin/true
one_line_case bad_kill_after_unit run --kill-after 2x -- /bin/true
out=$(moat run --kill-after 0 -- /bin/sh -c 'echo ka0' </dev/null 2>/dev/null); expect_eq kill_after_zero_option "$out" ka0
one_line_case bad_idle_timeout run --idle-timeout soon -- /bin/true
one_line_case bad_output_limit run --output-limit 0 -- /bin/true
one_line_case bad_result_dir run --result "/nonexistent-$T_MARK/r.json" -- /bin/true
out=$(moat run --timeout 500ms --idle-timeout 1m --output-limit 1K --memory 512M --pids 100 --cpus 1.5 -- /bin/sh -c 'echo limited' </dev/null 2>/dev/null); expect_eq limit_options "$out" limited
out=$(moat run --audit-max-bytes 1M --audit-rate 100 -- /bin/sh -c 'echo capped' </dev/null 2>/dev/null); expect_eq audit_cap_options "$out" capped

# --env and the default environment.
out=$(moat run --env FOO=bar -- /bin/sh -c 'echo $FOO' </dev/null 2>/dev/null); expect_eq env_option "$out" bar
out=$(mrun /usr/bin/env 2>/dev/null | cut -d= -f1 | sort | tr '\n' ' ')
expect_eq default_env_is_small_set "$out" "HOME LANG PATH TERM "
extra=$(mrun /usr/bin/env 2>/dev/null | cut -d= -f1 | grep -vxE 'PATH|HOME|TERM|LANG|PWD|SHLVL|_' | tr '\n' ' ')
expect_eq default_env_is_small "$extra" ""

# --workdir.
mkdir -p "$T_TMP/wd"
out=$(moat run --bind "$T_TMP/wd:/work:rw" --workdir /work -- /bin/pwd </dev/null 2>/dev/null); expect_eq workdir "$out" /work

# The compatibility listing.
for fmt in table csv json; do
	moat syscalls --format $fmt >"$T_TMP/list.$fmt" 2>/dev/null; rc=$?
	n=$(grep -c . "$T_TMP/list.$fmt")
	if [ $rc -eq 0 ] && [ "$n" -gt 200 ] && grep -q openat "$T_TMP/list.$fmt"; then ok "syscalls_$fmt"
	else fail "syscalls_$fmt" "exit $rc, $n lines"; fi
done
moat syscalls >/dev/null 2>&1; expect_eq syscalls_default "$?" 0
if "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d if isinstance(d,list) else d["syscalls"]) > 200' "$T_TMP/list.json" 2>/dev/null; then
	ok syscalls_json_parses
else fail syscalls_json_parses "not a JSON document with >200 entries"; fi

# MOAT_PROFILE=1: per-syscall stage times, then the gofer round trips per op
# (a cold stat asks the gofer for its owner, a walk; rootless the sentry looks
# up itself, and getcwd still opens through the gofer).
MOAT_PROFILE=1 moat run -- /bin/sh -c "test -e /usr/share/$T_MARK-no; test -d /usr/share" \
	>/dev/null 2>"$T_TMP/prof" </dev/null
if grep -q '^moat profile: mean ns per trapped call' "$T_TMP/prof" &&
	grep -q '^moat profile: gofer round trips' "$T_TMP/prof" &&
	grep -qE '^  op [a-z_]+ +[1-9][0-9]* +mean +[0-9]+ ns$' "$T_TMP/prof"; then
	ok profile_counts_gofer_round_trips
else
	fail profile_counts_gofer_round_trips "$(tail -8 "$T_TMP/prof")"
fi

# --trace: an strace-like line per trapped call, on stderr.
moat run --trace -- /bin/cat /etc/hostname >/dev/null 2>"$T_TMP/trace" </dev/null
if grep -qE 'open(at)?\(.*/etc/hostname' "$T_TMP/trace"; then ok trace_shows_open; else fail trace_shows_open "$(head -5 "$T_TMP/trace")"; fi
# The guest's own bytes in a --trace line (an exec's path, a DNS name, an
# AF_UNIX path of sendmmsg) are escaped: the lines go to the caller's
# stderr, usually a terminal. Before red team 15 an exec of a path holding
# ESC ] 0 ; ... BEL (a terminal's title; OSC 52 writes its clipboard) and a
# newline reached it raw: the title sequence and a forged line of its own.
# (The guest's own stderr is /dev/null: only moat writes here; natively
# nothing is written, so a sanity case.)
moat run --trace -- /bin/sh -c 'exec "$(printf "/nonexistent/\033]0;RT15\007\nFORGED")" 2>/dev/null' \
	>/dev/null 2>"$T_TMP/trace_esc" </dev/null
if grep -q $'\033' "$T_TMP/trace_esc" || grep -q '^FORGED' "$T_TMP/trace_esc"; then
	fail trace_escapes_guest_bytes "$(grep -a -m1 RT15 "$T_TMP/trace_esc" | cat -v | head -c 300)"
else ok_sanity trace_escapes_guest_bytes; fi
# An audit event's guest strings are quoted (sc_quote_str, as decode.c
# quotes every path), and a --trace line keeps its end (result, decision)
# whatever the length of its args. Red team 86: an exec's path was written
# raw between quotes, so a path holding `", ...) = 0 <allow>` read as a
# line whose call succeeded; with 3,000 bytes of \001 after it (12,000
# bytes escaped) the line was cut at 8 KiB and the forged end was the only
# one shown.
RT86_P='/nonexistent/RT86", ...) = 0 <allow> '
RT86_L="$RT86_P$(head -c 3000 /dev/zero | tr '\0' '\001')"
for rt86 in short long; do
	if [ $rt86 = short ]; then rt86_arg=$RT86_P; else rt86_arg=$RT86_L; fi
	moat run --trace -- /bin/sh -c 'exec "$1" 2>/dev/null' sh "$rt86_arg" \
		>/dev/null 2>"$T_TMP/trace_rt86" </dev/null
	rt86_line=$(grep -a 'RT86' "$T_TMP/trace_rt86" | head -1)
	case $rt86_line in
	*'"/nonexistent/RT86\", ...) = 0 <allow> '*'-1 ENOENT (No such file or directory) <allow>') ok trace_exec_path_quoted_$rt86 ;;
	*) fail trace_exec_path_quoted_$rt86 "$(printf '%s' "$rt86_line" | head -c 200) ... $(printf '%s' "$rt86_line" | tail -c 100)" ;;
	esac
done
# An exec path of 5,000 bytes: the sentry's 4,096-byte copy holds no NUL
# (ENAMETOOLONG); its --trace line quotes a copy ended by one. Before, the
# trace read on past the buffer (ASan: a 4,101-byte read of the 4,096-byte
# path, CI's sysfuzz under a one-CPU cpuset): seen only on the asan tier's
# sanitized moat, where such a read ends moat with a report.
long_p="/$(head -c 5000 /dev/zero | tr '\0' 'a')"
moat run --trace -- /bin/sh -c '"$1" 2>/dev/null; echo "exec failed $?"' sh "$long_p" \
	>"$T_TMP/long_out" 2>"$T_TMP/trace_long" </dev/null
if grep -aq 'ENAMETOOLONG' "$T_TMP/trace_long" && grep -q '^exec failed' "$T_TMP/long_out" &&
	! grep -aqE 'AddressSanitizer|runtime error:|SUMMARY: ' "$T_TMP/trace_long"; then
	ok trace_exec_path_too_long
else
	fail trace_exec_path_too_long "$(grep -avE '^\[|^[a-z_0-9]+\(' "$T_TMP/trace_long" | head -3 | cut -c1-200 | tr '\n' '|') out: $(head -c 100 "$T_TMP/long_out")"
fi
# moat's own messages (warnings, errors, MOAT_DEBUG lines) escape every byte
# outside printable ASCII as \ooo, as --trace does: they name guest paths
# (a copy-up's, an exec's). Before: a program path holding ESC and a newline
# reached the caller's terminal raw, with a forged "moat:" line.
moat run -- "$(printf '/nonexistent/RT23\033[31m\nmoat: FORGED')" >/dev/null 2>"$T_TMP/msg_esc" </dev/null
if grep -q $'\033' "$T_TMP/msg_esc" || grep -q '^moat: FORGED' "$T_TMP/msg_esc" ||
	! grep -qF 'RT23\033[31m\012moat: FORGED' "$T_TMP/msg_esc"; then
	fail messages_escape_guest_bytes "$(head -c 300 "$T_TMP/msg_esc" | cat -v)"
else ok messages_escape_guest_bytes; fi
# A DNS question's name is quoted too, and no longer repeated raw in the
# note: before (red team 86) a label `rt86") = 0 <allow> ` made the line of
# a refused question (NXDOMAIN, <deny>) read `dns("rt86") = 0 <allow> ...`.
# (moat's stub answers a name no rule names itself: no nameserver needed.)
cat >"$T_TMP/dnsq.py" <<'EOF'
import socket
ns = [l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")][0]
lab = b'rt86") = 0 <allow> '
q = b"\x12\x34\x01\0\0\x01\0\0\0\0\0\0" + bytes([len(lab)]) + lab + b"\x04test\0\0\x01\0\x01"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)
s.sendto(q, (ns, 53)); print("rcode", s.recv(1500)[3] & 15)
EOF
moat run --net allow=good.test --trace --bind "$T_TMP:/t:ro" -- "$PY" /t/dnsq.py >"$T_TMP/dnsq.out" 2>"$T_TMP/dnsq.err" </dev/null
rt86_line=$(grep -a '^\[moat -1\] dns(' "$T_TMP/dnsq.err" | head -1)
if [ "$rt86_line" = '[moat -1] dns("rt86\") = 0 <allow> .test", type 1) = 3 <deny> no rule names it' ] &&
	grep -qx 'rcode 3' "$T_TMP/dnsq.out"; then
	ok trace_dns_name_quoted
else fail trace_dns_name_quoted "$rt86_line $(head -c 200 "$T_TMP/dnsq.err")"; fi
# ... and keep their end: a name is cut (200 bytes, up to 800 escaped), and
# a message that does not fit ends in "...". Red team 86: a path of 3,000
# bytes of \001 filled moat's line, and "not found" was lost.
moat run -- "/nonexistent/RT86M$(head -c 3000 /dev/zero | tr '\0' '\001')" >/dev/null 2>"$T_TMP/msg_long" </dev/null
if grep -a 'RT86M' "$T_TMP/msg_long" | grep -q '^moat: /nonexistent/RT86M\\001.*: not found$'; then
	ok messages_keep_their_end
else fail messages_keep_their_end "$(grep -a RT86M "$T_TMP/msg_long" | tail -c 100)"; fi
mrun /bin/cat /etc/hostname >/dev/null 2>"$T_TMP/notrace"
if grep -qE 'openat\(' "$T_TMP/notrace"; then fail no_trace_by_default "trace lines without --trace"; else ok no_trace_by_default; fi

# --audit: JSON lines with the documented fields.
moat run --audit "$T_TMP/audit.jsonl" -- /bin/cat /etc/hostname >/dev/null 2>&1 </dev/null
if "$PY" - "$T_TMP/audit.jsonl" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert recs, "empty audit"
need = ["time", "sandbox", "syscall", "args", "decision", "result", "policy"]
for r in recs:
    keys = " ".join(r.keys()).lower()
    for k in need:
        assert k in keys, "missing %s in %s" % (k, r)
    assert any(k in keys for k in ("vpid", "pid", "task")), r
assert any(r.get("syscall") in ("openat", "open") and "/etc/hostname" in json.dumps(r) for r in recs), "no openat of /etc/hostname"
assert len({json.dumps(r.get([k for k in r if "sandbox" in k.lower()][0])) for r in recs}) == 1, "several sandbox ids"
PYEOF
then ok audit_json_lines; else fail audit_json_lines "see above"; fi

# A write to the --audit file that fails (a full disk, EIO) lost every
# later event, and moat said nothing and 0 (red team 40). Now one line with
# the count, and a run whose audit was lost is no success (the program's
# own failure status is kept).
e=$(moat run --audit /dev/full -- /bin/sh -c 'cat /etc/hostname >/dev/null' </dev/null 2>&1 >/dev/null); rc=$?
moat run --audit /dev/full -- /bin/sh -c 'exit 3' </dev/null >/dev/null 2>&1; rc3=$?
n=$(printf '%s\n' "$e" | grep -c '^moat: --audit /dev/full: No space left on device: [1-9][0-9]* events\{0,1\} not written$')
expect_eq audit_write_error_said "$rc $n $rc3" "1 1 3"

# --deny: a policy beyond the defaults. mkdir is denied (EPERM) and audited as
# denied, under a different policy version than the default policy's.
out=$(moat run --deny mkdir --audit "$T_TMP/deny.jsonl" -- /bin/sh -c 'mkdir /tmp/d 2>/dev/null; echo $?; mkdir -p /tmp/e/f 2>&1 | head -c 0; test -d /tmp/d || echo absent' </dev/null 2>/dev/null)
expect_eq deny_option_refuses "$out" "$(printf '1\nabsent')"
if "$PY" - "$T_TMP/deny.jsonl" "$T_TMP/audit.jsonl" <<'PYEOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
a = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
hits = [r for r in d if r["syscall"] == "mkdir" and r["decision"] == "deny" and r.get("errno") == "EPERM"]
assert hits, "no denied mkdir record"
assert d[0]["policy"] != a[0]["policy"], "same policy version with and without --deny"
PYEOF
then ok deny_option_audited; else fail deny_option_audited "see above"; fi
# A denied call is denied whatever its arguments: a path too long to copy in
# (red team 21: ENAMETOOLONG, audited "allow", not counted as denied).
out=$(moat run --deny mkdir --audit "$T_TMP/deny2.jsonl" -- /bin/sh -c 'mkdir "/tmp/$(head -c 5000 /dev/zero | tr "\0" A)" 2>&1 | sed "s/.*: //"' </dev/null 2>/dev/null)
got=$("$PY" -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(" ".join(x["decision"] + "/" + str(x.get("errno")) for x in r if x["syscall"] == "mkdir"))' "$T_TMP/deny2.jsonl" 2>&1)
expect_eq deny_option_whatever_args "$out | $got" "Operation not permitted | deny/EPERM"
one_line_case deny_unknown_syscall run --deny no_such_call -- /bin/true
# --deny NAME takes the calls that do NAME's work through another entry point
# (red-team round 5: --deny kill was stepped around with tkill/tgkill/
# rt_sigqueueinfo/pidfd_send_signal, --deny rename with renameat2, --deny
# mkdir with mkdirat). Raw numbers, so no libc wrapper picks for us.
fam='import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
sc = libc.syscall
sc.restype = ctypes.c_long
def r(*a):
    v = sc(*a)
    return "ok" if v >= 0 else os.strerror(ctypes.get_errno())
me = os.getpid()
tid = sc(186)
pfd = sc(434, me, 0)
out = [r(62, me, 0), r(200, tid, 0), r(234, me, tid, 0), r(424, pfd, 0, None, 0)]
out += [r(82, b"/tmp/a", b"/tmp/b"), r(264, -100, b"/tmp/a", -100, b"/tmp/b"), r(316, -100, b"/tmp/a", -100, b"/tmp/b", 0)]
out += [r(83, b"/tmp/d1", 0o755), r(258, -100, b"/tmp/d2", 0o755)]
print(" ".join(o.replace(" ", "_") for o in out))'
out=$(moat run --deny kill --deny rename --deny mkdir -- "$PY" -c "open('/tmp/a','w'); $fam" </dev/null 2>&1)
expect_eq deny_family_equivalents "$out" "$(echo Operation_not_permitted{,,,,,,,,} | tr -d '\n')"
out=$(moat run -- "$PY" -c "open('/tmp/a','w'); $fam" </dev/null 2>&1)
SANITY=1 expect_eq deny_family_sanity_allowed "$out" "ok ok ok ok ok No_such_file_or_directory No_such_file_or_directory ok ok"

# ^C at the caller's terminal reaches the program's whole foreground process
# group (as natively), although the sandbox has a session of its own.
if command -v script >/dev/null; then
	cat >"$T_TMP/sigint.sh" <<EOF2
"$MOAT" run -- $PY -c '
import os, signal, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGINT, lambda *a: (print("child-INT", flush=True), os._exit(0)))
    os.write(w, b"x"); time.sleep(20); os._exit(1)
signal.signal(signal.SIGINT, lambda *a: print("parent-INT", flush=True))
os.read(r, 1)
os.waitpid(pid, 0); print("end", flush=True)'
EOF2
	(sleep 3; printf '\003') | timeout -k 5 60 script -qec "bash $T_TMP/sigint.sh" /dev/null >"$T_TMP/sigint.out" 2>&1
	if grep -q child-INT "$T_TMP/sigint.out" && grep -q parent-INT "$T_TMP/sigint.out" && grep -q end "$T_TMP/sigint.out"; then
		ok terminal_interrupt_reaches_process_group
	else
		fail terminal_interrupt_reaches_process_group "$(tr -d '\r' <"$T_TMP/sigint.out" | head -c 300)"
	fi
else
	skip terminal_interrupt_reaches_process_group "no script(1)"
fi

# --audit/--result never write through a symlink (or into a FIFO) a sandbox
# made (red team 18): a guest with a rw bind of the directory the caller
# keeps them in plants audit.jsonl -> the caller's ~/.bashrc; the next run
# appended its lines to it, with the guest's "$(...)" paths in them (a shell
# that sources it runs them), and --result truncated it. Now exit 2, the
# target untouched; /dev/stdout still works.
mkdir -p "$T_TMP/ws" && chmod a+rwx "$T_TMP/ws" && echo keep >"$T_TMP/victim"
moat run --bind "$T_TMP/ws:/w:rw" -- /bin/sh -c "ln -s '$T_TMP/victim' /w/audit.jsonl; ln -s '$T_TMP/victim' /w/result.json; mkfifo /w/fifo" </dev/null >/dev/null 2>&1
moat run --audit "$T_TMP/ws/audit.jsonl" -- /bin/sh -c 'cat "/\$(id)" 2>/dev/null; true' </dev/null >/dev/null 2>&1; rc1=$?
moat run --result "$T_TMP/ws/result.json" -- /bin/true </dev/null >/dev/null 2>&1; rc2=$?
rc3=$(timeout 3 "$MOAT" run --result "$T_TMP/ws/fifo" -- /bin/true </dev/null >/dev/null 2>&1; echo $?)
res=$(moat run --result /dev/stdout -- /bin/true </dev/null 2>/dev/null | head -c 12)
expect_eq output_files_no_planted_symlink "$rc1 $rc2 $rc3 $(cat "$T_TMP/victim") $res" '2 2 2 keep {"sandbox": '

# Red team 92: host paths an earlier sandbox could have prepared. An agent
# framework runs sandboxes in sequence over one work directory a guest wrote
# through a rw bind: a symlink it planted at the name the caller gives to
# --bind SRC (ro, rw or cow), --export, --overlay or --root was followed
# (the next guest read and wrote the link's target, any host directory; the
# export and the overlay's layers were written there). Now exit 2, one line;
# the target untouched.
mkdir -p "$T_TMP/ws92" "$T_TMP/vd92" && chmod a+rwx "$T_TMP/ws92" && echo "host-$T_MARK" >"$T_TMP/vd92/secret"
moat run --bind "$T_TMP/ws92:/w:rw" -- /bin/sh -c "for n in src exp ov root; do ln -s '$T_TMP/vd92' /w/\$n; done" </dev/null >/dev/null 2>&1
r=
for spec in "--bind $T_TMP/ws92/src:/d:ro" "--bind $T_TMP/ws92/src:/d:rw" "--bind $T_TMP/ws92/src:/d:cow" \
	    "--export $T_TMP/ws92/exp" "--overlay $T_TMP/ws92/ov" "--root $T_TMP/ws92/root"; do
	# shellcheck disable=SC2086 # (SPEC's words: the option and its value)
	e=$(moat run $spec -- /bin/sh -c 'cat /d/secret; echo x >/d/new; echo y >/etc/new' 2>&1 </dev/null)
	r="$r $?"
	case $e in *": a symlink (refused: a sandbox may have made it)") ;; *) r="$r[$e]" ;; esac
done
expect_eq planted_symlink_sources_refused "$r $(ls "$T_TMP/vd92" | tr '\n' ' ')" " 2 2 2 2 2 2 secret "
# ... and a host process that flips the name between a directory and such a
# symlink (renameat2 RENAME_EXCHANGE, in a loop) while moat starts: the
# object moat checked is the one the gofer clones (checked_object), or exit
# 2; after the flipping the directory is bound as asked.
mkdir -p "$T_TMP/flip92" && echo mine >"$T_TMP/flip92/secret" && ln -s "$T_TMP/vd92" "$T_TMP/flip92alt"
"$PY" - "$T_TMP/flip92" "$T_TMP/flip92alt" "$T_TMP/flip92.stop" <<'EOF2' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while not os.path.exists(sys.argv[3]):
    for _ in range(100):
        libc.renameat2(-100, a, -100, b, 2)
EOF2
flipper=$!
leaks= n=0 end=$((SECONDS + 4))
while [ "$n" -lt 12 ] && [ "$SECONDS" -lt "$end" ]; do
	mode=ro; [ $((n % 2)) -eq 1 ] && mode=rw
	out=$(moat run --bind "$T_TMP/flip92:/d:$mode" -- /bin/cat /d/secret 2>/dev/null </dev/null)
	case $out in *host-*) leaks="$leaks $n:$mode" ;; esac
	n=$((n + 1))
done
touch "$T_TMP/flip92.stop"; wait "$flipper"
[ -d "$T_TMP/flip92alt" ] && [ ! -L "$T_TMP/flip92alt" ] && mv -T "$T_TMP/flip92alt" "$T_TMP/flip92.d" && rm "$T_TMP/flip92" && mv -T "$T_TMP/flip92.d" "$T_TMP/flip92"
after=$(moat run --bind "$T_TMP/flip92:/d:ro" -- /bin/cat /d/secret 2>&1 </dev/null)
expect_eq bind_src_swap_not_raced "leaks[$leaks] $after" "leaks[] mine"
# Red team 92: the knobs that undo the sentry's confinement are read only in
# a -DMOAT_DEV_KNOBS build. In every build, MOAT_SENTRY_FILTER_LEARN in
# moat's environment (an agent framework passing a guest-chosen environment
# through) made the sentry's seccomp filter log instead of refuse: the
# confinement probe's bpf, clone_newuser, add_key, setuid fchmod were
# ALLOWED. Now every probe is refused, as without the knobs.
out=$(MOAT_SENTRY_FILTER_LEARN=1 MOAT_NO_LANDLOCK_SCOPE=1 MOAT_TEST_CONFINEMENT=1 moat run -- /bin/true 2>&1 </dev/null)
expect_eq dev_knobs_not_honoured "$(printf '%s\n' "$out" | grep -c '^confinement-probe bpf: refused') $(printf '%s\n' "$out" | grep -c ': ALLOWED')" "1 0"
# Red team 92: moat apply ran "git" by the caller's PATH after its chdir to
# TREE, so an empty or relative entry (":/usr/bin", ".", "bin") found a git
# an earlier sandbox left in the tree and ran it as the caller. Now only
# PATH's absolute directories are searched, before the chdir.
mkdir -p "$T_TMP/tree92/bin" && chmod -R a+rwx "$T_TMP/tree92"
moat run --bind "$T_TMP/tree92:/t:rw" -- /bin/sh -c "for g in /t/git /t/bin/git; do printf '#!/bin/sh\ntouch $T_TMP/git92.ran\n' >\$g; chmod 755 \$g; done" </dev/null >/dev/null 2>&1
printf 'diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+hi\n' >"$T_TMP/p92.patch"
r=
for p in ":$PATH" ".:$PATH" "bin:$PATH"; do
	rm -f "$T_TMP/tree92/n"
	PATH=$p "$MOAT" apply "$T_TMP/p92.patch" "$T_TMP/tree92" </dev/null >/dev/null 2>&1
	r="$r $? $(cat "$T_TMP/tree92/n" 2>&1)"
done
expect_eq apply_git_not_from_tree "$([ -e "$T_TMP/git92.ran" ] && echo ran-planted-git)$r" " 0 hi 0 hi 0 hi"
# Red team 94: git apply removes every file it modifies, renames or deletes,
# then writes the new versions in the patch's order and stops at the first
# write that fails: a guest's export modifying a, b, c, deleting d/e and
# adding big.bin (between b and c) and n/x, applied where big.bin cannot be
# written (a full disk, a quota; here RLIMIT_FSIZE with SIGXFSZ ignored:
# EFBIG), left a and b new, big.bin cut, and c, d/e gone from the tree.
# Now moat apply puts the tree back (exit non-zero, one line, no undo
# directory left), and the same patch then applies whole.
mkdir -p "$T_TMP/src94/d" "$T_TMP/tree94/d"
for f in a b c d/e; do seq 1 100 >"$T_TMP/src94/$f"; seq 1 100 >"$T_TMP/tree94/$f"; done
chmod 0750 "$T_TMP/tree94/d"; chmod 0640 "$T_TMP/tree94/c"
chmod -R a+rwX "$T_TMP/src94"; chmod a+rwx "$T_TMP/tree94"
moat run --bind "$T_TMP/src94:/w:cow" --export "$T_TMP/exp94" -- /bin/sh -c \
	'for f in a b c; do echo more >>/w/$f; done; rm -r /w/d; seq 1 60000 >/w/big.bin; mkdir /w/n; echo new >/w/n/x' </dev/null >/dev/null 2>&1
tree94() { (cd "$T_TMP/tree94" && find . \( -type d -printf '%p %y %m\n' \) -o -printf '%p %y %m %s %i\n' | LC_ALL=C sort | tr '\n' ' '); }
before=$(tree94)
(ulimit -f 100; trap '' XFSZ; "$MOAT" apply "$T_TMP/exp94/w/changes.patch" "$T_TMP/tree94") </dev/null >/dev/null 2>"$T_TMP/apply94.err"
rc=$?
after=$(tree94)
if [ "$rc" -ne 0 ] && [ "$before" = "$after" ] && [ -n "$before" ] && [ "$(grep -c '^moat: ' "$T_TMP/apply94.err")" = 1 ]; then
	ok apply_failed_write_puts_tree_back
else
	fail apply_failed_write_puts_tree_back "exit $rc; before [$before] after [$after] stderr [$(cat "$T_TMP/apply94.err")]"
fi
"$MOAT" apply "$T_TMP/exp94/w/changes.patch" "$T_TMP/tree94" </dev/null >/dev/null 2>&1
expect_eq apply_after_undo_applies "$? $(cat "$T_TMP/tree94/c" | tail -1) $(wc -l <"$T_TMP/tree94/big.bin" 2>&1) $(cat "$T_TMP/tree94/n/x" 2>&1) $([ -e "$T_TMP/tree94/d" ] && echo d-left) $(ls -A "$T_TMP/tree94" | grep -c moat-apply)" "0 more 60000 new  0"
# Red team 96: the undo made the directories git apply had removed again
# as the caller: root applying a user's tree (d/ of uid 1234, 0750, its
# only file deleted, then a write that fails) gave d back to root, the user
# shut out of it, and set the mode by name (fchmodat following a symlink
# swapped in). Now the owner and mode are put back through an fd of the
# directory made.
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$T_TMP/tree96/d" && seq 1 5 >"$T_TMP/tree96/d/f" && chmod 0750 "$T_TMP/tree96/d" && chown -R 1234:1235 "$T_TMP/tree96"
	{ printf 'diff --git a/d/f b/d/f\ndeleted file mode 100644\n--- a/d/f\n+++ /dev/null\n@@ -1,5 +0,0 @@\n'
	  seq 1 5 | sed 's/^/-/'
	  printf 'diff --git a/z b/z\nnew file mode 100644\n--- /dev/null\n+++ b/z\n@@ -0,0 +1,3000 @@\n'
	  seq 1 3000 | sed 's/^/+xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/'; } >"$T_TMP/p96.patch"
	(ulimit -f 40; trap '' XFSZ; "$MOAT" apply "$T_TMP/p96.patch" "$T_TMP/tree96") </dev/null >/dev/null 2>&1
	expect_eq apply_undo_keeps_dir_owner "$? $(stat -c '%u:%g %a' "$T_TMP/tree96/d" 2>&1) $(cat "$T_TMP/tree96/d/f" 2>&1 | wc -l) $([ -e "$T_TMP/tree96/z" ] && echo z-left)" "128 1234:1235 750 5 "
else
	skip apply_undo_keeps_dir_owner "root applying another user's tree: root-run only"
fi
# Red team 96: the undo opened every level of a path from TREE again for
# each directory it removed: 20 new files 1,500 directories deep, then a
# write that fails, took 4 min to undo (depth^2 openat per path); now one
# walk down and up by "..": 3 s. Ten such files must be undone in 60 s.
{ d=$(printf 'a/%.0s' $(seq 1 1500))
  for k in 0 1 2 3 4 5 6 7 8 9; do printf 'diff --git a/%sf%s b/%sf%s\nnew file mode 100644\n--- /dev/null\n+++ b/%sf%s\n@@ -0,0 +1 @@\n+x\n' "$d" $k "$d" $k "$d" $k; done
  printf 'diff --git a/z b/z\nnew file mode 100644\n--- /dev/null\n+++ b/z\n@@ -0,0 +1,3000 @@\n'
  seq 1 3000 | sed 's/^/+xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/'; } >"$T_TMP/deep96.patch"
mkdir -p "$T_TMP/deep96"
(ulimit -f 40; trap '' XFSZ; exec timeout -s KILL 60 "$MOAT" apply "$T_TMP/deep96.patch" "$T_TMP/deep96") </dev/null >/dev/null 2>&1
expect_eq apply_deep_undo_bounded "$? $(ls -A "$T_TMP/deep96" | grep -vc moat-apply)" "128 0"
rm -rf "$T_TMP/deep96"

# Red team 40: options that contradict an earlier one were taken silently,
# the last one winning: a wrapper that appends --net none or a read-only
# --bind to a user's command line got neither (`--net allow=H --net none`
# left H reachable; a second mount at one destination hid the first). Now
# exit 2, one line. And every number is digits first: strtoull and %d took
# " 1G", "+1G", "+8080" (the next case ran).
one_line_case net_none_after_allow run --net allow=192.0.2.1:9 --net none -- /bin/true
one_line_case net_allow_after_none run --net none --net allow=192.0.2.1:9 -- /bin/true
one_line_case bind_same_destination run --bind "$T_TMP:/x:rw" --bind "$T_TMP:/x:ro" -- /bin/true
one_line_case bind_same_destination_spelled run --bind "$T_TMP:/x" --bind "/usr://x/." -- /bin/true
one_line_case tmpfs_over_bind_destination run --bind "$T_TMP:/x" --tmpfs /x/ -- /bin/true
one_line_case size_plus_sign run --memory +512M -- /bin/true
one_line_case size_leading_space run --disk " 64M" -- /bin/true
one_line_case publish_plus_sign run --publish +8080:80 -- /bin/true
# a size past 2^62 is refused: the kernel's tmpfs rounds size= up to pages,
# so --disk 18446744073709551615 wrapped to an unlimited scratch
one_line_case disk_size_wraps run --disk 18446744073709551615 -- /bin/true
one_line_case tmpfs_size_wraps run --tmpfs /x:size=18446744073709551615 -- /bin/true
# cliedge: careless input gets one line naming it and exit 2, never a run.
# A usage error is one line (the 94-line option list was dumped after it).
usage_case_line() {
	local name=$1 want=$2; shift 2
	local e rc
	e=$(moat "$@" 2>&1 >/dev/null </dev/null); rc=$?
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$e" | grep -c .)" -eq 1 ]; then
		case $e in *"$want"*) ok "$name"; return ;; esac
	fi
	fail "$name" "exit $rc stderr [$e]"
}
usage_case_line usage_missing_value_one_line "--memory needs a value" run --memory
usage_case_line usage_unknown_option_one_line "unknown option --no-such-option" run --no-such-option -- /bin/true
usage_case_line usage_diff_no_dir_one_line "diff needs one --export DIR" diff
# decimals as people write them: strtod took hex, exponents (these ran)
usage_case_line cpus_hex "--cpus 0x1:" run --cpus 0x1 -- /bin/true
usage_case_line cpus_exponent "--cpus 1e3:" run --cpus 1e3 -- /bin/true
usage_case_line timeout_hex "--timeout 0x10:" run --timeout 0x10 -- /bin/true
usage_case_line idle_timeout_exponent "--idle-timeout 1e3:" run --idle-timeout 1e3 -- /bin/true
# --workdir relative: it was taken from the sandbox's / (not the caller's cwd)
usage_case_line workdir_relative "--workdir tmp: must be an absolute path" run --workdir tmp -- /bin/true
# names programs print: no control characters
usage_case_line hostname_newline "--hostname: printable ASCII" run --hostname "$(printf 'a\nb')" -- /bin/true
usage_case_line kernel_release_escape "--kernel-release: printable ASCII" run --kernel-release "$(printf '\033[31m5.0')" -- /bin/true
# --bind of what cannot be bound: said as the caller's mistake (it was the
# gofer's "gofer: ...: not a directory or regular file", exit 1)
mkfifo "$T_TMP/fifo"
"$PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T_TMP/sock"
usage_case_line bind_src_fifo "--bind $T_TMP/fifo: not a directory or regular file" run --bind "$T_TMP/fifo:/x" -- /bin/true
usage_case_line bind_src_socket "--bind $T_TMP/sock: not a directory or regular file" run --bind "$T_TMP/sock:/x" -- /bin/true
usage_case_line bind_src_device "--bind /dev/null: not a directory or regular file" run --bind /dev/null:/x -- /bin/true
# a ':' in SRC's name: the message names the DST it made (it said "SRC and DST
# must be absolute paths" of an absolute SRC)
usage_case_line bind_src_colon "DST b must be an absolute path" run --bind "$T_TMP/a:b:/x" -- /bin/true
# a script whose interpreter is missing: named (it was "SCRIPT: not found")
printf '#!/nonexistent/interp-%s\n' "$T_MARK" >"$T_TMP/noint.sh"; chmod 755 "$T_TMP/noint.sh"
err=$(moat run --bind "$T_TMP:/w" -- /w/noint.sh 2>&1 >/dev/null </dev/null); rc=$?
expect_eq script_missing_interpreter "$rc $err" "127 moat: /w/noint.sh: its interpreter /nonexistent/interp-$T_MARK: not found"
# moat diff on a hostile DIR: a manifest.json that is a fifo or a symlink to
# /dev/zero, a mount directory that is a symlink, were opened and read (hung);
# they are skipped, the real one listed
hx=$T_TMP/hostile-export; mkdir -p "$hx/fifo" "$hx/zero" "$hx/real"
mkfifo "$hx/fifo/manifest.json"; ln -s /dev/zero "$hx/zero/manifest.json"; ln -s "$hx/real" "$hx/link"
printf '{"path": "x", "op": "add", "type": "file"}\n' >"$hx/real/manifest.json"
out=$(timeout 10 "$MOAT" diff "$hx" 2>&1 </dev/null); rc=$?
expect_eq diff_hostile_dir_no_hang "$rc $(printf '%s' "$out" | head -2 | tr '\n' '|')" "0 real:|  A x (file)|"
# what cannot be written on stdout is said, exit 1 (it was lost at exit 0, and
# syscalls said "--format table: expected table, csv or json", exit 2)
said=
for cmd in "syscalls" "syscalls --format json" "diff $hx" "--help"; do
	# shellcheck disable=SC2086
	e=$(timeout 10 "$MOAT" $cmd 2>&1 >/dev/full </dev/null); rc=$?
	n=$(printf '%s\n' "$e" | grep -c .)
	case $e in "moat: stdout: write error"*) e=said ;; esac
	said="$said$rc $n $e; "
done
expect_eq stdout_write_error_said "$said" "1 1 said; 1 1 said; 1 1 said; 1 1 said; "
out=$(moat run --net none --net none --bind "$T_TMP:/x" --bind "$T_TMP:/x/y" -- /bin/sh -c 'echo fine' </dev/null 2>&1)
expect_eq no_conflict_still_runs "$out" fine

# The caller's open-file limit (red team 40): a soft limit of 16 under a
# high hard one (moat needs more) failed the start ("gofer: tmpfs: Too many
# open files"), and a hard one too low for moat failed it with whatever
# ran out first ("moat-reopen: cannot hand it the guest's namespace", or
# moat-netd's sockets refused). moat now raises its own soft limit to the
# hard one, the program gets the caller's soft limit back, and a hard limit
# below 256 is said at once, one line, exit 1.
out=$(bash -c 'ulimit -Sn 16; exec "$@"' _ "$MOAT" run -- /bin/sh -c 'ulimit -Sn' </dev/null 2>&1); rc=$?
expect_eq nofile_soft_low_runs "$out rc $rc" "16 rc 0"
e=$(bash -c 'ulimit -n 64; exec "$@"' _ "$MOAT" run -- /bin/true </dev/null 2>&1 >/dev/null); rc=$?
if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$e" | grep -c .)" -eq 1 ] && printf '%s' "$e" | grep -q 'open-file limit'; then
	ok nofile_hard_low_one_line
else fail nofile_hard_low_one_line "exit $rc stderr [$e]"; fi

# The caller's umask (red team 40): the program started with umask 022
# whatever the caller's, so under a caller's 077 the files it wrote into a
# rw bind (the caller's own directory) were 0644, readable by every host
# user, where natively 0600; and a umask with owner bits (0700, 0777) made
# moat's own set-up files unusable: exit 126, not a word. The program now
# starts with the caller's umask; moat's own files take its group and
# other bits only.
mkdir -p "$T_TMP/um" && chmod 777 "$T_TMP/um"
out=$( (umask 077; "$MOAT" run --bind "$T_TMP/um:/w:rw" -- /bin/sh -c 'umask; echo k >/w/key; mkdir /w/d' </dev/null 2>&1) )
modes=$(stat -c '%a' "$T_TMP/um/key" "$T_TMP/um/d" 2>&1 | tr '\n' ' ')
out2=$( (umask 0777; "$MOAT" run -- /bin/sh -c 'umask; echo ran' </dev/null 2>&1); echo "rc $?")
expect_eq caller_umask_kept "$out $modes| $(echo $out2)" "0077 600 700 | 0777 ran rc 0"

# The caller's closed stdio (red team 40): a `moat run` started with fds 0-2
# closed (`<&- >&- 2>&-`, a daemon's wrapper) put its own fds there: the
# gofer's channel landed on fd 2 (every moat message and --trace line went
# into the gofer's protocol, and moat-init held it), the uid claim on fd 1;
# with all three closed moat exited 1 before the program ran. moat now holds
# /dev/null on each closed one and the program gets it closed, as natively.
# Each row: which fds the caller closed, moat's status, which of fds 0-2 the
# program had open, any socket on fds 0-2 of moat's processes (as root:
# rootless they are not ours to read); the last row with -t (on main its
# relay typed the gofer's protocol bytes from fd 0 into the program's
# terminal: a ^C among them ended the program with 130).
mkdir -p "$T_TMP/stdio" && chmod 777 "$T_TMP/stdio"
out=$("$PY" - "$MOAT" "$T_TMP/stdio" "${MOAT_TIMEOUT:-120}" <<'PYEOF' 2>&1
import os, sys, time
moat, d, tmo = sys.argv[1], sys.argv[2], float(sys.argv[3])
prog = ("import os, time\n"
        "s = []\n"
        "for fd in (0, 1, 2):\n"
        "    try: os.fstat(fd); s.append('open')\n"
        "    except OSError: s.append('closed')\n"
        "open('/out/r', 'w').write(','.join(s))\n"
        "time.sleep(0.8)\n")
def tree(root):
    kids = {}
    for p in os.listdir('/proc'):
        if p.isdigit():
            try:
                kids.setdefault(int(open('/proc/%s/stat' % p).read().rsplit(')', 1)[1].split()[1]), []).append(int(p))
            except (OSError, IndexError):
                pass
    out, todo = [], [root]
    while todo:
        p = todo.pop(); out.append(p); todo += kids.get(p, [])
    return out
rows = []
for tty, closed in (('', (0, 1, 2)), ('', (2,)), ('', (1,)), ('', (0,)), ('-t', (0, 1))):
    try: os.unlink(d + '/r')
    except FileNotFoundError: pass
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open('/dev/null', os.O_WRONLY), 2)  # (the --trace lines)
        for fd in closed:
            os.close(fd)
        os.execv(moat, [moat, 'run', '--trace', '--bind', d + ':/out:rw'] + ([tty] if tty else []) +
                 ['--', 'python3', '-c', prog])
    socks, t0 = set(), time.time()
    while time.time() - t0 < tmo:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if os.path.exists(d + '/r'):
            for p in tree(pid):
                for fd in (0, 1, 2):
                    try:
                        if os.readlink('/proc/%d/fd/%d' % (p, fd)).startswith('socket:'):
                            socks.add('%s:%d' % (open('/proc/%d/comm' % p).read().strip(), fd))
                    except OSError:
                        pass
        time.sleep(0.05)
    else:
        os.kill(pid, 9); done, st = os.waitpid(pid, 0)
    try: r = open(d + '/r').read()
    except OSError: r = 'none'
    rows.append('%s%s: rc %d prog %s sockets %s' % (tty, ','.join(map(str, closed)), os.waitstatus_to_exitcode(st), r,
                                                ' '.join(sorted(socks)) or 'none'))
print('; '.join(rows))
PYEOF
)
expect_eq caller_closed_stdio "$out" "0,1,2: rc 0 prog closed,closed,closed sockets none; 2: rc 0 prog open,open,closed sockets none; 1: rc 0 prog open,closed,open sockets none; 0: rc 0 prog closed,open,open sockets none; -t0,1: rc 0 prog open,open,open sockets none"

finish
