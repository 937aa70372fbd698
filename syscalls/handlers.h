/* syscalls/handlers.h - prototypes of the EMULATE handlers.
 *
 * One prototype per row of syscall_table.def whose handler column names a
 * function (sys_<name>), generated from the .def so the two cannot disagree:
 *
 *   long sys_openat(struct sc_call *c);
 *
 * Handler contract (see sc.h): return a value >= 0 or -errno; read only the
 * copies in c. Handlers live in syscalls/sys_<topic>.c; until one is written,
 * the weak stub in sys_stubs.c answers -ENOSYS.
 */
#ifndef MOAT_SYSCALLS_HANDLERS_H
#define MOAT_SYSCALLS_HANDLERS_H

#include <stdbool.h>

#include "syscalls/sc.h"
#include "syscalls/table_def.h"

#define SYSCALL(nr, name, args, cls, h, st, note) \
	SC_IF_HANDLER(h, long h(struct sc_call *c);)
#include "syscalls/syscall_table.def"

/* True if fn is one of the weak -ENOSYS stubs of sys_stubs.c, i.e. no real
 * handler has been linked in for it yet. */
bool sc_handler_is_stub(sc_handler_fn fn);

/* The row's status, except that an EMULATE row whose handler is still a stub
 * is ST_NONE: what `moat syscalls` prints. */
int sc_effective_status(const struct sysent *e);

#endif
