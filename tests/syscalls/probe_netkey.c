/* probe_netkey: moat's private call for a UDP send that moat-netd makes
 * cannot be made by the thread itself (tests/integration/isolation_net.sh).
 *   probe_netkey ADDR PORT
 * With --net allow=ADDR:PORT/udp a sendto to ADDR:PORT is rewritten at its
 * stop into moat's private call, and the request checked there is left for
 * it. This program installs its own seccomp filter that refuses (EPERM)
 * moat's private call number at one place (call_a), makes its sendto there
 * (the rewritten call is refused: the request stays), reads the rewritten
 * registers back (a syscall preserves them) and issues the private call
 * itself from another place (call_b): with the same registers, without the
 * key, after another trapped call, and from the same place. None of those
 * may send; each datagram's payload names its case, so the echo server's
 * log tells which one went out. Last, a plain sendto (libc's, which the
 * filter lets through) must still be sent ("netkey-ok").
 * One line per case: "CASE SENT" or "CASE ERRNO".
 * Only under moat or the fake in the shield (a hostile probe).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MOAT_SYS_LOADER 0x6d6f /* loader/loader_abi.h */

struct regs6 {
	long nr;
	unsigned long a[6];
};

/* One raw syscall; r->a holds the argument registers as the kernel left
 * them (after moat's rewrite, the private call's). */
#define RAW_SYSCALL(label, r)                                                                        \
	do {                                                                                         \
		register unsigned long r10 __asm__("r10") = (r)->a[3];                              \
		register unsigned long r8 __asm__("r8") = (r)->a[4];                                \
		register unsigned long r9 __asm__("r9") = (r)->a[5];                                \
		__asm__ volatile("syscall\n\t.globl " label "\n" label ":"                           \
				 : "+a"((r)->nr), "+D"((r)->a[0]), "+S"((r)->a[1]), "+d"((r)->a[2]), \
				   "+r"(r10), "+r"(r8), "+r"(r9)                                     \
				 :                                                                   \
				 : "rcx", "r11", "memory");                                          \
		(r)->a[3] = r10, (r)->a[4] = r8, (r)->a[5] = r9;                                     \
	} while (0)

__attribute__((noinline)) static long call_a(struct regs6 *r)
{
	RAW_SYSCALL("netkey_after_a", r);
	return r->nr;
}

__attribute__((noinline)) static long call_b(struct regs6 *r)
{
	RAW_SYSCALL("netkey_after_b", r);
	return r->nr;
}
extern char netkey_after_a[];

static void say(const char *name, long r)
{
	if (r >= 0)
		printf("%s SENT\n", name);
	else
		printf("%s %s\n", name, strerrorname_np((int)-r) ? strerrorname_np((int)-r) : "?");
	fflush(stdout);
}

static char payload[32];
static struct sockaddr_in dst;

/* the sendto at call_a, payload TAG: the rewritten registers in *out */
static long first(int s, const char *tag, struct regs6 *out)
{
	snprintf(payload, sizeof payload, "%s", tag);
	struct regs6 r = { __NR_sendto,
			   { (unsigned long)s, (unsigned long)payload, strlen(payload), 0,
			     (unsigned long)&dst, sizeof dst } };
	long v = call_a(&r);
	*out = r;
	out->nr = MOAT_SYS_LOADER;
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	dst.sin_family = AF_INET;
	dst.sin_port = htons((uint16_t)atoi(argv[2]));
	inet_pton(AF_INET, argv[1], &dst.sin_addr);
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0) {
		perror("socket");
		return 1;
	}
	uint64_t ip = (uint64_t)(uintptr_t)netkey_after_a;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MOAT_SYS_LOADER, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)ip, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, instruction_pointer) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(ip >> 32), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("seccomp");
		return 1;
	}
	struct regs6 r, b;

	/* the same registers, from another place */
	say("first_ip", first(s, "netkey-ip", &r));
	b = r;
	say("replay_other_ip", call_b(&b));

	/* without the key (the last argument) */
	say("first_nokey", first(s, "netkey-nokey", &r));
	b = r;
	b.a[5] = 0;
	say("replay_nokey", call_b(&b));

	/* after another trapped call of the thread */
	say("first_after", first(s, "netkey-after", &r));
	close(open("/nonexistent-netkey", O_RDONLY));
	b = r;
	say("replay_after_call", call_b(&b));

	/* from the same place: the thread's own filter refuses it again */
	say("first_same", first(s, "netkey-same", &r));
	b = r;
	say("replay_same_ip", call_a(&b));

	/* libc's sendto (another place): moat's private call goes through */
	snprintf(payload, sizeof payload, "netkey-ok");
	long v = sendto(s, payload, strlen(payload), 0, (struct sockaddr *)&dst, sizeof dst);
	say("libc_sendto", v < 0 ? -errno : v);
	return 0;
}
