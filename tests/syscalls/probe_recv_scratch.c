/* probe_recv_scratch: the source name of a datagram received on an AF_UNIX
 * socket bound to a path, from a sender bound to another path, when the
 * sentry's copy cannot be made. In the sandbox a bound path is an abstract
 * name "\0moat/<sandbox>/<dev>:<ino>:<gen>" whose 64-bit generation lets a
 * task name the socket natively without connect's permission check
 * (sentry/unixsock.c); the receive stops give the call a copy of the header
 * (or a full-size name buffer) below the red zone, where the kernel writes
 * that name, and map it at the exit. A copy that could not be written (the
 * stack pointer at the start of a mapping, nothing mapped below it) let the
 * call run natively on the guest's own header: the kernel wrote the
 * abstract name where the guest asked (red team 84). The cases: recvmsg,
 * recvmmsg and recvfrom (a short name buffer: the stop swaps in a full-size
 * one) made with the stack pointer there, and recvmmsg of two messages
 * whose second header is unmapped (the stop's read of both failed: native).
 * Each must answer (an error is fine) without an abstract name; a plain
 * recvmsg first shows the sender's path (the mapping works).
 * Prints "ok probe_recv_scratch" or "FAIL probe_recv_scratch CASE ...".
 * Never natively (an isolation probe; natively every name is a path). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include "unix_pair.h"

#define PG 4096
static char *low; /* a page with nothing mapped below it */

/* syscall NR with the stack pointer 64 bytes into `low` (signals blocked:
 * nothing runs on that stack) */
static long call_low_sp(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	char *sp = low + 64;
	__asm__ volatile("mov %%rsp, %%r12\n\tmov %[sp], %%rsp\n\tsyscall\n\tmov %%r12, %%rsp"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9), [sp] "r"(sp)
			 : "rcx", "r11", "r12", "memory");
	return ret;
}

static int fails;
/* what the guest got: an abstract name (the kernel's, not the path) fails */
static void check(const char *what, long r, const struct sockaddr_un *n, unsigned len, const char *want)
{
	int abstract = len > 2 && n->sun_family == AF_UNIX && n->sun_path[0] == 0 && n->sun_path[1] != 0;
	if (abstract) {
		char seen[sizeof n->sun_path + 1] = "";
		for (size_t i = 1; i < sizeof n->sun_path && n->sun_path[i]; i++)
			seen[i - 1] = n->sun_path[i];
		printf("FAIL probe_recv_scratch %s: = %ld, the kernel's abstract name \"@%s\"\n", what, r, seen);
		fails++;
	} else if (want && (r < 0 || strcmp(n->sun_path, want))) {
		printf("FAIL probe_recv_scratch %s: = %ld, name \"%s\" (want the sender's path %s)\n", what, r,
		       n->sun_path, want);
		fails++;
	} else {
		printf("%s: %s\n", what, r < 0 ? strerror((int)-r) : "a name that is no abstract one");
	}
}

int main(void)
{
	struct unix_pair up;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (unix_pair_open(&up, "probe_recv_scratch", SOCK_NONBLOCK) < 0)
		return 1;
	int s = up.s, r = up.r;
	const char *sp = up.sp;
	struct sockaddr_un to = up.to;
	char *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	munmap(m, PG);
	munmap(m + 2 * PG, PG);
	low = m + PG; /* its headers end at the unmapped page above too */
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	for (int k = 0; k < 5; k++) {
		if (sendto(s, "x", 1, 0, (struct sockaddr *)&to, sizeof to) != 1) {
			printf("FAIL probe_recv_scratch sendto: %s\n", strerror(errno));
			return 1;
		}
		struct sockaddr_un name;
		memset(&name, 0, sizeof name);
		char buf[8];
		struct iovec v = { buf, sizeof buf };
		struct msghdr mh = { .msg_name = &name, .msg_namelen = sizeof name, .msg_iov = &v, .msg_iovlen = 1 };
		long ret;
		switch (k) {
		case 0: /* the mapping works */
			ret = recvmsg(r, &mh, 0);
			check("recvmsg", ret < 0 ? -errno : ret, &name, mh.msg_namelen, sp);
			break;
		case 1:
			ret = call_low_sp(SYS_recvmsg, r, (long)&mh, 0, 0, 0, 0);
			check("recvmsg, the stack pointer above a hole", ret, &name, mh.msg_namelen, NULL);
			break;
		case 2: {
			struct mmsghdr mm = { mh, 0 };
			ret = call_low_sp(SYS_recvmmsg, r, (long)&mm, 1, MSG_DONTWAIT, 0, 0);
			check("recvmmsg, the stack pointer above a hole", ret, &name, mm.msg_hdr.msg_namelen, NULL);
			break;
		}
		case 3: { /* two headers, the second in the unmapped page */
			struct mmsghdr *mm = (struct mmsghdr *)(void *)(low + PG - sizeof *mm);
			memset(mm, 0, sizeof *mm);
			mm->msg_hdr = mh;
			ret = syscall(SYS_recvmmsg, r, mm, 2, MSG_DONTWAIT, NULL);
			check("recvmmsg, its second header unmapped", ret < 0 ? -errno : ret, &name,
			      mm->msg_hdr.msg_namelen, NULL);
			break;
		}
		default: { /* a short name buffer: the stop gives a full-size one */
			socklen_t len = 100;
			ret = call_low_sp(SYS_recvfrom, r, (long)buf, sizeof buf, MSG_DONTWAIT, (long)&name, (long)&len);
			check("recvfrom, the stack pointer above a hole", ret, &name, len, NULL);
			break;
		}
		}
		/* what a refused call left queued */
		while (recv(r, buf, sizeof buf, MSG_DONTWAIT) > 0)
			;
	}
	unix_pair_close(&up);
	if (fails)
		return 1;
	printf("ok probe_recv_scratch\n");
	return 0;
}
