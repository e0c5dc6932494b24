/* reshape.c: the ops that move elements without arithmetic: flatten N,C,H,W to N, C*H*W in
 * logical order (torch.flatten(x, 1)), the channel shuffle (nn.ChannelShuffle) and the channel
 * slice (x[:, a:b]). */
#include "ops_common.h"

static nnop_status flatten_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                 nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x = in[0];
    nnop__view4 v = nnop__view(x);
    (void)node;
    if (nnop__check_nchw_rank(x, msg, msg_len) != NNOP_OK)
        return NNOP_ERR_SHAPE;
    *out = nnop_tensor_2d(x->dtype, v.n, v.c * v.h * v.w);
    return NNOP_OK;
}

static void flatten_reference(const nnop__node *node, const float *const *in,
                              const nnop_tensor_desc *const *in_desc, float *out,
                              const nnop_tensor_desc *out_desc)
{
    nnop__view4 v = nnop__view(in_desc[0]);
    int64_t n, c, h, w, o = 0;
    (void)node;
    (void)out_desc;
    for (n = 0; n < v.n; n++)
        for (c = 0; c < v.c; c++)
            for (h = 0; h < v.h; h++)
                for (w = 0; w < v.w; w++)
                    out[o++] = in[0][nnop__at(&v, n, c, h, w)];
}

const nnop__op_def nnop__op_flatten = {"flatten", NNOP_ROLE_STANDALONE, flatten_infer,
                                       flatten_reference};

static nnop_status shuffle_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                 nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x = in[0];
    int64_t groups = node->attr.shuffle_groups;
    if (x->ndim != 4) {
        NNOP_MSG("x must be 4-D (is %d-D)", x->ndim);
        return NNOP_ERR_SHAPE;
    }
    if (groups < 1) {
        NNOP_MSG("groups = %lld must be >= 1", (long long)groups);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (x->dims[1] % groups != 0) {
        NNOP_MSG("groups = %lld does not divide C = %lld", (long long)groups,
                 (long long)x->dims[1]);
        return NNOP_ERR_SHAPE;
    }
    *out = nnop_tensor_4d(x->dtype, nnop__layout_of(x), x->dims[0], x->dims[1], x->dims[2],
                          x->dims[3]);
    return NNOP_OK;
}

/* y[:, j * groups + i] = x[:, i * (C / groups) + j] */
static void shuffle_reference(const nnop__node *node, const float *const *in,
                              const nnop_tensor_desc *const *in_desc, float *out,
                              const nnop_tensor_desc *out_desc)
{
    nnop__view4 xv = nnop__view(in_desc[0]), yv = nnop__view(out_desc);
    const int64_t groups = node->attr.shuffle_groups, per = xv.c / groups;
    int64_t n, c, h, w;
    for (n = 0; n < xv.n; n++)
        for (c = 0; c < xv.c; c++) {
            int64_t yc = (c % per) * groups + c / per;
            for (h = 0; h < xv.h; h++)
                for (w = 0; w < xv.w; w++)
                    out[nnop__at(&yv, n, yc, h, w)] = in[0][nnop__at(&xv, n, c, h, w)];
        }
}

const nnop__op_def nnop__op_channel_shuffle = {"channel_shuffle", NNOP_ROLE_STANDALONE,
                                               shuffle_infer, shuffle_reference};

static nnop_status slice_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                               nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x = in[0];
    int64_t start = node->attr.slice[0], count = node->attr.slice[1];
    if (x->ndim != 4) {
        NNOP_MSG("x must be 4-D (is %d-D)", x->ndim);
        return NNOP_ERR_SHAPE;
    }
    if (start < 0 || count < 1 || start > x->dims[1] - count) {
        NNOP_MSG("start %lld, count %lld: not channels of C = %lld (start >= 0, count >= 1, "
                 "start + count <= C)",
                 (long long)start, (long long)count, (long long)x->dims[1]);
        return NNOP_ERR_SHAPE;
    }
    *out = nnop_tensor_4d(x->dtype, nnop__layout_of(x), x->dims[0], count, x->dims[2], x->dims[3]);
    return NNOP_OK;
}

static void slice_reference(const nnop__node *node, const float *const *in,
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
                            in[0][nnop__at(&xv, n, c + node->attr.slice[0], h, w)];
}

const nnop__op_def nnop__op_channel_slice = {"channel_slice", NNOP_ROLE_STANDALONE, slice_infer,
                                             slice_reference};
