#!/bin/bash
# bench/net.sh: egress and socket costs, native against moat (issue 10).
#   connect_echo_close  N x (connect to an allowed 127.0.0.1 port, 1-byte echo, close), ns each
#   stream              MIB MiB over one allowed connection, MiB/s
#   udp_sendto_recv     N x (UDP sendto the allowed 127.0.0.1 port, recv the echo), ns each
#   udpconn             the same on a connected UDP socket (send, recv): moat-netd's relay
#   dgram_*             AF_UNIX datagrams by path (ptrace stops under moat), ns per round trip
# usage: bench/net.sh [--build DIR] [--base DIR] [--runs R] [--iters N] [--mib MIB] [--runsc PATH]
# The server runs on the host's loopback outside the sandbox; moat reaches it
# with --net allow=127.0.0.1:PORT. Prints the median of R runs of each.
# --base DIR: another build's moat (e.g. main's, for a before/after) as a
# column of its own, its runs interleaved with the others'.
# --runsc PATH (root only): the same under `runsc --rootless --network=host
# --platform=ptrace do`. runsc's `do` gives the program a network namespace
# of its own behind NAT (veth + an iptables MASQUERADE rule) for every other
# network mode, so it cannot reach the host's loopback (and needs iptables);
# with --rootless and --network=host it makes no network and the sandbox's
# sockets are the host's (gVisor's hostinet: each socket call forwarded to
# the host kernel, no netstack), which reaches the loopback server. That is
# runsc's fastest network, not its default (netstack).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build runs=3 iters=2000 mib=1024 runsc= base=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift ;;
	--base) base=$2; shift ;;
	--runs) runs=$2; shift ;;
	--iters) iters=$2; shift ;;
	--mib) mib=$2; shift ;;
	--runsc) runsc=$2; shift ;;
	*) sed -n '2,/^set /{/^#/p}' "$0"; exit 2 ;;
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
	base) "$base/cli/moat" run --bind "$build/bench:/b:ro" --bind "$tmp:/w:rw" --net allow=127.0.0.1:"$port" -- /b/net_loop "$kind" "$@" ;;
	runsc) "$runsc" --rootless --network=host --platform=ptrace do "$loop" "$kind" "$@" 2>/dev/null ;;
	esac
}
wheres="native"
if [ -n "$base" ]; then
	[ -x "$base/cli/moat" ] || { echo "--base: no $base/cli/moat" >&2; exit 2; }
	wheres="$wheres base"
fi
wheres="$wheres moat"
if [ -n "$runsc" ]; then
	[ "$(id -u)" = 0 ] || { echo "--runsc: runs as root only" >&2; exit 2; }
	wheres="$wheres runsc"
fi
printf '%-28s %14s' measure native
for w in $wheres; do [ "$w" = native ] || printf ' %14s %8s' "$w" ratio; done
printf '\n'
# Each measure's runs are interleaved (native, moat, runsc, native, ...):
# on a shared machine the load then weighs on every runtime alike. A run
# that fails (a lost datagram: udp's 5 s receive timeout) counts nothing.
declare -A res
for k in connect udp udpconn stream dgram; do
	for ((r = 0; r < runs; r++)); do
		for w in $wheres; do
			case $k in
			stream) run "$w" stream "$port" "$mib" | awk '{print $(NF-1)}' >>"$tmp/v.$w.$k" || true ;;
			dgram)
				d=$(case $w in moat | base) echo /w ;; *) echo "$tmp" ;; esac)
				run "$w" dgram "$d" "$iters" >>"$tmp/dg.$w" || true ;;
			*) run "$w" "$k" "$port" "$iters" | awk '{print $2}' >>"$tmp/v.$w.$k" || true ;;
			esac
		done
	done
done
for w in $wheres; do
	for k in connect udp udpconn stream; do
		res[$w,$k]=$(median <"$tmp/v.$w.$k")
	done
	for k in dgram_sendto_path_recvfrom dgram_sendmsg_noaddr_recv dgram_send_recv dgram_send_recvfrom_addr dgram_send_recvmsg_name stream_write_recvfrom_addr stream_write_recvmsg_name; do
		res[$w,$k]=$(grep "^$k " "$tmp/dg.$w" | awk '{print $2}' | median)
	done
done
# the ratio to native: time per operation, or native's MiB/s over this one's
ratio() { awk -v n="$1" -v m="$2" -v k="$3" 'BEGIN { if (m == "" || m + 0 == 0) print "-"; else if (k == "stream") printf "%.2f", n / m; else printf "%.2f", m / n }'; }
for k in connect udp udpconn stream dgram_sendto_path_recvfrom dgram_sendmsg_noaddr_recv dgram_send_recv dgram_send_recvfrom_addr dgram_send_recvmsg_name stream_write_recvfrom_addr stream_write_recvmsg_name; do
	n=${res[native,$k]}
	unit=ns
	[ "$k" = stream ] && unit=MiB/s
	printf '%-28s %14s' "$k" "$n"
	for w in $wheres; do
		[ "$w" = native ] && continue
		m=${res[$w,$k]}
		printf ' %14s %7sx' "${m:--}" "$(ratio "$n" "$m" "$k")"
	done
	printf '  (%s)\n' "$unit"
done
