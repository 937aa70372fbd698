# tests/sched-normal.sh: sourced by tests/run-all.sh and .ci/run, as root.
# A runner may hand us SCHED_IDLE and one CPU of several (stop 34's CI: nice
# 19, SCHED_IDLE, CPU 0 of 0-1). Take SCHED_OTHER and every online CPU the
# cpuset allows for this shell (its children inherit both); say what was
# changed, on stderr, once. Nothing fails here: a cpuset that keeps us on one
# CPU stays, and the tests that need two say so themselves.
_sn_pol=$(chrt -p $$ 2>/dev/null | sed -n 's/.*policy: //p' | head -1)
if [ -n "$_sn_pol" ] && [ "$_sn_pol" != SCHED_OTHER ] && chrt -o -p 0 $$ 2>/dev/null; then
	echo "sched-normal: $_sn_pol -> SCHED_OTHER" >&2
fi
_sn_on=$(cat /sys/devices/system/cpu/online 2>/dev/null)
_sn_had=$(taskset -cp $$ 2>/dev/null | sed -n 's/.*list: //p')
_sn_n=$(nproc)
if [ -n "$_sn_on" ] && [ -n "$_sn_had" ] && [ "$_sn_n" -lt "$(getconf _NPROCESSORS_ONLN)" ] &&
	taskset -cp "$_sn_on" $$ >/dev/null 2>&1; then
	# (a cpuset may keep fewer: then it says so)
	if [ "$(nproc)" -gt "$_sn_n" ]; then
		echo "sched-normal: CPUs $_sn_had -> $(taskset -cp $$ 2>/dev/null | sed -n 's/.*list: //p')" >&2
	else
		echo "sched-normal: CPUs $_sn_had only (the cpuset keeps them)" >&2
	fi
fi
unset _sn_pol _sn_on _sn_had _sn_n
