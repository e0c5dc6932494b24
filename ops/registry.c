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
extern const nnop__op_def nnop__op_mul;
extern const nnop__op_def nnop__op_sub;
extern const nnop__op_def nnop__op_div;
extern const nnop__op_def nnop__op_layer_norm;
extern const nnop__op_def nnop__op_group_norm;
extern const nnop__op_def nnop__op_rms_norm;
extern const nnop__op_def nnop__op_concat;
extern const nnop__op_def nnop__op_resize;
extern const nnop__op_def nnop__op_conv_transpose;
extern const nnop__op_def nnop__op_lrn;
extern const nnop__op_def nnop__op_channel_shuffle;
extern const nnop__op_def nnop__op_channel_slice;

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
        [NNOP_OP_MUL] = &nnop__op_mul,
        [NNOP_OP_SUB] = &nnop__op_sub,
        [NNOP_OP_DIV] = &nnop__op_div,
        [NNOP_OP_LAYER_NORM] = &nnop__op_layer_norm,
        [NNOP_OP_GROUP_NORM] = &nnop__op_group_norm,
        [NNOP_OP_RMS_NORM] = &nnop__op_rms_norm,
        [NNOP_OP_CONCAT] = &nnop__op_concat,
        [NNOP_OP_RESIZE] = &nnop__op_resize,
        [NNOP_OP_CONV_TRANSPOSE] = &nnop__op_conv_transpose,
        [NNOP_OP_LRN] = &nnop__op_lrn,
        [NNOP_OP_CHANNEL_SHUFFLE] = &nnop__op_channel_shuffle,
        [NNOP_OP_CHANNEL_SLICE] = &nnop__op_channel_slice,
};

const nnop__op_def *nnop__op(nnop_op_kind k)
{
    if ((int)k < 0 || k >= NNOP_OP_KIND_COUNT)
        return NULL;
    return op_table[k];
}
