/* umask. */
#include "t.h"

int main(int argc, char **argv)
{
	t_setup(argc, argv, "umask");
	struct stat st;
	CHECK(umask(077) == 022, "returns_old", "unexpected old mask");
	CHECK(umask(077) == 077, "returns_new_old", "unexpected");
	int fd = open("f", O_CREAT | O_WRONLY, 0666);
	close(fd);
	CHECK(stat("f", &st) == 0 && (st.st_mode & 0777) == 0600, "applied_to_open", "mode %o", st.st_mode);
	mkdir("d", 0777);
	CHECK(stat("d", &st) == 0 && (st.st_mode & 0777) == 0700, "applied_to_mkdir", "mode %o", st.st_mode);
	mkfifo("p", 0666);
	CHECK(stat("p", &st) == 0 && (st.st_mode & 0777) == 0600 && S_ISFIFO(st.st_mode), "applied_to_mkfifo",
	      "mode %o", st.st_mode);
	/* Not applied to chmod or symlinks. */
	chmod("f", 0666);
	CHECK(stat("f", &st) == 0 && (st.st_mode & 0777) == 0666, "not_applied_to_chmod", "mode %o", st.st_mode);
	char buf[4096];
	bool found = false;
	if (t_read_file("/proc/self/status", buf, sizeof(buf)) > 0)
		found = strstr(buf, "Umask:\t0077\n") != NULL;
	CHECK(found, "proc_status_umask", "no Umask:\\t0077 line");
	umask(027);
	pid_t pid = fork();
	if (pid == 0)
		_exit(umask(0) == 027 ? 0 : 1);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "inherited_by_child", "status %x", status);
	umask(0);
	fd = open("g", O_CREAT | O_WRONLY, 0666);
	close(fd);
	CHECK(stat("g", &st) == 0 && (st.st_mode & 0777) == 0666, "zero_mask", "mode %o", st.st_mode);
	umask(022);
	return t_done();
}
