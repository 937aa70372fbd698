/* common/bpf.c - see bpf.h */
#include "common/bpf.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int bpf_export(scmp_filter_ctx ctx, struct sock_fprog *out)
{
	struct stat st;
	void *buf;
	int fd, ret;

	out->len = 0;
	out->filter = NULL;
	fd = memfd_create("moat-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = seccomp_export_bpf(ctx, fd);
	if (ret < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	ret = -E2BIG;
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		goto out;
	ret = -ENOMEM;
	buf = malloc((size_t)st.st_size);
	if (!buf)
		goto out;
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		ret = -EIO;
		goto out;
	}
	out->filter = buf;
	out->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	ret = 0;
out:
	close(fd);
	return ret;
}

void bpf_write_c_array(FILE *f, const struct sock_fprog *p)
{
	for (unsigned i = 0; i < p->len; i++)
		fprintf(f, "\t{ %#x, %u, %u, %#x },\n", p->filter[i].code, p->filter[i].jt,
			p->filter[i].jf, p->filter[i].k);
}
