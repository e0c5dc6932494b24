/* linear.c: fully connected layer y = x w^T + b. */
#include "ops_common.h"

static nnop_status linear_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *x = in[0], *w = in[1], *b = in[2];
    (void)node;
    if (x->ndim != 2 || w->ndim != 2) {
        NNOP_MSG("x and w must be 2-D (x is %d-D, w is %d-D; use nnop_flatten)", x->ndim, w->ndim);
        return NNOP_ERR_SHAPE;
    }
    if (w->dims[1] != x->dims[1]) {
        NNOP_MSG("wrong input features: w is %lld x %lld but x has %lld features",
                 (long long)w->dims[0], (long long)w->dims[1], (long long)x->dims[1]);
        return NNOP_ERR_SHAPE;
    }
    if (b && (b->ndim != 1 || b->dims[0] != w->dims[0])) {
        NNOP_MSG("bias must be 1-D with %lld elements", (long long)w->dims[0]);
        return NNOP_ERR_SHAPE;
    }
    *out = nnop_tensor_2d(x->dtype, x->dims[0], w->dims[0]);
    return NNOP_OK;
}

static void linear_reference(const nnop__node *node, const float *const *in,
                             const nnop_tensor_desc *const *in_desc, float *out,
                             const nnop_tensor_desc *out_desc)
{
    int64_t rows = in_desc[0]->dims[0], k = in_desc[0]->dims[1], cols = in_desc[1]->dims[0];
    int64_t i, j, t;
    (void)node;
    (void)out_desc;
    for (i = 0; i < rows; i++)
        for (j = 0; j < cols; j++) {
            double acc = in[2] ? in[2][j] : 0.0;
            for (t = 0; t < k; t++)
                acc += (double)in[0][i * k + t] * (double)in[1][j * k + t];
            out[i * cols + j] = (float)acc;
        }
}

const nnop__op_def nnop__op_linear = {"linear", NNOP_ROLE_PRODUCER, linear_infer, linear_reference};
