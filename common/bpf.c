/* common/bpf.c - see bpf.h */
#include "common/bpf.h"
#include "platform/arch.h"

#include <errno.h>
#include <stdlib.h>
#include <linux/seccomp.h>
#include <stddef.h>
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

int bpf_allow_build(const struct bpf_allow *rows, size_t n, unsigned dflt, struct sock_filter *out, size_t cap)
{
	size_t nargs = 0;
	for (size_t i = 0; i < n; i++)
		nargs += rows[i].arg >= 0;
	/* the arch check and the number's load; one compare a row; the
	 * default's return; three instructions an argument row (the load,
	 * its compare, the miss's return); the allow's return, last (classic
	 * BPF jumps forward only) */
	size_t len = 4 + n + 1 + 3 * nargs + 1, allow = len - 1;
	if (len > cap || len > BPF_MAXINSNS)
		return -E2BIG;
	size_t k = 0;
	out[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	out[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MOAT_AUDIT_ARCH, 1, 0);
	out[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	out[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	size_t body = 4 + n + 1; /* the first argument row's load */
	for (size_t i = 0; i < n; i++) {
		size_t to = rows[i].arg >= 0 ? body : allow;
		if (rows[i].arg >= 0)
			body += 3;
		if (to - k - 1 > 255)
			return -E2BIG;
		out[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)rows[i].nr,
						      (unsigned char)(to - k - 1), 0);
		k++;
	}
	out[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, dflt);
	for (size_t i = 0; i < n; i++) {
		if (rows[i].arg < 0)
			continue;
		if (rows[i].arg > 5 || allow - k - 2 > 255)
			return -E2BIG;
		/* the argument's low half (little-endian: its first word) */
		out[k] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						      offsetof(struct seccomp_data, args[0]) + 8 * (unsigned)rows[i].arg);
		k++;
		out[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, rows[i].val,
						      (unsigned char)(allow - k - 1), 0);
		k++;
		out[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, rows[i].miss ? rows[i].miss : dflt);
	}
	out[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return (int)k;
}
