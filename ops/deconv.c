/* deconv.c: transposed 2-D convolution (PyTorch ConvTranspose2d): stride, padding, output
 * padding, dilation and groups; w is C, K/groups, R, S (input channels first) in x's layout. */
#include "ops_common.h"

/* conv's geometry checks, then output padding: >= 0 and below stride or dilation */
static nnop_status check_params(const nnop_conv_transpose_params *p, char *msg, size_t msg_len)
{
    int i;
    nnop_status st =
            nnop__check_conv_geometry(p->pad, p->stride, p->dilation, p->groups, msg, msg_len);
    for (i = 0; i < 2 && st == NNOP_OK; i++) {
        if (p->output_pad[i] < 0) {
            NNOP_MSG("output_pad[%d] = %lld is negative", i, (long long)p->output_pad[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
        if (p->output_pad[i] >= p->stride[i] && p->output_pad[i] >= p->dilation[i]) {
            NNOP_MSG("output_pad[%d] = %lld must be smaller than stride[%d] = %lld or "
                     "dilation[%d] = %lld",
                     i, (long long)p->output_pad[i], i, (long long)p->stride[i], i,
                     (long long)p->dilation[i]);
            return NNOP_ERR_INVALID_ARGUMENT;
        }
    }
    return st;
}

static nnop_status deconv_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x = in[0], *w = in[1];
    const nnop_conv_transpose_params *p = &node->attr.deconv;
    const int64_t big = (int64_t)1 << 61;
    int64_t c, k, g, o[2];
    int i;
    nnop_status st = check_params(p, msg, msg_len);
    if (st == NNOP_OK)
        st = nnop__check_conv_operands(x, w, msg, msg_len);
    if (st != NNOP_OK)
        return st;
    c = x->dims[1], g = p->groups;
    if (w->dims[0] != c) {
        NNOP_MSG("wrong channel count: w is C x K/groups x R x S with C = %lld in dim 0, but x has "
                 "C = %lld",
                 (long long)w->dims[0], (long long)c);
        return NNOP_ERR_SHAPE;
    }
    if (c % g != 0) {
        NNOP_MSG("groups = %lld does not divide C = %lld", (long long)g, (long long)c);
        return NNOP_ERR_SHAPE;
    }
    if (!nnop__mul_i64(w->dims[1], g, &k) || k > NNOP_MAX_TENSOR_ELEMENTS) {
        NNOP_MSG("the output channel count %lld x groups %lld is out of bounds",
                 (long long)w->dims[1], (long long)g);
        return NNOP_ERR_SHAPE;
    }
    for (i = 0; i < 2; i++) {
        int64_t span, extent; /* (H - 1) * stride, dilation * (R - 1) */
        if (!nnop__mul_i64(x->dims[2 + i] - 1, p->stride[i], &span) ||
            !nnop__mul_i64(w->dims[2 + i] - 1, p->dilation[i], &extent) || span > big ||
            extent > big) {
            NNOP_MSG("the output %s overflows (input %lld, stride %lld, %lld taps, dilation %lld)",
                     i ? "width" : "height", (long long)x->dims[2 + i], (long long)p->stride[i],
                     (long long)w->dims[2 + i], (long long)p->dilation[i]);
            return NNOP_ERR_SHAPE;
        }
        o[i] = span - 2 * p->pad[i] + extent + p->output_pad[i] + 1;
        if (o[i] < 1) {
            NNOP_MSG("the output %s (%lld - 1) * %lld - 2 * %lld + %lld * (%lld - 1) + %lld + 1 = "
                     "%lld is not positive",
                     i ? "width" : "height", (long long)x->dims[2 + i], (long long)p->stride[i],
                     (long long)p->pad[i], (long long)p->dilation[i], (long long)w->dims[2 + i],
                     (long long)p->output_pad[i], (long long)o[i]);
            return NNOP_ERR_SHAPE;
        }
    }
    *out = nnop_tensor_4d(x->dtype, nnop__layout_of(x), x->dims[0], k, o[0], o[1]);
    return NNOP_OK;
}

/* Gather form: y[n, k, oh, ow] = sum over c of k's group, r, s with oh = ih * stride - pad +
 * r * dilation (ow alike) of x[n, c, ih, iw] * w[c, k % (K/groups), r, s]. */
static void deconv_reference(const nnop__node *node, const float *const *in,
                             const nnop_tensor_desc *const *in_desc, float *out,
                             const nnop_tensor_desc *out_desc)
{
    const nnop_conv_transpose_params *p = &node->attr.deconv;
    nnop__view4 xv = nnop__view(in_desc[0]), wv = nnop__view(in_desc[1]);
    nnop__view4 yv = nnop__view(out_desc);
    int64_t cg = xv.c / p->groups, kg = wv.c, n, k, oh, ow, c, r, s;
    for (n = 0; n < yv.n; n++)
        for (k = 0; k < yv.c; k++) {
            int64_t c0 = (k / kg) * cg, kk = k % kg;
            for (oh = 0; oh < yv.h; oh++)
                for (ow = 0; ow < yv.w; ow++) {
                    double acc = 0.0;
                    for (r = 0; r < wv.h; r++) {
                        int64_t th = oh + p->pad[0] - r * p->dilation[0], ih = th / p->stride[0];
                        if (th < 0 || th % p->stride[0] != 0 || ih >= xv.h)
                            continue;
                        for (s = 0; s < wv.w; s++) {
                            int64_t tw = ow + p->pad[1] - s * p->dilation[1];
                            int64_t iw = tw / p->stride[1];
                            if (tw < 0 || tw % p->stride[1] != 0 || iw >= xv.w)
                                continue;
                            for (c = c0; c < c0 + cg; c++)
                                acc += (double)in[0][nnop__at(&xv, n, c, ih, iw)] *
                                       (double)in[1][nnop__at(&wv, c, kk, r, s)];
                        }
                    }
                    out[nnop__at(&yv, n, k, oh, ow)] = (float)acc;
                }
        }
}

const nnop__op_def nnop__op_conv_transpose = {"conv_transpose", NNOP_ROLE_PRODUCER, deconv_infer,
                                              deconv_reference};
