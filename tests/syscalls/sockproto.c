/* sockproto.c - socket/socketpair (type, protocol) pairs of AF_INET,
 * AF_INET6 and AF_NETLINK (red team 67).
 *
 * For a pair no protosw list holds, inet_create/inet6_create ask the kernel
 * to load "net-pf-F-proto-P-type-T" then "net-pf-F-proto-P" (sctp, dccp,
 * l2tp_ip, smc...), and netlink_create "net-pf-16-proto-P": a guest would make
 * the host load modules. moat runs only the pairs every kernel builds in and
 * answers the others as a kernel without the module: EPROTONOSUPPORT,
 * ESOCKTNOSUPPORT, EINVAL (flags, a protocol out of range).
 *
 * Allowed pairs print what the kernel answers (the same native and under
 * moat: the call is native). Refused pairs: under moat (a seccomp filter on
 * this task) the exact answer; natively the call is made only when this
 * kernel cannot load modules (no /proc/modules: CONFIG_MODULES off), and
 * then it either holds the protocol built in (a socket) or answers as
 * moat does; with modules the native run makes no call (it would load
 * them as root). */
#include "t.h"

#include <linux/netlink.h>
#include <netinet/in.h>
#include <sys/socket.h>

static const char *ename(long r)
{
	switch (r) {
	case -EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case -ESOCKTNOSUPPORT: return "ESOCKTNOSUPPORT";
	case -EAFNOSUPPORT: return "EAFNOSUPPORT";
	case -EINVAL: return "EINVAL";
	case -EPERM: return "EPERM";
	case -EACCES: return "EACCES";
	case -EOPNOTSUPP: return "EOPNOTSUPP";
	default: return r >= 0 ? "ok" : "other";
	}
}

static long sock3(long fam, long type, long proto)
{
	long r = syscall(SYS_socket, fam, type, proto);
	if (r < 0)
		return -errno;
	close((int)r);
	return 0;
}

static long pair3(long fam, long type, long proto)
{
	int sv[2];
	long r = syscall(SYS_socketpair, fam, type, proto, sv);
	if (r < 0)
		return -errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* an allowed pair: native under moat too, so the same answer */
static void allowed(const char *name, long fam, long type, long proto)
{
	long r = sock3(fam, type, proto);
	printf("ok %s %s\n", name, ename(r));
	fflush(stdout);
}

static bool native_may_call(void)
{
	return access("/proc/modules", F_OK) != 0;
}

/* a refused pair: under moat exactly `want`; natively `want` or a socket
 * (built in here), or no call at all when this kernel loads modules */
static void refused(const char *name, bool pair, long fam, long type, long proto, int want)
{
	bool guest = t_confined();

	if (!guest && !native_may_call()) {
		t_ok(name);
		return;
	}
	long r = pair ? pair3(fam, type, proto) : sock3(fam, type, proto);
	if (r == -want || (!guest && (r == 0 || (pair && r == -EOPNOTSUPP))))
		t_ok(name);
	else
		t_fail(name, "%s, want %s", ename(r), ename(-want));
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "sockproto");
	const long cx = SOCK_CLOEXEC | SOCK_NONBLOCK;
	const long hi = 1L << 32; /* the kernel reads ints */

	allowed("inet_stream_0", AF_INET, SOCK_STREAM, 0);
	allowed("inet_stream_tcp", AF_INET, SOCK_STREAM | cx, IPPROTO_TCP);
	allowed("inet_stream_tcp_hi", AF_INET | hi, SOCK_STREAM | hi, IPPROTO_TCP | hi);
	allowed("inet_dgram_0", AF_INET, SOCK_DGRAM, 0);
	allowed("inet_dgram_udp", AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	allowed("inet6_stream_0", AF_INET6, SOCK_STREAM, 0);
	allowed("inet6_stream_tcp", AF_INET6, SOCK_STREAM, IPPROTO_TCP);
	allowed("inet6_dgram_udp", AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, IPPROTO_UDP);
	/* bits above the type's flags: Linux's EINVAL before any look-up */
	allowed("inet_stream_badflag", AF_INET, SOCK_STREAM | 0x100, IPPROTO_TCP);
	allowed("netlink_route", AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	allowed("netlink_route_dgram", AF_NETLINK, SOCK_DGRAM, NETLINK_ROUTE);
	{
		long r = pair3(AF_INET, SOCK_STREAM, 0), r6 = pair3(AF_INET6, SOCK_DGRAM, IPPROTO_UDP);
		printf("ok socketpair_inet %s %s\n", ename(r), ename(r6));
		fflush(stdout);
	}
	/* built in or absent, and per-netns sysctls (net.mptcp.enabled,
	 * ping_group_range) may answer differently in the guest's netns: the
	 * call is made, any kernel answer but a refusal of the pair */
	struct { const char *n; long f, t, p; } loose[] = {
		{ "inet_stream_mptcp", AF_INET, SOCK_STREAM, 262 },
		{ "inet6_stream_mptcp", AF_INET6, SOCK_STREAM, 262 },
		{ "inet_dgram_udplite", AF_INET, SOCK_DGRAM, 136 },
		{ "inet6_dgram_udplite", AF_INET6, SOCK_DGRAM, 136 },
		{ "inet_ping", AF_INET, SOCK_DGRAM, IPPROTO_ICMP },
		{ "inet6_ping", AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6 },
		/* raw: the wildcard entry, any protocol (EPERM without CAP_NET_RAW) */
		{ "inet_raw_icmp", AF_INET, SOCK_RAW, IPPROTO_ICMP },
		{ "inet_raw_sctp", AF_INET, SOCK_RAW, 132 },
		{ "inet6_raw_l2tp", AF_INET6, SOCK_RAW | SOCK_CLOEXEC, 115 },
	};
	for (size_t i = 0; i < sizeof loose / sizeof loose[0]; i++) {
		long r = sock3(loose[i].f, loose[i].t, loose[i].p);
		CHECK(r == 0 || r == -EPERM || r == -EACCES || (r == -EPROTONOSUPPORT && loose[i].p == 262 && !t_confined()),
		      loose[i].n, "%s", ename(r));
	}

	refused("inet_sctp_stream", false, AF_INET, SOCK_STREAM, 132, EPROTONOSUPPORT);
	refused("inet_sctp_stream_flags", false, AF_INET, SOCK_STREAM | cx, 132, EPROTONOSUPPORT);
	refused("inet_sctp_stream_hi", false, AF_INET, SOCK_STREAM, 132 | hi, EPROTONOSUPPORT);
	refused("inet6_sctp_stream", false, AF_INET6, SOCK_STREAM, 132, EPROTONOSUPPORT);
	refused("inet_sctp_seqpacket", false, AF_INET, SOCK_SEQPACKET, 132, ESOCKTNOSUPPORT);
	refused("inet6_sctp_seqpacket", false, AF_INET6, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ESOCKTNOSUPPORT);
	refused("inet_dccp", false, AF_INET, 6 /* SOCK_DCCP */, 33, ESOCKTNOSUPPORT);
	refused("inet6_dccp", false, AF_INET6, 6, 0, ESOCKTNOSUPPORT);
	refused("inet_l2tp_ip", false, AF_INET, SOCK_DGRAM, 115, EPROTONOSUPPORT);
	refused("inet6_l2tp_ip6", false, AF_INET6, SOCK_DGRAM, 115, EPROTONOSUPPORT);
	refused("inet_smc", false, AF_INET, SOCK_STREAM, 256, EPROTONOSUPPORT);
	refused("inet6_smc", false, AF_INET6, SOCK_STREAM, 256, EPROTONOSUPPORT);
	refused("inet_stream_udp", false, AF_INET, SOCK_STREAM, IPPROTO_UDP, EPROTONOSUPPORT);
	refused("inet_dgram_tcp", false, AF_INET, SOCK_DGRAM, IPPROTO_TCP, EPROTONOSUPPORT);
	refused("inet_dgram_icmpv6", false, AF_INET, SOCK_DGRAM, IPPROTO_ICMPV6, EPROTONOSUPPORT);
	refused("inet6_dgram_icmp", false, AF_INET6, SOCK_DGRAM, IPPROTO_ICMP, EPROTONOSUPPORT);
	refused("inet_rdm", false, AF_INET, SOCK_RDM, 0, ESOCKTNOSUPPORT);
	refused("inet_type0", false, AF_INET, 0, 0, ESOCKTNOSUPPORT);
	refused("inet6_type9", false, AF_INET6, 9, 0, ESOCKTNOSUPPORT);
	refused("inet6_packet", false, AF_INET6, SOCK_PACKET, 0, ESOCKTNOSUPPORT);
	refused("inet_type11", false, AF_INET, 11, 0, EINVAL);
	refused("inet_proto_max", false, AF_INET, SOCK_STREAM, 263, EINVAL);
	refused("inet_proto_neg", false, AF_INET, SOCK_DGRAM, -1, EINVAL);
	refused("inet_sctp_badflag", false, AF_INET, SOCK_STREAM | 0x100, 132, EINVAL);
	refused("netlink_unregistered", false, AF_NETLINK, SOCK_RAW, 5, EPROTONOSUPPORT);
	refused("netlink_generic", false, AF_NETLINK, SOCK_DGRAM, NETLINK_GENERIC, EPROTONOSUPPORT);
	refused("netlink_max", false, AF_NETLINK, SOCK_RAW, 40, EPROTONOSUPPORT);
	refused("netlink_stream", false, AF_NETLINK, SOCK_STREAM, NETLINK_AUDIT, ESOCKTNOSUPPORT);
	refused("socketpair_sctp", true, AF_INET, SOCK_STREAM, 132, EPROTONOSUPPORT);
	refused("socketpair_sctp6_seqpacket", true, AF_INET6, SOCK_SEQPACKET, 132, ESOCKTNOSUPPORT);
	refused("socketpair_l2tp", true, AF_INET, SOCK_DGRAM, 115, EPROTONOSUPPORT);
	/* AF_INET SOCK_PACKET is AF_PACKET to __sock_create: natively a
	 * packet socket as root, EPERM otherwise; moat refuses AF_PACKET */
	if (t_confined())
		refused("inet_sock_packet", false, AF_INET, SOCK_PACKET, 0, EAFNOSUPPORT);
	else
		t_ok("inet_sock_packet");
	return t_done();
}
