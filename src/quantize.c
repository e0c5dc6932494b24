/* quantize.c: nnop_quantize and nnop_dequantize, symmetric scaling into and out of the 8-bit
 * storage dtypes on the host, one scale a tensor or a channel (util/eight_bit.c converts). */
#include <math.h>

#include "internal.h"

/* The arguments both directions share (x float32, q 8-bit, the one written: x when
 * writes_x); 1 when they are good. */
static int args_ok(const float *x, const void *q, int64_t n, const float *scales, int64_t channels,
                   nnop_dtype q_type, int writes_x)
{
    int64_t c;
    uint64_t xb = (uint64_t)n * sizeof(float), sb = (uint64_t)channels * sizeof(float);
    if (!x || !q || !scales || n < 1 || n > NNOP_MAX_TENSOR_ELEMENTS || channels < 1 ||
        n % channels != 0 || !nnop__dtype_is_8bit(q_type))
        return 0;
    for (c = 0; c < channels; c++)
        if (!(scales[c] > 0.0f) || !isfinite(scales[c]))
            return 0;
    if (nnop__ranges_overlap(x, xb, q, (uint64_t)n))
        return 0;
    return writes_x ? !nnop__ranges_overlap(scales, sb, x, xb)
                    : !nnop__ranges_overlap(scales, sb, q, (uint64_t)n);
}

nnop_status nnop_quantize(const float *x, int64_t n, const float *scales, int64_t channels,
                          nnop_dtype q_type, void *q)
{
    float chunk[256];
    int64_t per, c, done;
    if (!args_ok(x, q, n, scales, channels, q_type, 0))
        return NNOP_ERR_INVALID_ARGUMENT;
    per = n / channels;
    for (c = 0; c < channels; c++)
        for (done = 0; done < per;) {
            int64_t m = per - done < 256 ? per - done : 256, i, at = c * per + done;
            for (i = 0; i < m; i++)
                chunk[i] = x[at + i] / scales[c];
            nnop__8bit_from_f32(q_type, chunk, (char *)q + at, m);
            done += m;
        }
    return NNOP_OK;
}

nnop_status nnop_dequantize(nnop_dtype q_type, const void *q, int64_t n, const float *scales,
                            int64_t channels, float *x)
{
    int64_t per, c, i;
    if (!args_ok(x, q, n, scales, channels, q_type, 1))
        return NNOP_ERR_INVALID_ARGUMENT;
    per = n / channels;
    nnop__8bit_to_f32(q_type, q, x, n);
    for (c = 0; c < channels; c++)
        for (i = c * per; i < (c + 1) * per; i++)
            x[i] *= scales[c];
    return NNOP_OK;
}

void nnop__fake_quantize(nnop_dtype q_type, const float *x, int64_t n, float scale, float *y)
{
    float chunk[256];
    unsigned char codes[256];
    int64_t done, i;
    for (done = 0; done < n;) {
        int64_t m = n - done < 256 ? n - done : 256;
        for (i = 0; i < m; i++)
            chunk[i] = x[done + i] / scale;
        nnop__8bit_from_f32(q_type, chunk, codes, m);
        nnop__8bit_to_f32(q_type, codes, chunk, m);
        for (i = 0; i < m; i++)
            y[done + i] = chunk[i] * scale;
        done += m;
    }
}
