/* reshape.c: flatten N,C,H,W to N, C*H*W in logical order (torch.flatten(x, 1)). */
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
