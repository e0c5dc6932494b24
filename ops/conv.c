/* conv.c: 2-D convolution (cross-correlation) with stride, padding, dilation and groups. */
#include "ops_common.h"

static nnop_status check_params(const nnop_conv_params *p, char *msg, size_t msg_len)
{
    int i;
    for (i = 0; i < 2; i++) {
        if (p->stride[i] < 1) {
            NNOP_MSG("stride[%d] = %lld must be >= 1", i, (long long)p->stride[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (p->dilation[i] < 1) {
            NNOP_MSG("dilation[%d] = %lld must be >= 1", i, (long long)p->dilation[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (p->pad[i] < 0) {
            NNOP_MSG("pad[%d] = %lld is negative", i, (long long)p->pad[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
    }
    if (p->groups < 1) {
        NNOP_MSG("groups = %lld must be >= 1", (long long)p->groups);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    return NNOP_OK;
}

static nnop_status conv_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                              nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x = in[0], *w = in[1];
    const nnop_conv_params *p = &node->attr.conv;
    int64_t c, k, g, extent[2], o[2];
    int i;
    nnop_status st = check_params(p, msg, msg_len);
    if (st != NNOP_OK)
        return st;
    if (x->ndim != 4 || w->ndim != 4) {
        NNOP_MSG("x and w must be 4-D (x is %d-D, w is %d-D)", x->ndim, w->ndim);
        return NNOP_ERR_SHAPE;
    }
    c = x->dims[1], k = w->dims[0], g = p->groups;
    if (c % g != 0 || k % g != 0) {
        NNOP_MSG("groups = %lld does not divide C = %lld and K = %lld", (long long)g,
                 (long long)c, (long long)k);
        return NNOP_ERR_SHAPE;
    }
    if (w->dims[1] * g != c) {
        NNOP_MSG("wrong channel count: w has %lld input channels per group but x has C = %lld "
                 "with groups = %lld (expected %lld)",
                 (long long)w->dims[1], (long long)c, (long long)g, (long long)(c / g));
        return NNOP_ERR_SHAPE;
    }
    for (i = 0; i < 2; i++) {
        extent[i] = (w->dims[2 + i] - 1) * p->dilation[i] + 1;
        o[i] = (x->dims[2 + i] + 2 * p->pad[i] - extent[i]) / p->stride[i] + 1;
        if (x->dims[2 + i] + 2 * p->pad[i] < extent[i]) {
            NNOP_MSG("the dilated %s filter extent %lld exceeds the padded input %lld",
                     i ? "width" : "height", (long long)extent[i],
                     (long long)(x->dims[2 + i] + 2 * p->pad[i]));
            return NNOP_ERR_SHAPE;
        }
    }
    *out = nnop_tensor_4d(x->dtype, nnop__layout_of(x), x->dims[0], k, o[0], o[1]);
    return NNOP_OK;
}

/* One output element: sum over the group's input channels and the filter window. */
static float conv_point(const nnop_conv_params *p, const float *x, const nnop__view4 *xv,
                        const float *w, const nnop__view4 *wv, int64_t n, int64_t k, int64_t oh,
                        int64_t ow)
{
    int64_t cg = wv->c, g = k / (wv->n / p->groups), c, r, s;
    double acc = 0.0;
    for (c = 0; c < cg; c++) {
        for (r = 0; r < wv->h; r++) {
            int64_t ih = oh * p->stride[0] - p->pad[0] + r * p->dilation[0];
            if (ih < 0 || ih >= xv->h)
                continue;
            for (s = 0; s < wv->w; s++) {
                int64_t iw = ow * p->stride[1] - p->pad[1] + s * p->dilation[1];
                if (iw < 0 || iw >= xv->w)
                    continue;
                acc += (double)x[nnop__at(xv, n, g * cg + c, ih, iw)] *
                       (double)w[nnop__at(wv, k, c, r, s)];
            }
        }
    }
    return (float)acc;
}

static void conv_reference(const nnop__node *node, const float *const *in,
                           const nnop_tensor_desc *const *in_desc, float *out,
                           const nnop_tensor_desc *out_desc)
{
    nnop__view4 xv = nnop__view(in_desc[0]), wv = nnop__view(in_desc[1]);
    nnop__view4 yv = nnop__view(out_desc);
    int64_t n, k, h, w;
    for (n = 0; n < yv.n; n++)
        for (k = 0; k < yv.c; k++)
            for (h = 0; h < yv.h; h++)
                for (w = 0; w < yv.w; w++)
                    out[nnop__at(&yv, n, k, h, w)] =
                            conv_point(&node->attr.conv, in[0], &xv, in[1], &wv, n, k, h, w);
}

const nnop__op_def nnop__op_conv = {"conv", NNOP_ROLE_PRODUCER, conv_infer, conv_reference};
