/* tensor.c: tensor descriptors: constructors, validation, layout, printing. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

int nnop__dtype_valid(nnop_dtype t)
{
    return t == NNOP_F32 || t == NNOP_F16 || t == NNOP_BF16;
}

int nnop__dtype_stored(nnop_dtype t)
{
    return nnop__dtype_valid(t) || nnop__dtype_is_8bit(t);
}

const char *nnop__dtype_name(nnop_dtype t)
{
    switch (t) {
    case NNOP_F32:
        return "f32";
    case NNOP_F16:
        return "f16";
    case NNOP_BF16:
        return "bf16";
    case NNOP_F8E4M3:
        return "f8e4m3";
    case NNOP_F8E5M2:
        return "f8e5m2";
    case NNOP_I8:
        return "i8";
    }
    return "<bad dtype>";
}

size_t nnop_dtype_size(nnop_dtype t)
{
    if (!nnop__dtype_stored(t))
        return 0;
    return t == NNOP_F32 ? 4 : nnop__dtype_is_8bit(t) ? 1 : 2;
}

/* Products in unsigned arithmetic: dims from the user may be anything (nnop_tensor_4d does
 * not validate), and a wrapped stride is harmless where signed overflow is undefined; such
 * descriptors are refused by nnop__check_desc, which checks the element count first. */
static int64_t mul_wrap(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

void nnop__set_packed_strides(nnop_tensor_desc *d, nnop_layout l)
{
    int i;
    if (d->ndim == 4 && l == NNOP_NHWC) {
        d->strides[1] = 1;
        d->strides[3] = d->dims[1];
        d->strides[2] = mul_wrap(d->dims[3], d->dims[1]);
        d->strides[0] = mul_wrap(d->dims[2], d->strides[2]);
        return;
    }
    for (i = d->ndim - 1; i >= 0 && i < NNOP_MAX_DIMS; i--)
        d->strides[i] = (i == d->ndim - 1) ? 1 : mul_wrap(d->strides[i + 1], d->dims[i + 1]);
}

nnop_tensor_desc nnop_tensor_4d(nnop_dtype t, nnop_layout l, int64_t n, int64_t c, int64_t h,
                                int64_t w)
{
    nnop_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = 4;
    d.dims[0] = n;
    d.dims[1] = c;
    d.dims[2] = h;
    d.dims[3] = w;
    if (l == NNOP_NCHW || l == NNOP_NHWC) /* else strides stay 0: every call refuses d */
        nnop__set_packed_strides(&d, l);
    return d;
}

nnop_tensor_desc nnop_tensor_1d(nnop_dtype t, int64_t n)
{
    nnop_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = 1;
    d.dims[0] = n;
    d.strides[0] = 1;
    return d;
}

nnop_tensor_desc nnop_tensor_2d(nnop_dtype t, int64_t rows, int64_t cols)
{
    nnop_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.ndim = 2;
    d.dims[0] = rows;
    d.dims[1] = cols;
    d.strides[0] = cols;
    d.strides[1] = 1;
    return d;
}

static int strides_match(const nnop_tensor_desc *d, nnop_layout l)
{
    nnop_tensor_desc want = *d;
    int i;
    nnop__set_packed_strides(&want, l);
    for (i = 0; i < d->ndim; i++)
        if (d->dims[i] > 1 && d->strides[i] != want.strides[i])
            return 0;
    return 1;
}

static int strides_equal(const nnop_tensor_desc *d, nnop_layout l)
{
    nnop_tensor_desc want = *d;
    int i;
    nnop__set_packed_strides(&want, l);
    for (i = 0; i < d->ndim; i++)
        if (d->strides[i] != want.strides[i])
            return 0;
    return 1;
}

int nnop__fits_layout(const nnop_tensor_desc *d, nnop_layout l)
{
    return d->ndim == 4 && strides_match(d, l);
}

/* nnop_tensor_4d's strides name the layout even where a dim of 1 makes the offsets alike
 * (N x 1 x H x W NHWC has a C stride of 1); only where the strides of both layouts are the
 * same (N x 1 x 1 x 1), or neither and the offsets fit both, is there no layout. */
int nnop__layout_ambiguous(const nnop_tensor_desc *d)
{
    int nchw, nhwc;
    if (d->ndim != 4)
        return 0;
    nchw = strides_equal(d, NNOP_NCHW), nhwc = strides_equal(d, NNOP_NHWC);
    if (nchw != nhwc)
        return 0;
    return nchw || (strides_match(d, NNOP_NCHW) && strides_match(d, NNOP_NHWC));
}

nnop_layout nnop__layout_of(const nnop_tensor_desc *d)
{
    if (d->ndim != 4 || strides_equal(d, NNOP_NCHW))
        return NNOP_NCHW;
    return strides_equal(d, NNOP_NHWC) ||
                           (strides_match(d, NNOP_NHWC) && !strides_match(d, NNOP_NCHW))
                   ? NNOP_NHWC
                   : NNOP_NCHW;
}

static int strides_all_zero(const nnop_tensor_desc *d)
{
    int i;
    for (i = 0; i < d->ndim; i++)
        if (d->strides[i] != 0)
            return 0;
    return 1;
}

/* stored: the 8-bit storage dtypes pass too (conversions and copies, not graphs) */
static nnop_status check_desc(const nnop_tensor_desc *d, int stored, char *msg, size_t len)
{
    int64_t n = 1;
    int i, overflow = 0;
    char text[256];
    if (nnop__dtype_is_8bit(d->dtype) && !stored) {
        snprintf(msg, len,
                 "dtype %s is for storage in this version (nnop_convert, nnop_quantize, "
                 "nnop_tensor_copy): graphs compute in f32, f16 or bf16",
                 nnop__dtype_name(d->dtype));
        return NNOP_ERR_UNSUPPORTED;
    }
    if (!nnop__dtype_stored(d->dtype)) {
        snprintf(msg, len, "unknown dtype value %d", (int)d->dtype);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (d->ndim < 1 || d->ndim > NNOP_MAX_DIMS) {
        snprintf(msg, len, "ndim %d out of range 1..%d", d->ndim, NNOP_MAX_DIMS);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    for (i = 0; i < d->ndim; i++)
        if (d->dims[i] <= 0) {
            snprintf(msg, len, "dims[%d] = %lld is not positive", i, (long long)d->dims[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
    /* the whole product, so that the message does not blame one dim for all of them */
    for (i = 0; i < d->ndim && !overflow; i++)
        overflow = !nnop__mul_i64(n, d->dims[i], &n);
    if (overflow || n > NNOP_MAX_TENSOR_ELEMENTS) {
        nnop__desc_string(d, text, sizeof text);
        snprintf(msg, len, "%s: %s NNOP_MAX_TENSOR_ELEMENTS (2^40 = %lld) elements", text,
                 overflow ? "the element count overflows 64 bits; at most" : "more than",
                 (long long)NNOP_MAX_TENSOR_ELEMENTS);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    /* the byte size (and the CPU backend's f32 copy) must fit in size_t: 32-bit systems */
    if ((uint64_t)n > (uint64_t)(SIZE_MAX / sizeof(float))) {
        snprintf(msg, len, "%lld elements do not fit in this system's memory", (long long)n);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (!strides_match(d, NNOP_NCHW) && !(d->ndim == 4 && strides_match(d, NNOP_NHWC))) {
        snprintf(msg, len, "strides are not packed %s%s",
                 d->ndim == 4 ? "NCHW or NHWC" : "row-major",
                 d->ndim == 4 && strides_all_zero(d)
                         ? " (all 0, as nnop_tensor_4d gives for a layout other "
                           "than NNOP_NCHW and NNOP_NHWC)"
                         : "");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    return NNOP_OK;
}

nnop_status nnop__check_desc(const nnop_tensor_desc *d, char *msg, size_t len)
{
    return check_desc(d, 0, msg, len);
}

nnop_status nnop__check_stored_desc(const nnop_tensor_desc *d, char *msg, size_t len)
{
    return check_desc(d, 1, msg, len);
}

int64_t nnop_tensor_elements(const nnop_tensor_desc *d)
{
    char msg[8];
    int64_t n = 1;
    int i;
    if (!d || check_desc(d, 1, msg, sizeof msg) != NNOP_OK)
        return 0;
    for (i = 0; i < d->ndim; i++)
        n *= d->dims[i];
    return n;
}

size_t nnop_tensor_bytes(const nnop_tensor_desc *d)
{
    return (size_t)nnop_tensor_elements(d) * (d ? nnop_dtype_size(d->dtype) : 0);
}

int nnop__desc_equal(const nnop_tensor_desc *a, const nnop_tensor_desc *b)
{
    int i;
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return 0;
    for (i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i] || (a->dims[i] > 1 && a->strides[i] != b->strides[i]))
            return 0;
    return 1;
}

void nnop__desc_string(const nnop_tensor_desc *d, char *buf, size_t len)
{
    size_t used = 0;
    int i;
    int n = snprintf(buf, len, "%s[", nnop__dtype_name(d->dtype));
    for (i = 0; n >= 0 && i < d->ndim && i < NNOP_MAX_DIMS; i++) {
        used += (size_t)n;
        if (used >= len)
            return;
        n = snprintf(buf + used, len - used, "%s%lld", i ? "," : "", (long long)d->dims[i]);
    }
    if (n < 0)
        return;
    used += (size_t)n;
    if (used < len)
        snprintf(buf + used, len - used, "]%s",
                 d->ndim == 4 ? (nnop__layout_of(d) == NNOP_NHWC ? " NHWC" : " NCHW") : "");
}
