/* conv.c: 2-D convolution (cross-correlation) with stride, padding, dilation and groups. */
#include "ops_common.h"

/* pad, stride, dilation (each {H, W}) and groups of a conv or transposed conv: in range, and
 * bounded so that the shape arithmetic of either cannot overflow */
nnop_status nnop__check_conv_geometry(const int64_t *pad, const int64_t *stride,
                                      const int64_t *dilation, int64_t groups, char *msg,
                                      size_t msg_len)
{
    int i;
    for (i = 0; i < 2; i++) {
        if (stride[i] < 1) {
            NNOP_MSG("stride[%d] = %lld must be >= 1", i, (long long)stride[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (dilation[i] < 1) {
            NNOP_MSG("dilation[%d] = %lld must be >= 1", i, (long long)dilation[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (pad[i] < 0) {
            NNOP_MSG("pad[%d] = %lld is negative", i, (long long)pad[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (stride[i] > INT32_MAX || dilation[i] > INT32_MAX || pad[i] > INT32_MAX) {
            NNOP_MSG("stride[%d] = %lld, dilation[%d] = %lld and pad[%d] = %lld must be <= %ld", i,
                     (long long)stride[i], i, (long long)dilation[i], i, (long long)pad[i],
                     (long)INT32_MAX);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
    }
    if (groups < 1) {
        NNOP_MSG("groups = %lld must be >= 1", (long long)groups);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    return NNOP_OK;
}

nnop_status nnop__check_conv_operands(const nnop_tensor_desc *x, const nnop_tensor_desc *w,
                                      char *msg, size_t msg_len)
{
    if (x->ndim != 4 || w->ndim != 4) {
        NNOP_MSG("x and w must be 4-D (x is %d-D, w is %d-D)", x->ndim, w->ndim);
        return NNOP_ERR_SHAPE;
    }
    if (!nnop__layout_ambiguous(x) && !nnop__fits_layout(w, nnop__layout_of(x))) {
        NNOP_MSG("w must be packed in x's layout (x is %s, w is %s)", nnop__layout_name(x),
                 nnop__layout_name(w));
        return NNOP_ERR_SHAPE;
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
    nnop_status st =
            nnop__check_conv_geometry(p->pad, p->stride, p->dilation, p->groups, msg, msg_len);
    if (st == NNOP_OK)
        st = nnop__check_conv_operands(x, w, msg, msg_len);
    if (st != NNOP_OK)
        return st;
    c = x->dims[1], k = w->dims[0], g = p->groups;
    if (c % g != 0 || k % g != 0) {
        NNOP_MSG("groups = %lld does not divide C = %lld and K = %lld", (long long)g, (long long)c,
                 (long long)k);
        return NNOP_ERR_SHAPE;
    }
    if (w->dims[1] * g != c) {
        NNOP_MSG("wrong channel count: w has %lld input channels per group but x has C = %lld "
                 "with groups = %lld (expected %lld)",
                 (long long)w->dims[1], (long long)c, (long long)g, (long long)(c / g));
        return NNOP_ERR_SHAPE;
    }
    for (i = 0; i < 2; i++) {
        if (!nnop__mul_i64(w->dims[2 + i] - 1, p->dilation[i], &extent[i]) ||
            extent[i] >= INT64_MAX / 2) {
            NNOP_MSG("the dilated %s filter extent overflows (%lld taps, dilation %lld)",
                     i ? "width" : "height", (long long)w->dims[2 + i], (long long)p->dilation[i]);
            return NNOP_ERR_SHAPE;
        }
        extent[i] += 1;
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

/* The reference runs one output row segment at a time: accumulators for up to ROW_CHUNK
 * output columns stay in doubles, and the valid column range of each filter tap is computed
 * once instead of testing every element, so the inner loop is a plain multiply-add. */
#define ROW_CHUNK 256

static int64_t ceil_div(int64_t a, int64_t b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

typedef struct conv_job {
    const nnop_conv_params *p;
    const float *x, *w;
    nnop__view4 xv, wv;
    int64_t n, k, oh, ow0, ow1; /* output columns [ow0, ow1) of row oh */
} conv_job;

/* acc[ow - ow0] += every tap of filter k over the group's channels */
static void conv_row_segment(const conv_job *j, double *acc)
{
    const nnop_conv_params *p = j->p;
    int64_t cg = j->wv.c, g = j->k / (j->wv.n / p->groups), c, r, s, ow;
    for (c = 0; c < cg; c++)
        for (r = 0; r < j->wv.h; r++) {
            int64_t ih = j->oh * p->stride[0] - p->pad[0] + r * p->dilation[0];
            if (ih < 0 || ih >= j->xv.h)
                continue;
            for (s = 0; s < j->wv.w; s++) {
                int64_t off = s * p->dilation[1] - p->pad[1]; /* iw = ow * stride + off */
                int64_t lo = ceil_div(-off, p->stride[1]);
                int64_t hi = floor_div(j->xv.w - 1 - off, p->stride[1]) + 1;
                double wt = j->w[nnop__at(&j->wv, j->k, c, r, s)];
                const float *xrow = j->x + nnop__at(&j->xv, j->n, g * cg + c, ih, 0);
                int64_t step = p->stride[1] * j->xv.sw;
                lo = lo > j->ow0 ? lo : j->ow0;
                hi = hi < j->ow1 ? hi : j->ow1;
                for (ow = lo; ow < hi; ow++)
                    acc[ow - j->ow0] += (double)xrow[ow * step + off * j->xv.sw] * wt;
            }
        }
}

static void conv_reference(const nnop__node *node, const float *const *in,
                           const nnop_tensor_desc *const *in_desc, float *out,
                           const nnop_tensor_desc *out_desc)
{
    nnop__view4 yv = nnop__view(out_desc);
    double acc[ROW_CHUNK];
    conv_job j;
    int64_t ow;
    j.p = &node->attr.conv;
    j.x = in[0];
    j.w = in[1];
    j.xv = nnop__view(in_desc[0]);
    j.wv = nnop__view(in_desc[1]);
    for (j.n = 0; j.n < yv.n; j.n++)
        for (j.k = 0; j.k < yv.c; j.k++)
            for (j.oh = 0; j.oh < yv.h; j.oh++)
                for (j.ow0 = 0; j.ow0 < yv.w; j.ow0 += ROW_CHUNK) {
                    j.ow1 = j.ow0 + ROW_CHUNK < yv.w ? j.ow0 + ROW_CHUNK : yv.w;
                    for (ow = 0; ow < j.ow1 - j.ow0; ow++)
                        acc[ow] = 0.0;
                    conv_row_segment(&j, acc);
                    for (ow = j.ow0; ow < j.ow1; ow++)
                        out[nnop__at(&yv, j.n, j.k, j.oh, ow)] = (float)acc[ow - j.ow0];
                }
}

const nnop__op_def nnop__op_conv = {"conv", NNOP_ROLE_PRODUCER, conv_infer, conv_reference};
