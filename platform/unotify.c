/* platform/unotify.c - the seccomp user-notification channel. */
#include "platform/platform.h"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

int unotify_recv(int nfd, struct notif *n)
{
	struct seccomp_notif req;
	memset(&req, 0, sizeof req);
	if (ioctl(nfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return -errno;
	n->id = req.id;
	n->pid = req.pid;
	n->nr = req.data.nr;
	n->arch = req.data.arch;
	n->ip = req.data.instruction_pointer;
	for (int i = 0; i < 6; i++)
		n->args[i] = req.data.args[i];
	return 0;
}

int unotify_id_valid(int nfd, uint64_t id)
{
	return ioctl(nfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0 ? -errno : 0;
}

int unotify_reply(int nfd, uint64_t id, long val)
{
	struct seccomp_notif_resp r = { .id = id };
	if (val < 0)
		r.error = (int)val;
	else
		r.val = val;
	return ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 ? -errno : 0;
}

int unotify_continue(int nfd, uint64_t id)
{
	struct seccomp_notif_resp r = { .id = id, .flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };
	return ioctl(nfd, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 ? -errno : 0;
}

int unotify_addfd(int nfd, uint64_t id, int srcfd, unsigned fdflags, int newfd, int send)
{
	struct seccomp_notif_addfd a = {
		.id = id,
		.srcfd = srcfd,
		.newfd = newfd >= 0 ? (unsigned)newfd : 0,
		.newfd_flags = fdflags,
		.flags = (newfd >= 0 ? SECCOMP_ADDFD_FLAG_SETFD : 0) |
			 (send ? SECCOMP_ADDFD_FLAG_SEND : 0),
	};
	int r = ioctl(nfd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
	return r < 0 ? -errno : r;
}

const struct platform_ops platform_unotify = {
	.name = "unotify",
	.recv = unotify_recv,
	.id_valid = unotify_id_valid,
	.reply = unotify_reply,
	.addfd = unotify_addfd,
	.cont = unotify_continue,
};
