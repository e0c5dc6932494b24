/* resize.c: nearest and bilinear resize over H, W with PyTorch's F.interpolate semantics: output
 * size given, or floor(in * scale) with coordinates mapped by 1/scale; source coordinates in
 * float as PyTorch computes them (so nearest picks the same pixels), bilinear blend in double. */
#include <math.h>

#include "ops_common.h"

static nnop_status resize_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    static const char *const dim_name[2] = {"height", "width"};
    const nnop_resize_params *p = &node->attr.resize;
    const nnop_tensor_desc *x = in[0];
    int64_t o[2];
    int i, by_size = p->size[0] != 0 || p->size[1] != 0;
    if (p->mode != NNOP_RESIZE_NEAREST && p->mode != NNOP_RESIZE_BILINEAR) {
        NNOP_MSG("unknown resize mode %d", (int)p->mode);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (p->mode == NNOP_RESIZE_NEAREST && p->align_corners) {
        NNOP_MSG("align_corners is for bilinear resize only (mode is nearest)");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (x->ndim != 4) {
        NNOP_MSG("x must be 4-D (is %d-D)", x->ndim);
        return NNOP_ERR_SHAPE;
    }
    for (i = 0; i < 2; i++) {
        if (by_size && p->size[i] < 1) {
            NNOP_MSG("size[%d] = %lld must be >= 1 (or size 0, 0 to resize by scale)", i,
                     (long long)p->size[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (by_size && p->scale[i] != 0.0) {
            NNOP_MSG("give size or scale, not both (size[%d] = %lld, scale[%d] = %g)", i,
                     (long long)p->size[i], i, p->scale[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (by_size) {
            o[i] = p->size[i];
            continue;
        }
        if (!(p->scale[i] > 0.0) || !isfinite(p->scale[i])) {
            NNOP_MSG("scale[%d] = %g must be finite and > 0 (or give size)", i, p->scale[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        {
            double v = (double)x->dims[2 + i] * p->scale[i];
            if (!(v < (double)NNOP_MAX_TENSOR_ELEMENTS)) {
                NNOP_MSG("scale[%d] = %g gives an output %s past %lld", i, p->scale[i], dim_name[i],
                         (long long)NNOP_MAX_TENSOR_ELEMENTS);
                return NNOP_ERR_SHAPE;
            }
            o[i] = (int64_t)v; /* floor, as PyTorch */
        }
        if (o[i] < 1) {
            NNOP_MSG("scale[%d] = %g gives an output %s of 0 (input %s %lld)", i, p->scale[i],
                     dim_name[i], dim_name[i], (long long)x->dims[2 + i]);
            return NNOP_ERR_SHAPE;
        }
    }
    *out = nnop_tensor_4d(x->dtype, nnop__layout_of(x), x->dims[0], x->dims[1], o[0], o[1]);
    return NNOP_OK;
}

/* PyTorch's compute_scales_value: 1/scale when a scale was given, else in/out; in float. */
float nnop__resize_coord_scale(const nnop_resize_params *p, int i, int64_t in, int64_t out)
{
    if (p->mode == NNOP_RESIZE_BILINEAR && p->align_corners)
        return out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f;
    if (p->size[0] == 0 && p->size[1] == 0)
        return (float)(1.0 / p->scale[i]);
    return (float)in / (float)out;
}

/* PyTorch's nearest_idx (mode="nearest"): floor(dst * s) clamped, in float, with its special
 * cases for out = in and out = 2 in. */
static int64_t nearest_index(const nnop_resize_params *p, int i, int64_t dst, int64_t in,
                             int64_t out)
{
    int64_t src;
    if (out == in)
        return dst;
    if (out == 2 * in)
        return dst >> 1;
    src = (int64_t)floorf((float)dst * nnop__resize_coord_scale(p, i, in, out));
    return src < in - 1 ? src : in - 1;
}

/* Bilinear taps along one axis: source index i0, i1 = i0 + (i0 < in - 1) (i1 = i0 on an axis
 * that keeps its size), weights of each. */
typedef struct linear_taps {
    int64_t i0, i1;
    double l0, l1;
} linear_taps;

static linear_taps linear_index(const nnop_resize_params *p, int i, int64_t dst, int64_t in,
                                int64_t out)
{
    float s = nnop__resize_coord_scale(p, i, in, out), real, lambda;
    linear_taps t;
    if (out == in) { /* PyTorch's CPU kernel: a copy, whatever the scale; the second tap is the
                      * same pixel with weight 0 (so inf gives NaN there, as in PyTorch) */
        t.i0 = t.i1 = dst;
        t.l0 = 1.0;
        t.l1 = 0.0;
        return t;
    }
    if (p->align_corners) {
        real = s * (float)dst;
    } else {
        real = s * ((float)dst + 0.5f) - 0.5f;
        real = real < 0.0f ? 0.0f : real;
    }
    t.i0 = (int64_t)floorf(real);
    t.i0 = t.i0 < in - 1 ? t.i0 : in - 1;
    lambda = real - (float)t.i0;
    lambda = lambda < 0.0f ? 0.0f : (lambda > 1.0f ? 1.0f : lambda);
    t.i1 = t.i0 + (t.i0 < in - 1 ? 1 : 0);
    t.l1 = lambda;
    t.l0 = 1.0f - lambda;
    return t;
}

static void resize_reference(const nnop__node *node, const float *const *in,
                             const nnop_tensor_desc *const *in_desc, float *out,
                             const nnop_tensor_desc *out_desc)
{
    const nnop_resize_params *p = &node->attr.resize;
    nnop__view4 xv = nnop__view(in_desc[0]), yv = nnop__view(out_desc);
    const float *x = in[0];
    int64_t n, c, h, w;
    for (h = 0; h < yv.h; h++)
        for (w = 0; w < yv.w; w++) {
            if (p->mode == NNOP_RESIZE_NEAREST) {
                int64_t ih = nearest_index(p, 0, h, xv.h, yv.h);
                int64_t iw = nearest_index(p, 1, w, xv.w, yv.w);
                for (n = 0; n < yv.n; n++)
                    for (c = 0; c < yv.c; c++)
                        out[nnop__at(&yv, n, c, h, w)] = x[nnop__at(&xv, n, c, ih, iw)];
            } else {
                linear_taps th = linear_index(p, 0, h, xv.h, yv.h);
                linear_taps tw = linear_index(p, 1, w, xv.w, yv.w);
                for (n = 0; n < yv.n; n++)
                    for (c = 0; c < yv.c; c++) {
                        double top = tw.l0 * x[nnop__at(&xv, n, c, th.i0, tw.i0)] +
                                     tw.l1 * x[nnop__at(&xv, n, c, th.i0, tw.i1)];
                        double bottom = tw.l0 * x[nnop__at(&xv, n, c, th.i1, tw.i0)] +
                                        tw.l1 * x[nnop__at(&xv, n, c, th.i1, tw.i1)];
                        out[nnop__at(&yv, n, c, h, w)] = (float)(th.l0 * top + th.l1 * bottom);
                    }
            }
        }
}

const nnop__op_def nnop__op_resize = {"resize", NNOP_ROLE_STANDALONE, resize_infer,
                                      resize_reference};
