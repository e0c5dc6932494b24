/* hash.c: 128-bit streaming fingerprint hash and CRC-32. */
#include <string.h>

#include "util/hash.h"

#define H128_C1 0x87c37b91114253d5ULL
#define H128_C2 0x4cf5ad432745937fULL

static uint64_t rotl64(uint64_t x, unsigned r)
{
    return (x << r) | (x >> (64u - r));
}

static uint64_t load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The final avalanche: every input bit affects every output bit. */
static uint64_t fmix64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static uint64_t mix_k1(uint64_t k1)
{
    k1 *= H128_C1;
    k1 = rotl64(k1, 31);
    return k1 * H128_C2;
}

static uint64_t mix_k2(uint64_t k2)
{
    k2 *= H128_C2;
    k2 = rotl64(k2, 33);
    return k2 * H128_C1;
}

static void h128_block(nnop__h128 *h, const unsigned char *b)
{
    uint64_t h1 = h->h1, h2 = h->h2;
    h1 ^= mix_k1(load_le64(b));
    h1 = rotl64(h1, 27) + h2;
    h1 = h1 * 5 + 0x52dce729;
    h2 ^= mix_k2(load_le64(b + 8));
    h2 = rotl64(h2, 31) + h1;
    h2 = h2 * 5 + 0x38495ab5;
    h->h1 = h1;
    h->h2 = h2;
}

void nnop__h128_init(nnop__h128 *h)
{
    memset(h, 0, sizeof *h);
}

void nnop__h128_update(nnop__h128 *h, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    h->total += len;
    if (h->n_block) {
        size_t take = 16 - h->n_block;
        if (take > len)
            take = len;
        memcpy(h->block + h->n_block, p, take);
        h->n_block += (unsigned)take;
        p += take;
        len -= take;
        if (h->n_block < 16)
            return;
        h128_block(h, h->block);
        h->n_block = 0;
    }
    for (; len >= 16; p += 16, len -= 16)
        h128_block(h, p);
    if (len) {
        memcpy(h->block, p, len);
        h->n_block = (unsigned)len;
    }
}

void nnop__h128_final(const nnop__h128 *h, uint64_t *lo, uint64_t *hi)
{
    unsigned char tail[16] = {0};
    uint64_t h1 = h->h1, h2 = h->h2;
    memcpy(tail, h->block, h->n_block);
    if (h->n_block > 8)
        h2 ^= mix_k2(load_le64(tail + 8));
    if (h->n_block > 0)
        h1 ^= mix_k1(load_le64(tail));
    h1 ^= h->total;
    h2 ^= h->total;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    h2 += h1;
    *lo = h1;
    *hi = h2;
}

/* Half-byte table of the reflected polynomial 0xEDB88320: small, const, no lazy init. */
static const uint32_t crc_nibble[16] = {
        0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu, 0x76dc4190u, 0x6b6b51f4u,
        0x4db26158u, 0x5005713cu, 0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
        0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu,
};

uint32_t nnop__crc32(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        crc = (crc >> 4) ^ crc_nibble[crc & 15u];
        crc = (crc >> 4) ^ crc_nibble[crc & 15u];
    }
    return ~crc;
}
