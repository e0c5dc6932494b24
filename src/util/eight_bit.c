/* eight_bit.c: the 8-bit storage types to and from float32: FP8 E4M3 (OCP's E4M3FN: no
 * infinities, NaN S.1111.111, largest 448) and E5M2 (IEEE-like: infinities, largest 57344),
 * and INT8. Rounding to nearest even; saturating: a finite value or an infinity beyond the
 * largest finite one gives that one (cuda_fp8.h's __NV_SATFINITE, what the GPU's conversions
 * do); NaN stays NaN in FP8 and becomes 0 in INT8, which has none. */
#include <math.h>
#include <string.h>

#include "internal.h"

typedef struct f8_format {
    int man_bits, bias;
    float largest;     /* largest finite */
    int ieee_specials; /* E5M2: exponent all ones is inf / NaN; E4M3: only S.1111.111 is NaN */
} f8_format;

static const f8_format e4m3 = {3, 7, 448.0f, 0};
static const f8_format e5m2 = {2, 15, 57344.0f, 1};

static const f8_format *format_of(nnop_dtype t)
{
    return t == NNOP_F8E4M3 ? &e4m3 : &e5m2;
}

static float f8_decode(const f8_format *f, uint8_t c)
{
    int exp_bits = 7 - f->man_bits, e = (c & 0x7f) >> f->man_bits;
    int m = c & ((1 << f->man_bits) - 1), top = (1 << exp_bits) - 1;
    float v;
    if (f->ieee_specials && e == top)
        v = m ? NAN : INFINITY;
    else if (!f->ieee_specials && e == top && m == (1 << f->man_bits) - 1)
        v = NAN;
    else if (e == 0) /* subnormal: m units of 2^(1 - bias - man_bits) */
        v = ldexpf((float)m, 1 - f->bias - f->man_bits);
    else
        v = ldexpf((float)((1 << f->man_bits) + m), e - f->bias - f->man_bits);
    return (c & 0x80) ? -v : v;
}

/* |x| as a code without sign, rounded to nearest even, below the largest's code + 1 */
static uint8_t f8_magnitude(const f8_format *f, float a)
{
    int e, emin = 1 - f->bias, one = 1 << f->man_bits;
    float q;
    if (a == 0.0f)
        return 0;
    (void)frexpf(a, &e);
    e -= 1;       /* a = 1.m * 2^e */
    if (e < emin) /* subnormal: units of the smallest; a count of `one` is the smallest normal */
        return (uint8_t)nearbyintf(ldexpf(a, f->man_bits - emin));
    q = nearbyintf(ldexpf(a, f->man_bits - e)); /* one .. 2 * one */
    if (q >= (float)(2 * one))
        e += 1, q = (float)one;
    return (uint8_t)(((e + f->bias) << f->man_bits) | ((int)q - one));
}

static uint8_t f8_encode(const f8_format *f, float x)
{
    uint8_t sign = signbit(x) ? 0x80 : 0, code;
    float a = fabsf(x);
    if (isnan(x))
        return (uint8_t)(sign | 0x7f);
    if (a >= f->largest) /* infinities too: saturated */
        return (uint8_t)(sign | f8_magnitude(f, f->largest));
    code = f8_magnitude(f, a); /* below the largest: rounds to it at most, never onto NaN */
    return (uint8_t)(sign | code);
}

static int8_t i8_encode(float x)
{
    float r;
    if (isnan(x))
        return 0;
    r = nearbyintf(x);
    return (int8_t)(r > 127.0f ? 127 : r < -128.0f ? -128 : (int)r);
}

int nnop__dtype_is_8bit(nnop_dtype t)
{
    return t == NNOP_F8E4M3 || t == NNOP_F8E5M2 || t == NNOP_I8;
}

void nnop__8bit_to_f32(nnop_dtype t, const void *src, float *dst, int64_t n)
{
    const uint8_t *s = (const uint8_t *)src;
    int64_t i;
    if (t == NNOP_I8)
        for (i = 0; i < n; i++)
            dst[i] = (float)(int8_t)s[i];
    else
        for (i = 0; i < n; i++)
            dst[i] = f8_decode(format_of(t), s[i]);
}

void nnop__8bit_from_f32(nnop_dtype t, const float *src, void *dst, int64_t n)
{
    uint8_t *d = (uint8_t *)dst;
    int64_t i;
    if (t == NNOP_I8)
        for (i = 0; i < n; i++)
            d[i] = (uint8_t)i8_encode(src[i]);
    else
        for (i = 0; i < n; i++)
            d[i] = f8_encode(format_of(t), src[i]);
}
