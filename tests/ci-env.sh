#!/bin/bash
# tests/ci-env.sh [--without KNOB[,KNOB...]] [--only KNOB[,KNOB...]] [--list] CMD...
#
# Runs CMD (as root) in an environment like the one a shared CI runner may
# give us, so that a test depending on how the runner starts the suite fails
# here first (stop 34's CI: SCHED_IDLE, nice 19, one CPU of two; the next
# one: a one-CPU cpuset that tests/sched-normal.sh cannot widen). Every knob
# is on unless named by --without (or left out of --only):
#
#   cpuset   a v1 cpuset child moat-ci-env-$$ with cpus 0, mems 0 (the shell
#            moves into it; removed at exit, its stragglers moved back)
#   memory   a v1 memory cgroup child (limit CI_ENV_MEM, default 4G) of the
#            one we are in
#   idle     SCHED_IDLE and nice 19 (sched-normal.sh undoes the first)
#   setsid   no controlling terminal (a new session), stdin from /dev/null
#   pipe     stdout and stderr through a pipe (a runner logs, no tty)
#   signals  SIGHUP and SIGPIPE ignored (nohup-like launchers: ignored
#            dispositions are inherited across exec)
#   umask    umask 077
#   cwd      cwd a directory of mode 0555 (read-only to the rootless tier;
#            CMD's paths must be absolute: $CI_ENV_SRC is the caller's cwd)
#   tmpdir   TMPDIR set to another directory (mode 1777)
#   locale   LANG, LANGUAGE and LC_* unset, LC_ALL=C.UTF-8
#   home     HOME unset
#   path     PATH=/usr/bin:/bin (no sbin, no /usr/local)
#   rlimits  RLIMIT_NOFILE soft 1024, RLIMIT_CORE 0
#   env      TERM unset, CI=true (runners set it; tests must not key on it)
#
# Why these: a container-like runner (a GitHub/GitLab job or a Docker
# executor) runs the job's script without a terminal, logged through a pipe,
# in a checkout that is not the cwd we assume, with a minimal environment
# (no HOME, no locale, a short PATH, TERM unset), a cpuset and a memory limit
# of its own, the default soft NOFILE of 1024 and no core dumps; a
# low-priority one adds SCHED_IDLE/nice. Not applied: no_new_privs (it would
# stop su for the rootless stage: run that part separately if wanted).
#
# Example (from the worktree, after building):
#   tests/ci-env.sh bash -c 'cd "$CI_ENV_SRC" && tests/syscalls/run.sh --bin build/tests/syscalls --moat build/cli/moat'
# The exit status is CMD's.
set -u
knobs_all="cpuset memory idle setsid pipe signals umask cwd tmpdir locale home path rlimits env"
on=" $knobs_all "
while [ $# -gt 0 ]; do
	case "$1" in
	--without) for k in ${2//,/ }; do on=${on/ $k / }; done; shift 2 ;;
	--only) on=" ${2//,/ } "; shift 2 ;;
	--list) echo "$knobs_all"; exit 0 ;;
	--) shift; break ;;
	-*) echo "ci-env: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--without K,..] [--only K,..] [--list] CMD..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "ci-env: run as root (cgroups, SCHED_IDLE)" >&2; exit 2; }
has() { case "$on" in *" $1 "*) return 0 ;; esac; return 1; }

export CI_ENV_SRC=$PWD
scratch=$(mktemp -d /tmp/moat-ci-env-$$.XXXXXX) || exit 2
chmod 755 "$scratch"
cs=/sys/fs/cgroup/cpuset/moat-ci-env-$$
memroot=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
mem=$memroot/moat-ci-env-$$

# Moves every task of cgroup dir $1 to $2 and removes $1 (a few tries: tasks
# may still be exiting).
cg_drop() {
	local i t
	[ -d "$1" ] || return 0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		while read -r t; do echo "$t" >"$2/cgroup.procs" 2>/dev/null; done <"$1/cgroup.procs"
		rmdir "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	echo "ci-env: could not remove $1" >&2
}
cleanup() {
	cg_drop "$cs" /sys/fs/cgroup/cpuset
	cg_drop "$mem" "$memroot"
	chmod -R u+w "$scratch" 2>/dev/null
	rm -rf "$scratch"
}
trap cleanup EXIT

applied=
if has cpuset; then
	if mkdir "$cs" && echo 0 >"$cs/cpuset.cpus" && echo 0 >"$cs/cpuset.mems" &&
		echo $$ >"$cs/cgroup.procs"; then
		applied+=" cpuset(cpus 0)"
	else
		echo "ci-env: no v1 cpuset here: cpuset knob not applied" >&2
	fi
fi
if has memory; then
	if [ -d "$memroot" ] && mkdir "$mem" &&
		echo "${CI_ENV_MEM:-4G}" >"$mem/memory.limit_in_bytes" && echo $$ >"$mem/cgroup.procs"; then
		applied+=" memory(${CI_ENV_MEM:-4G})"
	else
		echo "ci-env: no v1 memory cgroup here: memory knob not applied" >&2
	fi
fi
if has tmpdir; then
	mkdir -m 1777 "$scratch/tmp" && chmod 1777 "$scratch/tmp"
	export TMPDIR=$scratch/tmp
	applied+=" TMPDIR=$TMPDIR"
fi
if has cwd; then
	mkdir "$scratch/cwd" && chmod 555 "$scratch/cwd" && cd "$scratch/cwd" && applied+=" cwd=$PWD(0555)"
fi
if has locale; then
	unset LANG LANGUAGE $(env | sed -n 's/^\(LC_[A-Z_]*\)=.*/\1/p')
	export LC_ALL=C.UTF-8
	applied+=" LC_ALL=C.UTF-8"
fi
has home && { unset HOME; applied+=" HOME-unset"; }
has path && { export PATH=/usr/bin:/bin; applied+=" PATH=$PATH"; }
has env && { unset TERM; export CI=true; applied+=" TERM-unset CI=true"; }
if has rlimits; then
	ulimit -S -n 1024 && ulimit -S -c 0 && ulimit -H -c 0 && applied+=" nofile=1024 core=0"
fi
has umask && { umask 077; applied+=" umask=077"; }
if has idle; then
	renice -n 19 -p $$ >/dev/null && chrt -i -p 0 $$ && applied+=" SCHED_IDLE nice=19"
fi
has signals && { trap '' HUP PIPE; applied+=" SIGHUP,SIGPIPE-ignored"; }
echo "ci-env:$applied" >&2

# The command: setsid (a new session: no controlling terminal) with stdin
# from /dev/null, its output through a pipe; waited for here so that the
# cgroups can be removed after it. In the background (a wait ends at a
# signal): SIGINT or SIGTERM to us ends everything in our cgroups (else the
# command's process), then the clean-up runs.
run() {
	if has setsid; then setsid -w "$@" </dev/null; else "$@" <&3; fi
}
pipe_run() {
	if has pipe; then
		run "$@" 2>&1 | cat
		return "${PIPESTATUS[0]}"
	fi
	run "$@"
}
stop() {
	local d t
	for d in "$cs" "$mem"; do
		[ -f "$d/cgroup.procs" ] || continue
		while read -r t; do [ "$t" = $$ ] || kill -TERM "$t" 2>/dev/null; done <"$d/cgroup.procs"
	done
	kill -TERM "$child" 2>/dev/null
	stopped=$1
}
exec 3<&0
pipe_run "$@" &
child=$!
stopped=
trap 'stop 130' INT
trap 'stop 143' TERM
while :; do
	wait "$child"
	rc=$?
	[ -n "$stopped" ] && [ "$rc" -gt 128 ] && kill -0 "$child" 2>/dev/null && continue
	break
done
[ -n "$stopped" ] && rc=$stopped
exit $rc
