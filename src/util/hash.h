/* hash.h: a streaming 128-bit hash for fingerprints and a CRC-32 for file checksums. */
#ifndef NNOP_UTIL_HASH_H
#define NNOP_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Streaming 128-bit hash in the MurmurHash3 x64-128 family (own implementation, seed 0):
 * feeding bytes in any chunking gives the same result as one call with all of them. Not
 * cryptographic; collisions of unrelated inputs have probability ~2^-128. */
typedef struct nnop__h128 {
    uint64_t h1, h2;
    uint64_t total;          /* bytes fed so far */
    unsigned char block[16]; /* pending partial block */
    unsigned n_block;        /* bytes in block */
} nnop__h128;

void nnop__h128_init(nnop__h128 *h);
void nnop__h128_update(nnop__h128 *h, const void *data, size_t len);
/* The digest as two 64-bit halves; h is left unchanged (more bytes may follow). */
void nnop__h128_final(const nnop__h128 *h, uint64_t *lo, uint64_t *hi);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32): crc = nnop__crc32(0, data, len), and
 * chained calls crc = nnop__crc32(crc, more, n) equal one call over the concatenation. */
uint32_t nnop__crc32(uint32_t crc, const void *data, size_t len);

#endif /* NNOP_UTIL_HASH_H */
