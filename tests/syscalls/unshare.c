/* unshare of what is the process's own: CLONE_FILES, CLONE_FS (a thread's
 * cwd and umask become its own), CLONE_SYSVSEM, 0; unknown flags EINVAL. */
#include <pthread.h>
#include <sched.h>

#include "t.h"

static char thread_cwd[PATH_MAX];
static mode_t thread_umask;
static int thread_rc = -1;

static void *fs_thread(void *arg)
{
	(void)arg;
	thread_rc = unshare(CLONE_FS);
	if (thread_rc == 0 && chdir("d") == 0) {
		if (!getcwd(thread_cwd, sizeof thread_cwd))
			thread_cwd[0] = 0;
		umask(077);
		thread_umask = umask(077);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	t_setup(argc, argv, "unshare");
	char before[PATH_MAX], after[PATH_MAX];
	pthread_t th;

	mkdir("d", 0755);
	umask(022);
	EXPECT_OK(unshare(0), "zero");
	EXPECT_OK(unshare(CLONE_FILES), "files");
	EXPECT_OK(unshare(CLONE_SYSVSEM), "sysvsem");
	EXPECT_ERR(unshare(-1), EINVAL, "all_bits_einval");
	EXPECT_ERR(unshare(0x2), EINVAL, "unknown_bit_einval");
	CHECK(getcwd(before, sizeof before) != NULL, "getcwd", "%s", strerror(errno));
	pthread_create(&th, NULL, fs_thread, NULL);
	pthread_join(th, NULL);
	CHECK(thread_rc == 0, "fs_in_thread", "%d", thread_rc);
	size_t bl = strlen(before);
	CHECK(!strncmp(thread_cwd, before, bl) && !strcmp(thread_cwd + bl, "/d"), "thread_chdir_own",
	      "[%s]", thread_cwd);
	CHECK(getcwd(after, sizeof after) && !strcmp(after, before), "main_cwd_kept", "[%s]", after);
	mode_t m = umask(022);
	CHECK(m == 022 && thread_umask == 077, "umask_own", "main %o thread %o", m, thread_umask);
	int fd = open("d/../f", O_CREAT | O_WRONLY, 0666);
	CHECK(fd >= 0, "main_relative_open", "%s", strerror(errno));
	if (fd >= 0)
		close(fd);
	return t_done();
}
