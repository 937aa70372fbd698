#!/bin/bash
# NEGATIVE tests, TOCTOU: a multi-threaded guest flipping a path buffer between an
# allowed file and a forbidden one, thousands of times, never opens/stats/execs
# the forbidden one (tests/syscalls/race_open.c).
. "$(dirname "$0")/lib.sh"
[ -n "$SYSCALL_BIN" ] && [ -x "$SYSCALL_BIN/race_open" ] || { fail setup "no $SYSCALL_BIN/race_open"; finish; }
secs=${RACE_SECONDS:-5}

# Forbidden targets: a canary in the caller's home (hidden in the guest) and,
# as root, /etc/shadow and a canary under /root. Exec canaries exit 99.
canary="$HOST_HOME/moat-race-$T_MARK"
printf 'RACE-CANARY\n' >"$canary" && at_exit "rm -f '$canary'"
printf '#!/bin/sh\nexit 99\n' >"$canary.sh" && chmod 755 "$canary.sh" && at_exit "rm -f '$canary.sh'"
targets=("$canary")
exec_targets=("$canary.sh")
if [ "$(id -u)" = 0 ]; then
	targets+=(/etc/shadow)
fi
if [ "$(id -u)" = 0 ] && [ "$HOST_HOME" != /root ]; then
	printf 'RACE-CANARY\n' >"/root/moat-race-$T_MARK" && at_exit "rm -f '/root/moat-race-$T_MARK'"
	targets+=("/root/moat-race-$T_MARK")
fi
mkdir -p "$T_TMP/w" && chmod 777 "$T_TMP/w"

i=0
for t in "${targets[@]}"; do
	i=$((i + 1))
	for mode in open stat; do
		out=$(moat run --bind "$SYSCALL_BIN:/t:ro" --bind "$T_TMP/w:/work:rw" -- /t/race_open "$mode" /work "$t" "$secs" </dev/null 2>&1)
		case $out in "ok race_$mode"*) ok "race_${mode}_$i" ;; *) fail "race_${mode}_$i" "target $t: $out" ;; esac
	done
done
for t in "${exec_targets[@]}"; do
	out=$(moat run --bind "$SYSCALL_BIN:/t:ro" --bind "$T_TMP/w:/work:rw" -- /t/race_open exec /work "$t" "$secs" </dev/null 2>&1)
	case $out in "ok race_exec"*) ok race_exec ;; *) fail race_exec "target $t: $out" ;; esac
done
finish
