/* syscalls/sys_socket.h - names of AF_UNIX path sockets (see sentry/unixsock.c).
 *
 * A path the guest binds is an inode in the VFS and an abstract name
 * "\0moat/<sandbox>/<dev>:<ino>:....<gen>" in the guest's network namespace
 * (every field fixed-width, the generation in the last 16 bytes of a full
 * sun_path: UNIX_NAME_GEN_AT). This
 * table remembers, per inode bound in this sandbox, its generation and path,
 * so connect can find the name and getsockname/getpeername can show the path.
 * Thread-safe (the ptrace thread writes, workers read). */
#ifndef MOAT_SYSCALLS_SYS_SOCKET_H
#define MOAT_SYSCALLS_SYS_SOCKET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

struct sandbox;

/* Record a bind of inode (dev, ino) at guest path by a socket of type
 * (SOCK_STREAM...) of guest process vpid; returns the new generation: 64
 * random bits, never 0 (the name's secret part: a guest can use an abstract
 * name natively, so only a task that passed connect's permission check may
 * learn it); 0 when the table is full of names sockets still hold. */
uint64_t unix_name_bind(struct sandbox *sb, pid_t vpid, dev_t dev, ino_t ino, const char *path, int type);
/* Generation of the last bind of (dev, ino), or 0 if none in this sandbox;
 * *type (if not NULL) the bound socket's type. */
uint64_t unix_name_gen(dev_t dev, ino_t ino, int *type);
/* Where the generation starts in sun_path of one of our names (each is a
 * whole sun_path, 108 bytes: the generation is its last 16), and the room a
 * receive's copy gives the kernel for a name (UNIX_NAME_SHOWN: the sockaddr
 * up to it). The kernel writes no more of a name than that room and reports
 * its whole length, so a receive's copy in guest memory holds the sandbox,
 * dev and inode of one of our names, never its generation (unixgen39: a
 * thread spinning on a receive's copy read it, red team 84); the bytes
 * before it name the inode, which is all the exit needs to map it. */
#define UNIX_NAME_GEN_AT 92
#define UNIX_NAME_SHOWN (offsetof(struct sockaddr_un, sun_path) + UNIX_NAME_GEN_AT)
/* Fill the abstract address of (dev, ino, gen); returns its length. */
socklen_t unix_name_addr(struct sandbox *sb, dev_t dev, ino_t ino, uint64_t gen,
			 struct sockaddr_un *out);

/* Whether any path was bound in this sandbox yet (until then no source
 * address needs rewriting: recvmsg stops return at once). */
int unix_names_any(void);

/* Whether an AF_UNIX socket of the host's may be the guest's: one of the
 * caller's stdio fds the program inherits is one (unix_inherited_note, at
 * start; any other host socket can only come in through it, SCM_RIGHTS).
 * Until then, or a path bound, recv stops return at once as before. */
void unix_inherited_note(const int fds[3]);
int unix_inherited_any(void);
/* The caller handed over a socket of another family (inet, netlink...)
 * as stdio: a socket of the host's network stack in the guest's hands,
 * so the setsockopt allow list applies without moat-netd too (hyg35). */
int host_sock_inherited_any(void);
/* 1 when a socket of the host's the caller handed over can address a send
 * (not a TCP stream socket): it cannot be shut for writing, so no addressed
 * send of the sandbox runs natively (a thread's dup2 of it onto the number
 * after the stop's check would send from it): each is made on the file the
 * worker pins (sentry/netconn.c netconn_send_stop, red team 97) */
int host_send_pinned(void);
/* fd (a pinned file) is a socket of the host's side: its network
 * namespace is an inherited socket's or the sentry's own, or unreadable. */
int host_sock_ns(int fd);
/* Whether socket fd is of the network namespace of one of those inherited
 * AF_UNIX sockets (SO_NETNS_COOKIE; the guest's own namespace is always a
 * new one): 1 when it is, or when either cookie cannot be read (fail
 * closed), else 0. An abstract name bound on such a socket is a name of
 * the host's namespace, where the caller's own programs would find it
 * (red team 66): unixsock.c refuses it. */
int unix_inherited_host_ns(int fd);

/* A native AF_UNIX name (*len bytes at sa) that is a pathname: never the
 * guest's (its binds are abstract names; its native root is empty and
 * read-only), so the host's — a socket the caller handed over bound at or
 * connected to a host path (red team 63). Made unnamed (the family alone,
 * *len 2, as an unbound socket's); 1 when it was one. */
int unix_name_hide_host(struct sockaddr_un *sa, socklen_t *len);

/* The path bound at one of this sandbox's abstract names: 0 and out filled,
 * or -1 (not ours, or unknown). The name's generation is not read (a
 * receive's copy holds none, UNIX_NAME_SHOWN): the inode names the path, and
 * no socket but ours holds a name of the sandbox's prefix
 * (unix_name_is_ours: a guest bind of one is refused). */
int unix_name_path(struct sandbox *sb, const struct sockaddr_un *sa, socklen_t len, char *out,
		   size_t outlen);
/* 1 when sa (len bytes) is an abstract name of this sandbox's prefix
 * ("\0moat/<sandbox>/"): a guest's own bind of one is refused, EADDRINUSE
 * (it would pass for one of our names, whose generation the mapping does
 * not see: a forged source path). */
int unix_name_is_ours(struct sandbox *sb, const struct sockaddr_un *sa, socklen_t len);

/* Connected UDP through moat-netd's relay (sentry/netd.c udp_relay): the
 * guest's socket, bound at local, is connected to the relay's end peer on
 * the guest's loopback; getpeername shows dest, the address the guest
 * connected to, and getsockname name, the address of the relay's host-side
 * socket (the source the destination sees; namelen 0: the guest socket's
 * own). Kept in slot, the relay's own slot for the pair (netd's reply), so
 * the sentry knows exactly the pairs the relay carries: a pair stays as long
 * as netd relays it (red team 21: a ring of the last 256 connects forgot a
 * socket still in use, which then showed the relay's end as its peer and
 * as the source of what it received). */
#define UDP_RELAY_SLOTS 128
void udp_relay_peer(int slot, const struct sockaddr_storage *local, const struct sockaddr_storage *peer,
		    const void *dest, socklen_t destlen, const void *name, socklen_t namelen);
/* hfd's destination if it is connected through the relay: 1 and *ss, *len
 * set, else 0. */
int udp_relay_dest_of(int hfd, struct sockaddr_storage *ss, socklen_t *len);
/* Whether any connect went through the relay yet. */
int udp_relay_any(void);

#endif
