/* half.c: fp16 and bf16 conversion to and from float32 (round to nearest even), and
 * nnop_convert between any two stored dtypes through float32 (the 8-bit ones: eight_bit.c). */
#include <math.h>
#include <string.h>

#include "internal.h"

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static float half_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0x1f)
        return bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float v = ldexpf((float)man, -24);
        return sign ? -v : v;
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

static uint16_t f32_to_half(float f)
{
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t absu = u & 0x7fffffffu;
    if (absu >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
    if (absu >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absu < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        float a = bits_f32(absu);
        float scaled = a * 16777216.0f; /* 2^24: units of the smallest subnormal */
        uint16_t m = (uint16_t)nearbyintf(scaled);
        return (uint16_t)(sign | m);
    }
    uint32_t exp = ((absu >> 23) - 112u) << 10;
    uint32_t man = (absu >> 13) & 0x3ffu;
    uint32_t rest = absu & 0x1fffu;
    uint32_t h = exp | man;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

static float bf16_to_f32(uint16_t b)
{
    return bits_f32((uint32_t)b << 16);
}

static uint16_t f32_to_bf16(float f)
{
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet nan */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

void nnop__to_f32(nnop_dtype t, const void *src, float *dst, int64_t n)
{
    const uint16_t *s16 = (const uint16_t *)src;
    int64_t i;
    if (t == NNOP_F32) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    }
    if (nnop__dtype_is_8bit(t)) {
        nnop__8bit_to_f32(t, src, dst, n);
        return;
    }
    for (i = 0; i < n; i++)
        dst[i] = (t == NNOP_F16) ? half_to_f32(s16[i]) : bf16_to_f32(s16[i]);
}

void nnop__from_f32(nnop_dtype t, const float *src, void *dst, int64_t n)
{
    uint16_t *d16 = (uint16_t *)dst;
    int64_t i;
    if (t == NNOP_F32) {
        memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    }
    if (nnop__dtype_is_8bit(t)) {
        nnop__8bit_from_f32(t, src, dst, n);
        return;
    }
    for (i = 0; i < n; i++)
        d16[i] = (t == NNOP_F16) ? f32_to_half(src[i]) : f32_to_bf16(src[i]);
}

void nnop__round_to(nnop_dtype t, float *x, int64_t n)
{
    int64_t i;
    if (t == NNOP_F16)
        for (i = 0; i < n; i++)
            x[i] = half_to_f32(f32_to_half(x[i]));
    else if (t == NNOP_BF16)
        for (i = 0; i < n; i++)
            x[i] = bf16_to_f32(f32_to_bf16(x[i]));
}

nnop_status nnop_convert(nnop_dtype src_type, const void *src, nnop_dtype dst_type, void *dst,
                         int64_t n)
{
    float chunk[256];
    int64_t done = 0;
    /* n above the tensor bound is refused: its byte count could wrap, and the overlap test
     * with it (found by the outside tester: n = 2^62 of f32 passed it as 0 bytes) */
    if (!src || !dst || n < 0 || n > NNOP_MAX_TENSOR_ELEMENTS || !nnop__dtype_stored(src_type) ||
        !nnop__dtype_stored(dst_type))
        return NNOP_ERR_INVALID_ARGUMENT;
    if (nnop__ranges_overlap(src, (uint64_t)n * nnop_dtype_size(src_type), dst,
                             (uint64_t)n * nnop_dtype_size(dst_type)))
        return NNOP_ERR_INVALID_ARGUMENT; /* a wider dst would overwrite src before it is read */
    while (done < n) {
        int64_t m = n - done < 256 ? n - done : 256;
        nnop__to_f32(src_type, (const char *)src + done * (int64_t)nnop_dtype_size(src_type), chunk,
                     m);
        nnop__from_f32(dst_type, chunk, (char *)dst + done * (int64_t)nnop_dtype_size(dst_type), m);
        done += m;
    }
    return NNOP_OK;
}
