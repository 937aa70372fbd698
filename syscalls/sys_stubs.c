/* syscalls/sys_stubs.c - weak -ENOSYS handlers for every EMULATE row.
 *
 * They let the table link before the real handlers exist. A strong
 * definition of the same name in a syscalls/sys_<topic>.c file replaces the
 * stub (the library is linked whole-archive, see CMakeLists.txt, so the
 * strong definition is always seen). The stubs live in their own section so
 * that sc_handler_is_stub() can tell, at run time, which handlers are still
 * missing: `moat syscalls` lists those rows as NONE.
 */
#include <errno.h>
#include <stdint.h>

#include "syscalls/handlers.h"

#define SC_STUB_SECTION "moat_sc_stubs"

#define SYSCALL(nr, name, args, cls, h, st, note) \
	SC_IF_HANDLER(h, __attribute__((weak, section(SC_STUB_SECTION))) \
		long h(struct sc_call *c) { (void)c; return -ENOSYS; })
#include "syscalls/syscall_table.def"

/* the linker defines these around the section (weak: 0 if it is empty) */
extern const char __start_moat_sc_stubs[] __attribute__((weak));
extern const char __stop_moat_sc_stubs[] __attribute__((weak));

bool sc_handler_is_stub(sc_handler_fn fn)
{
	uintptr_t p = (uintptr_t)fn;

	if (!fn || !__start_moat_sc_stubs)
		return false;
	return p >= (uintptr_t)__start_moat_sc_stubs &&
	       p < (uintptr_t)__stop_moat_sc_stubs;
}
