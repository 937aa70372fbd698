#!/bin/bash
# bench/net.sh: egress and socket costs, native against moat (issue 10).
#   connect_echo_close  N x (connect to an allowed 127.0.0.1 port, 1-byte echo, close), ns each
#   stream              MIB MiB over one allowed connection, MiB/s
#   udp_sendto_recv     N x (UDP sendto the allowed 127.0.0.1 port, recv the echo), ns each
#   udpconn             the same on a connected UDP socket (send, recv): moat-netd's relay
#   dgram_*             AF_UNIX datagrams by path (ptrace stops under moat), ns per round trip
# usage: bench/net.sh [--build DIR] [--runs R] [--iters N] [--mib MIB] [--runsc PATH]
# (--runsc: Debian's runsc `do` puts the program behind NAT in a network
# namespace of its own, where the host's loopback server is not reachable.)
# The server runs on the host's loopback outside the sandbox; moat reaches it
# with --net allow=127.0.0.1:PORT. Prints the median of R runs of each.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build runs=3 iters=2000 mib=1024 runsc=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--runs) runs=$2; shift ;;
	--iters) iters=$2; shift ;;
	--mib) mib=$2; shift ;;
	--runsc) runsc=$2; shift ;;
	*) sed -n '2,9p' "$0"; exit 2 ;;
	esac
	shift
done
loop=$build/bench/net_loop
moat=$build/cli/moat
[ -x "$loop" ] && [ -x "$moat" ] || { echo "build first: $loop, $moat" >&2; exit 1; }
tmp=$(mktemp -d /tmp/moat-bench-net.XXXXXX)
chmod 777 "$tmp"
srv=
cleanup() { [ -n "$srv" ] && kill "$srv" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
"$loop" serve "$tmp/port" </dev/null >/dev/null 2>&1 &
srv=$!
for ((i = 0; i < 50; i++)); do [ -s "$tmp/port" ] && break; sleep 0.1; done
port=$(cat "$tmp/port")
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run() { # WHERE KIND ARGS...: one number
	local where=$1 kind=$2
	shift 2
	case $where in
	native) "$loop" "$kind" "$@" ;;
	moat) "$moat" run --bind "$build/bench:/b:ro" --bind "$tmp:/w:rw" --net allow=127.0.0.1:"$port" -- /b/net_loop "$kind" "$@" ;;
	runsc) "$runsc" --network=host do "$loop" "$kind" "$@" ;;
	esac
}
wheres="native moat"
[ -n "$runsc" ] && wheres="$wheres runsc"
printf '%-28s %14s %14s %8s\n' measure native moat ratio
declare -A res
for w in $wheres; do
	res[$w,connect]=$(for ((r = 0; r < runs; r++)); do run "$w" connect "$port" "$iters" | awk '{print $2}'; done | median)
	res[$w,udp]=$(for ((r = 0; r < runs; r++)); do run "$w" udp "$port" "$iters" | awk '{print $2}'; done | median)
	res[$w,udpconn]=$(for ((r = 0; r < runs; r++)); do run "$w" udpconn "$port" "$iters" | awk '{print $2}'; done | median)
	res[$w,stream]=$(for ((r = 0; r < runs; r++)); do run "$w" stream "$port" "$mib" | awk '{print $(NF-1)}'; done | median)
	d=$([ "$w" = native ] && echo "$tmp" || echo /w)
	[ "$w" = runsc ] && d=$tmp
	for ((r = 0; r < runs; r++)); do run "$w" dgram "$d" "$iters"; done >"$tmp/dg.$w"
	for k in dgram_sendto_path_recvfrom dgram_sendmsg_noaddr_recv dgram_send_recv; do
		res[$w,$k]=$(grep "^$k " "$tmp/dg.$w" | awk '{print $2}' | median)
	done
done
for k in connect udp udpconn stream dgram_sendto_path_recvfrom dgram_sendmsg_noaddr_recv dgram_send_recv; do
	n=${res[native,$k]} m=${res[moat,$k]}
	unit=ns
	[ "$k" = stream ] && unit=MiB/s
	ratio=$(awk -v n="$n" -v m="$m" -v k="$k" 'BEGIN { if (k == "stream") printf "%.2f", n / m; else printf "%.2f", m / n }')
	printf '%-28s %14s %14s %7sx  (%s)\n' "$k" "$n" "$m" "$ratio" "$unit"
	[ -n "$runsc" ] && printf '%-28s %14s (runsc)\n' "" "${res[runsc,$k]}"
done
