/* probe_doomed.c - guest side of isolation_sentry's refused_thread_never_runs
 * (red team 52). A thread cloned past the task bound (MOAT_MAX_TASKS,
 * --pids) is registered and sent to exit(0) on its clone's own syscall
 * instruction at its first stop (sentry/tracer.c kill_doomed), its parent
 * held until it is gone. That exit passed the guest's own seccomp filters
 * and any signal handler the thread had pending first, so the thread could
 * go on running guest code and clone more of its kind, one per parked
 * parent, past the bound without end. Run with a small bound:
 *
 *   errno   a filter answers exit(0) with EPERM
 *   trace   a filter answers it SECCOMP_RET_TRACE (ENOSYS without a tracer of its own)
 *   signal  a sibling tgkills each new thread (its tid from CLONE_PARENT_SETTID)
 *           right away; the handler, run on a thread on its way to the
 *           injected exit, never returns
 *   text    the clone's syscall instruction sits in a writable page that a
 *           sibling flips between "syscall" and "jmp .+2" (a 2-byte no-op):
 *           the tracer read "syscall" there, the thread ran the jump (a
 *           race: TRYERS threads clone at once past the bound, each a try;
 *           on main 1 run in 5 of one try escaped)
 *
 *   stopstorm  no attack: a child makes threads past the bound while its
 *           parent sends it SIGSTOP/SIGCONT 3,000 times (SIGSTOP is the one
 *           signal a refused thread's mask cannot block): "child status 0"
 *           wanted, the process not killed for it
 *   execrace  no attack (red team 53): 60 times, a child's threads make
 *           threads past the bound (40 at most, so that a native run stays
 *           small) while one of its threads execs this program
 *           ("execleaf": exits 0). A refused thread at its first stop that
 *           the exec's de_thread killed made every ptrace request ESRCH,
 *           which the tracer took for a thread it could not send to exit:
 *           it killed the process, the new image (4-13% of the rounds).
 *           "execrace exited 60 of 60" wanted
 *
 * Each refused thread that runs guest code counts as escaped and clones the
 * next one (at most CHAIN). Prints "escaped E normal N of T" (T clones
 * tried at first): E 0 and N < T wanted (the thread exits, or its process
 * is killed: then nothing is printed). Natively with no bound nothing is
 * refused: "escaped 0 normal T of T". x86_64 only. */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define CHAIN 100
#define NTHREADS 200
#define TRYERS 14
#define FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | \
	       CLONE_PARENT_SETTID)

static atomic_int normal, escaped, chain = CHAIN;
static pid_t tids[NTHREADS + CHAIN + 8];
static atomic_int ntids;

/* clone a thread on TOP running FN(the clone's return value in the child:
 * 0, or -errno when the tracer's injected exit was answered instead);
 * the child is told apart by its stack */
static long raw_thread(void *top, void (*fn)(long))
{
	long r;
	int slot = atomic_fetch_add(&ntids, 1);
	register long r10 __asm__("r10") = 0;
	register long r8 __asm__("r8") = 0;
	__asm__ volatile("syscall\n\t"
			 "cmp %%rsi, %%rsp\n\t"
			 "jne 1f\n\t"
			 "mov %%rax, %%rdi\n\t"
			 "call *%%rbx\n\t"
			 "ud2\n"
			 "1:\n"
			 : "=a"(r)
			 : "0"((long)SYS_clone), "D"((long)FLAGS), "S"(top), "d"(&tids[slot]), "r"(r10),
			   "r"(r8), "b"(fn)
			 : "rcx", "r11", "memory");
	return r;
}

/* text mode: the clone in an RWX page, its first two bytes flipped */
static unsigned char *stub;
static const unsigned char stub_code[] = {
	0x0f, 0x05,             /* syscall (or eb 00: jmp .+2) */
	0x48, 0x39, 0xf4,       /* cmp %rsi, %rsp */
	0x75, 0x07,             /* jne 1f */
	0x48, 0x89, 0xc7,       /* mov %rax, %rdi */
	0xff, 0xd3,             /* call *%rbx */
	0x0f, 0x0b,             /* ud2 */
	0xc3,                   /* 1: ret */
};

static long stub_thread(void *top, void (*fn)(long))
{
	long r;
	int slot = atomic_fetch_add(&ntids, 1);
	do {
		register long r10 __asm__("r10") = 0;
		register long r8 __asm__("r8") = 0;
		__asm__ volatile("call *%[stub]"
				 : "=a"(r)
				 : "0"((long)SYS_clone), "D"((long)FLAGS), "S"(top), "d"(&tids[slot]),
				   "r"(r10), "r"(r8), "b"(fn), [stub] "r"(stub)
				 : "rcx", "r11", "memory");
	} while (r == SYS_clone); /* the jump ran: no clone made */
	return r;
}

static void *flipper(void *a)
{
	(void)a;
	volatile unsigned short *w = (volatile unsigned short *)stub;
	for (;;) {
		*w = 0x00eb;
		*w = 0x050f;
	}
	return NULL;
}

static void *newstack(void)
{
	char *s = mmap(0, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return s == MAP_FAILED ? NULL : s + 65536 - 64;
}

static void child(long ret);

static void escape(void)
{
	atomic_fetch_add(&escaped, 1);
	void *s;
	if (atomic_fetch_sub(&chain, 1) > 0 && (s = newstack()))
		stub ? stub_thread(s, child) : raw_thread(s, child);
	for (;;)
		syscall(SYS_pause);
}

static void child(long ret)
{
	if (ret == 0) {
		atomic_fetch_add(&normal, 1);
		for (;;)
			syscall(SYS_pause);
	}
	escape();
}

/* the injected exit(0) about to run: this thread was refused */
static void on_usr1(int sig, siginfo_t *si, void *uc_)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = uc_;
	if (uc->uc_mcontext.gregs[REG_RAX] == SYS_exit && uc->uc_mcontext.gregs[REG_RDI] == 0)
		escape();
}

static void *signaller(void *a)
{
	(void)a;
	int seen = 0;
	for (;;) {
		int n = atomic_load(&ntids);
		for (; seen < n; seen++) {
			pid_t t;
			for (int i = 0; i < 1000000 && !(t = __atomic_load_n(&tids[seen], __ATOMIC_ACQUIRE)); i++)
				;
			if (t)
				syscall(SYS_tgkill, getpid(), t, SIGUSR1);
		}
		sched_yield();
	}
	return NULL;
}

static void *creator(void *a)
{
	(void)a;
	for (int i = 0; i < NTHREADS; i++) {
		void *s = newstack();
		if (!s || (stub ? stub_thread(s, child) : raw_thread(s, child)) < 0)
			break;
	}
	return NULL;
}

static atomic_int go;

static void *tryer(void *a)
{
	(void)a;
	void *s = newstack();
	while (!atomic_load(&go))
		sched_yield();
	if (s)
		stub_thread(s, child);
	for (;;)
		syscall(SYS_pause);
	return NULL;
}

static int er_made;
static void *er_sleeper(void *a)
{
	(void)a;
	for (;;)
		pause();
	return NULL;
}
static char er_exe[4096];
static void *er_maker(void *a)
{
	(void)a;
	for (;;) {
		pthread_t t;
		pthread_attr_t at;
		pthread_attr_init(&at);
		pthread_attr_setstacksize(&at, 65536);
		if (__atomic_load_n(&er_made, __ATOMIC_RELAXED) >= 40 ||
		    pthread_create(&t, &at, er_sleeper, NULL) != 0)
			usleep(100);
		else
			__atomic_add_fetch(&er_made, 1, __ATOMIC_RELAXED);
		pthread_attr_destroy(&at);
	}
	return NULL;
}
static void *er_execer(void *a)
{
	usleep(20000 + (unsigned)(uintptr_t)a % 20000);
	char *av[] = { (char *)"probe_doomed", (char *)"execleaf", NULL };
	execv(er_exe, av);
	_exit(5);
}

static int execrace(void)
{
	ssize_t l = readlink("/proc/self/exe", er_exe, sizeof er_exe - 1);
	if (l <= 0)
		return 1;
	er_exe[l] = 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	int exited = 0, rounds = 60;
	for (int r = 0; r < rounds; r++) {
		pid_t c = fork();
		if (c == 0) {
			pthread_t t; /* the execer first: past the bound no thread is made */
			if (pthread_create(&t, NULL, er_execer, (void *)(uintptr_t)(r * 7919)) != 0)
				_exit(6);
			for (int i = 0; i < 3; i++)
				pthread_create(&t, NULL, er_maker, NULL);
			for (;;)
				pause();
		}
		int st = -1;
		waitpid(c, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			exited++;
		else
			printf("round %d: status %x\n", r, (unsigned)st);
	}
	printf("execrace exited %d of %d\n", exited, rounds);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "errno";
	if (!strcmp(mode, "execleaf"))
		return 0;
	if (!strcmp(mode, "execrace"))
		return execrace();
	if (!strcmp(mode, "stopstorm")) {
		pid_t c = fork();
		if (c == 0) {
			pthread_t t;
			for (int i = 0; i < NTHREADS; i++)
				pthread_create(&t, NULL, tryer, NULL); /* each waits on go */
			_exit(0);
		}
		for (int i = 0; i < 3000; i++) {
			kill(c, SIGSTOP);
			kill(c, SIGCONT);
		}
		int st = -1;
		waitpid(c, &st, 0);
		printf("child status %x\n", (unsigned)st);
		return 0;
	}
	if (!strcmp(mode, "text")) {
		stub = mmap(0, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stub == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		memcpy(stub, stub_code, sizeof stub_code);
		pthread_t f;
		pthread_create(&f, NULL, flipper, NULL);
	} else if (!strcmp(mode, "signal")) {
		struct sigaction sa = { .sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO | SA_NODEFER };
		sigaction(SIGUSR1, &sa, NULL);
		pthread_t s;
		pthread_create(&s, NULL, signaller, NULL);
	} else {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 0, 3),
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
			BPF_STMT(BPF_RET | BPF_K,
				 !strcmp(mode, "trace") ? SECCOMP_RET_TRACE : (SECCOMP_RET_ERRNO | 1)),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog p = { sizeof f / sizeof f[0], f };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p)) {
			if (errno == EINVAL && !strcmp(mode, "trace")) {
				/* moat refuses a guest program that may return
				 * RET_TRACE (red team 88): nothing to escape with */
				printf("trace filter refused\n");
				return 0;
			}
			perror("seccomp");
			return 1;
		}
	}
	pthread_t t;
	int tries = NTHREADS;
	if (stub) {
		/* every try at once, past the bound (MOAT_MAX_TASKS=20) */
		tries = TRYERS;
		for (int i = 0; i < TRYERS; i++)
			if (pthread_create(&t, NULL, tryer, NULL))
				break;
		atomic_store(&go, 1);
	} else {
		pthread_create(&t, NULL, creator, NULL);
	}
	sleep(3);
	printf("escaped %d normal %d of %d\n", atomic_load(&escaped), atomic_load(&normal), tries);
	fflush(stdout);
	syscall(SYS_exit_group, 0);
}
