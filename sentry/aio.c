/* sentry/aio.c - the sandbox's share of Linux AIO's host-wide count.
 *
 * io_setup(nr) adds nr to fs.aio-nr, one count for the whole host that no
 * namespace or cgroup scopes, and fails with EAGAIN for everyone once it
 * would pass fs.aio-max-nr (65536 by default). Native, a guest took it all
 * with one io_setup(65536) and every host process's io_setup (a database,
 * qemu, fio), root's included, got EAGAIN until it exited (red team 23;
 * `isolation_host` host_keeps_aio_events). io_setup and io_destroy are
 * ptrace stops now (EXEC rows): a sandbox holds at most aio_share() events
 * (an eighth of fs.aio-max-nr); an io_setup past that is EAGAIN, as the
 * kernel answers at its own limit.
 *
 * What a sandbox holds is counted per address space (the kernel frees an
 * mm's contexts with it: exit_aio), one account shared by the tasks of one
 * mm, a multiset of the counts of its contexts. The stop of an io_setup
 * adds its count (taken as held from then on: a task killed before its
 * syscall exit may have made the context), its syscall exit takes it out
 * again when the call failed; the exit of a successful io_destroy takes out
 * the smallest count (which context it was is not known without reading
 * guest memory the guest may change, and the smallest keeps the account at
 * least what the live contexts hold: exact when they are of one size); an
 * account whose last task execs or exits gives all back. Only this thread
 * (the tracer) touches them.
 */
#include "sentry/sentry.h"
#include "kernel/task.h"
#include "common/util.h"
#include "common/log.h"
#include "platform/arch.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

/* 1/8: a few sandboxes together still leave the host most of it */
#define AIO_SHARE_DIV 8

struct aio_acct {
	int refs;          /* tasks of this mm */
	unsigned n, cap;
	unsigned *held;    /* the counts of its contexts (and of io_setups in flight) */
	unsigned long sum;
};

unsigned long aio_share(void)
{
	long max = read_long_file("/proc/sys/fs/aio-max-nr");
	if (max <= 0)
		max = 65536;
	return (unsigned long)max / AIO_SHARE_DIV;
}

static struct aio_acct *acct_of(struct task *t)
{
	if (!t->aio) {
		t->aio = xcalloc(1, sizeof *t->aio);
		t->aio->refs = 1;
	}
	return t->aio;
}

static void acct_add(struct sandbox *sb, struct aio_acct *a, unsigned v)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 4;
		unsigned *p = realloc(a->held, a->cap * sizeof *p);
		if (!p)
			die("out of memory");
		a->held = p;
	}
	a->held[a->n++] = v;
	a->sum += v;
	sb->aio_held += v;
}

/* Take out an entry equal to v, or the smallest when none is (v == 0). */
static void acct_take(struct sandbox *sb, struct aio_acct *a, unsigned v)
{
	if (!a->n)
		return;
	unsigned i, k = 0;
	for (i = 0; i < a->n; i++) {
		if (v && a->held[i] == v) {
			k = i;
			break;
		}
		if (a->held[i] < a->held[k])
			k = i;
	}
	a->sum -= a->held[k];
	sb->aio_held -= a->held[k];
	a->held[k] = a->held[--a->n];
}

void aio_stop(struct sandbox *sb, struct task *t, const struct user_regs_struct *stop_regs)
{
	long nr = REG_NR(*stop_regs);
	if (nr == __NR_io_destroy)
		t->aio_exit = 1;
	if (nr != __NR_io_setup)
		return;
	unsigned v = (unsigned)REG_ARG0(*stop_regs);
	/* EINVAL natively, nothing made: none asked, or too many for the ring
	 * (ioctx_alloc doubles max(v, 4 per CPU) in 32 bits and refuses past
	 * 0x10000000 / sizeof(struct io_event): LTP io_setup02's -1), checked
	 * by the kernel before its aio-max-nr EAGAIN, so before ours too */
	unsigned ring = (v < 1024 ? 1024 : v) * 2u;
	if (!v || ring > 0x10000000u / 32)
		return;
	/* past the sandbox's share, or into the host's reserve (hostres.c) */
	if (v > sb->aio_share || sb->aio_held > sb->aio_share - v || hostres_aio_low(sb, v)) {
		arch_regs regs = *stop_regs;
		REG_SYSNO(regs) = -1; /* skip the call */
		REG_RET(regs) = (uint64_t)-EAGAIN;
		ptrace(PTRACE_SETREGS, t->tid, 0, &regs);
		return;
	}
	acct_add(sb, acct_of(t), v);
	t->aio_exit = 2 + (long)v; /* > 1: an io_setup of v events */
}

void aio_exit(struct sandbox *sb, struct task *t)
{
	arch_regs regs;
	long kind = t->aio_exit;
	t->aio_exit = 0;
	if (!t->aio || ptrace(PTRACE_GETREGS, t->tid, 0, &regs) < 0)
		return; /* unknown: kept as held */
	long ret = (long)REG_RET(regs);
	if (kind > 1 && ret != 0)
		acct_take(sb, t->aio, (unsigned)(kind - 2)); /* none made */
	else if (kind == 1 && ret == 0)
		acct_take(sb, t->aio, 0); /* a context went */
}

void aio_fork(struct task *parent, struct task *child, int share_vm)
{
	if (!share_vm)
		return; /* a new mm: no contexts (fork copies none) */
	child->aio = acct_of(parent);
	child->aio->refs++;
}

void aio_leave(struct sandbox *sb, struct task *t)
{
	struct aio_acct *a = t->aio;
	t->aio = NULL;
	if (!a || --a->refs > 0)
		return;
	sb->aio_held -= a->sum;
	free(a->held);
	free(a);
}
