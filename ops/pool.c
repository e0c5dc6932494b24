/* pool.c: max and average pooling over H, W (padded pad before and pad + pad_end after), and
 * global average pooling. */
#include <float.h>

#include "ops_common.h"

static nnop_status pool_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                              nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop__pool_attr *a = &node->attr.pool;
    const nnop_tensor_desc *x = in[0];
    int64_t o[2], padded;
    int i;
    if (a->kind != NNOP_POOL_MAX && a->kind != NNOP_POOL_AVG) {
        NNOP_MSG("unknown pool kind %d", (int)a->kind);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (x->ndim != 4) {
        NNOP_MSG("x must be 4-D (is %d-D)", x->ndim);
        return NNOP_ERR_SHAPE;
    }
    for (i = 0; i < 2; i++) {
        if (a->p.window[i] < 1 || a->p.stride[i] < 1) {
            int bad_window = a->p.window[i] < 1;
            NNOP_MSG("%s[%d] = %lld must be >= 1", bad_window ? "window" : "stride", i,
                     (long long)(bad_window ? a->p.window[i] : a->p.stride[i]));
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (a->p.pad[i] < 0) {
            NNOP_MSG("pad[%d] = %lld must be >= 0", i, (long long)a->p.pad[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (a->p.window[i] > INT32_MAX || a->p.stride[i] > INT32_MAX || a->p.pad[i] > INT32_MAX) {
            NNOP_MSG("window[%d] = %lld, stride[%d] = %lld and pad[%d] = %lld must be <= %ld", i,
                     (long long)a->p.window[i], i, (long long)a->p.stride[i], i,
                     (long long)a->p.pad[i], (long)INT32_MAX);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (a->p.pad_end[i] < 0 || a->p.pad_end[i] >= a->p.window[i]) {
            NNOP_MSG("pad_end[%d] = %lld must be 0 to window - 1 = %lld", i,
                     (long long)a->p.pad_end[i], (long long)(a->p.window[i] - 1));
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (a->p.pad[i] > a->p.window[i] / 2) { /* 2 * pad > window, without overflow */
            NNOP_MSG("pad[%d] = %lld exceeds half the window %lld", i, (long long)a->p.pad[i],
                     (long long)a->p.window[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        padded = x->dims[2 + i] + 2 * a->p.pad[i] + a->p.pad_end[i];
        if (padded < a->p.window[i]) {
            NNOP_MSG("window %lld exceeds the padded input %lld", (long long)a->p.window[i],
                     (long long)padded);
            return NNOP_ERR_SHAPE;
        }
        o[i] = (padded - a->p.window[i]) / a->p.stride[i] + 1;
        if ((o[i] - 1) * a->p.stride[i] - a->p.pad[i] >= x->dims[2 + i]) {
            NNOP_MSG("pad_end[%d] = %lld: the last window lies in the padding", i,
                     (long long)a->p.pad_end[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
    }
    *out = nnop_tensor_4d(x->dtype, nnop__layout_of(x), x->dims[0], x->dims[1], o[0], o[1]);
    return NNOP_OK;
}

/* One output element of max or average pooling; padding counts as -inf for max and as zeros
 * (in the divisor only when count_include_pad) for average. Max propagates NaN as PyTorch
 * does: a NaN anywhere in the window (padding excluded) makes the output NaN. */
static float pool_point(const nnop__pool_attr *a, const float *x, const nnop__view4 *xv, int64_t n,
                        int64_t c, int64_t oh, int64_t ow)
{
    int64_t h0 = oh * a->p.stride[0] - a->p.pad[0], w0 = ow * a->p.stride[1] - a->p.pad[1];
    int64_t r, s, count = 0;
    double acc = a->kind == NNOP_POOL_MAX ? -DBL_MAX : 0.0;
    for (r = h0; r < h0 + a->p.window[0]; r++)
        for (s = w0; s < w0 + a->p.window[1]; s++) {
            double v;
            if (r < 0 || r >= xv->h || s < 0 || s >= xv->w)
                continue;
            v = x[nnop__at(xv, n, c, r, s)];
            count++;
            if (a->kind == NNOP_POOL_MAX)
                acc = (v > acc || v != v) ? v : acc; /* once NaN, stays NaN */
            else
                acc += v;
        }
    if (a->kind == NNOP_POOL_MAX)
        return (float)acc;
    if (a->p.count_include_pad) {
        /* the window clipped to the padded input, as PyTorch counts it */
        int64_t hend = h0 + a->p.window[0], wend = w0 + a->p.window[1];
        int64_t hmax = xv->h + a->p.pad[0] + a->p.pad_end[0];
        int64_t wmax = xv->w + a->p.pad[1] + a->p.pad_end[1];
        count = ((hend < hmax ? hend : hmax) - h0) * ((wend < wmax ? wend : wmax) - w0);
    }
    return (float)(acc / (double)count);
}

static void pool_reference(const nnop__node *node, const float *const *in,
                           const nnop_tensor_desc *const *in_desc, float *out,
                           const nnop_tensor_desc *out_desc)
{
    nnop__view4 xv = nnop__view(in_desc[0]), yv = nnop__view(out_desc);
    int64_t n, c, h, w;
    for (n = 0; n < yv.n; n++)
        for (c = 0; c < yv.c; c++)
            for (h = 0; h < yv.h; h++)
                for (w = 0; w < yv.w; w++)
                    out[nnop__at(&yv, n, c, h, w)] =
                            pool_point(&node->attr.pool, in[0], &xv, n, c, h, w);
}

static nnop_status gap_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                             nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x = in[0];
    (void)node;
    if (x->ndim != 4) {
        NNOP_MSG("x must be 4-D (is %d-D)", x->ndim);
        return NNOP_ERR_SHAPE;
    }
    *out = nnop_tensor_4d(x->dtype, nnop__layout_of(x), x->dims[0], x->dims[1], 1, 1);
    return NNOP_OK;
}

static void gap_reference(const nnop__node *node, const float *const *in,
                          const nnop_tensor_desc *const *in_desc, float *out,
                          const nnop_tensor_desc *out_desc)
{
    nnop__view4 xv = nnop__view(in_desc[0]), yv = nnop__view(out_desc);
    int64_t n, c, h, w;
    (void)node;
    for (n = 0; n < xv.n; n++)
        for (c = 0; c < xv.c; c++) {
            double acc = 0.0;
            for (h = 0; h < xv.h; h++)
                for (w = 0; w < xv.w; w++)
                    acc += in[0][nnop__at(&xv, n, c, h, w)];
            out[nnop__at(&yv, n, c, 0, 0)] = (float)(acc / (double)(xv.h * xv.w));
        }
}

const nnop__op_def nnop__op_pool = {"pool", NNOP_ROLE_STANDALONE, pool_infer, pool_reference};
const nnop__op_def nnop__op_global_avg_pool = {"global_avg_pool", NNOP_ROLE_STANDALONE, gap_infer,
                                               gap_reference};
