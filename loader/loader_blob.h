/* loader/loader_blob.h - the moat-loader executable embedded in moat.
 *
 * Link moat::loader_blob. The bytes moat_loader_start..moat_loader_end are
 * the static-pie loader (see loader_abi.h); the sentry writes them to
 * MOAT_LOADER_PATH in the guest's native mount namespace (mode 0555).
 */
#ifndef MOAT_LOADER_BLOB_H
#define MOAT_LOADER_BLOB_H

#include <stddef.h>

extern const unsigned char moat_loader_start[];
extern const unsigned char moat_loader_end[];

static inline size_t moat_loader_size(void)
{
	return (size_t)(moat_loader_end - moat_loader_start);
}

#endif
