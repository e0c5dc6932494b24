/* batchnorm.c: inference batch-norm over dim 1 with running statistics. */
#include <math.h>

#include "ops_common.h"

static nnop_status bn_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                            nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    static const char *const names[] = {"x", "gamma", "beta", "mean", "var"};
    const nnop_tensor_desc *x = in[0];
    int i;
    if (!(node->attr.eps >= 0.0f) || !isfinite(node->attr.eps)) {
        NNOP_MSG("eps = %g must be a finite value >= 0", (double)node->attr.eps);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (nnop__check_nchw_rank(x, msg, msg_len) != NNOP_OK)
        return NNOP_ERR_SHAPE;
    for (i = 1; i < 5; i++)
        if (in[i]->ndim != 1 || in[i]->dims[0] != x->dims[1]) {
            NNOP_MSG("wrong channel count: %s must be 1-D with C = %lld elements", names[i],
                     (long long)x->dims[1]);
            return NNOP_ERR_SHAPE;
        }
    *out = *x;
    return NNOP_OK;
}

static void bn_reference(const nnop__node *node, const float *const *in,
                         const nnop_tensor_desc *const *in_desc, float *out,
                         const nnop_tensor_desc *out_desc)
{
    nnop__view4 v = nnop__view(in_desc[0]);
    int64_t n, c, h, w;
    (void)out_desc;
    for (c = 0; c < v.c; c++) {
        double scale = in[1][c] / sqrt((double)in[4][c] + node->attr.eps);
        double shift = in[2][c] - in[3][c] * scale;
        for (n = 0; n < v.n; n++)
            for (h = 0; h < v.h; h++)
                for (w = 0; w < v.w; w++) {
                    int64_t i = nnop__at(&v, n, c, h, w);
                    out[i] = (float)(in[0][i] * scale + shift);
                }
    }
}

const nnop__op_def nnop__op_batchnorm = {"batchnorm", NNOP_ROLE_EPILOGUE, bn_infer, bn_reference};
