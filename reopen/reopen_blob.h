/* reopen/reopen_blob.h - moat-reopen's program (reopen_main.c), embedded:
 * link moat::reopen_blob. The sentry execs these bytes from a memfd
 * (sentry/reopen.c). */
#ifndef MOAT_REOPEN_BLOB_H
#define MOAT_REOPEN_BLOB_H

extern const unsigned char moat_reopen_start[];
extern const unsigned char moat_reopen_end[];

#endif
