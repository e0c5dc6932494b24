/* registry.c: the op table: one line per op kind, filled by the op files. */
#include "internal.h"

extern const nnop__op_def nnop__op_conv;
extern const nnop__op_def nnop__op_bias;
extern const nnop__op_def nnop__op_act;
extern const nnop__op_def nnop__op_batchnorm;
extern const nnop__op_def nnop__op_add;
extern const nnop__op_def nnop__op_pool;
extern const nnop__op_def nnop__op_global_avg_pool;
extern const nnop__op_def nnop__op_flatten;
extern const nnop__op_def nnop__op_linear;
extern const nnop__op_def nnop__op_softmax;

static const nnop__op_def *const op_table[NNOP_OP_KIND_COUNT] = {
        [NNOP_OP_CONV] = &nnop__op_conv,
        [NNOP_OP_BIAS] = &nnop__op_bias,
        [NNOP_OP_ACT] = &nnop__op_act,
        [NNOP_OP_BATCHNORM] = &nnop__op_batchnorm,
        [NNOP_OP_ADD] = &nnop__op_add,
        [NNOP_OP_POOL] = &nnop__op_pool,
        [NNOP_OP_GLOBAL_AVG_POOL] = &nnop__op_global_avg_pool,
        [NNOP_OP_FLATTEN] = &nnop__op_flatten,
        [NNOP_OP_LINEAR] = &nnop__op_linear,
        [NNOP_OP_SOFTMAX] = &nnop__op_softmax,
};

const nnop__op_def *nnop__op(nnop_op_kind k)
{
    if ((int)k < 0 || k >= NNOP_OP_KIND_COUNT)
        return NULL;
    return op_table[k];
}
