/* common/sha.h - SHA-1 (git blob ids in --export patches) and SHA-256
 * (--export manifests), written here (FIPS 180-4) so the gofer needs no
 * crypto library. Not for secrets: plain, unhardened implementations. */
#ifndef MOAT_COMMON_SHA_H
#define MOAT_COMMON_SHA_H

#include <stddef.h>
#include <stdint.h>

struct sha_ctx {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t n;
	int is256;
};

void sha1_init(struct sha_ctx *c);
void sha256_init(struct sha_ctx *c);
void sha_update(struct sha_ctx *c, const void *data, size_t len);
/* out: 20 bytes (SHA-1) or 32 (SHA-256) */
void sha_final(struct sha_ctx *c, uint8_t *out);
/* lower-case hex of n bytes into out (2n+1 bytes) */
void sha_hex(const uint8_t *d, size_t n, char *out);

#endif
