/* tests/loader/blob_dump.c - write the embedded loader (moat::loader_blob)
 * to stdout, so run.sh can check it is the loader it tests. */
#include <stdio.h>

#include "loader/loader_blob.h"

int main(void)
{
	size_t n = moat_loader_size();

	return fwrite(moat_loader_start, 1, n, stdout) == n ? 0 : 1;
}
