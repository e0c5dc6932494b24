/* onnx_ops.c: the table from an ONNX op type to its converter (onnx_conv.c, onnx_norm.c,
 * ...), and the dispatch of a node to it. */
#include <string.h>

#include "onnx_internal.h"

typedef nnop_status (*ox_op_fn)(ox_ctx *ox, const Onnx__NodeProto *n);

/* ---------------------------------------------------------------- the table */
typedef struct ox_op {
    const char *name;
    ox_op_fn fn;
} ox_op;

static const ox_op ops[] = {
        {"Add", ox_op_binary},
        {"AveragePool", ox_op_pool},
        {"BatchNormalization", ox_op_batchnorm},
        {"Cast", ox_op_cast},
        {"Clip", ox_op_clip},
        {"Concat", ox_op_concat},
        {"Constant", ox_op_constant},
        {"ConstantOfShape", ox_op_constant_of_shape},
        {"Conv", ox_op_conv},
        {"ConvTranspose", ox_op_conv_transpose},
        {"Div", ox_op_binary},
        {"Dropout", ox_op_dropout},
        {"Elu", ox_op_act},
        {"Erf", ox_op_erf},
        {"Flatten", ox_op_flatten},
        {"Gather", ox_op_gather},
        {"Gelu", ox_op_act},
        {"Gemm", ox_op_gemm},
        {"GlobalAveragePool", ox_op_global_pool},
        {"GlobalMaxPool", ox_op_global_pool},
        {"GroupNormalization", ox_op_group_norm},
        {"HardSigmoid", ox_op_act},
        {"HardSwish", ox_op_act},
        {"Identity", ox_op_identity},
        {"InstanceNormalization", ox_op_instance_norm},
        {"LRN", ox_op_lrn},
        {"LayerNormalization", ox_op_layer_norm},
        {"LeakyRelu", ox_op_act},
        {"MatMul", ox_op_gemm},
        {"MaxPool", ox_op_pool},
        {"Mish", ox_op_act},
        {"Mul", ox_op_binary},
        {"PRelu", ox_op_prelu},
        {"Pad", ox_op_pad},
        {"Range", ox_op_range},
        {"ReduceMean", ox_op_reduce_mean},
        {"Relu", ox_op_act},
        {"Reshape", ox_op_reshape},
        {"Resize", ox_op_resize},
        {"Selu", ox_op_act},
        {"Shape", ox_op_shape},
        {"Sigmoid", ox_op_act},
        {"Slice", ox_op_slice},
        {"Softmax", ox_op_softmax},
        {"Split", ox_op_split},
        {"Squeeze", ox_op_squeeze},
        {"Sub", ox_op_binary},
        {"Sum", ox_op_sum},
        {"Tanh", ox_op_act},
        {"Transpose", ox_op_transpose},
        {"Unsqueeze", ox_op_squeeze},
        {"Upsample", ox_op_resize},
};

static const ox_op *find_op(const char *name)
{
    size_t k;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp(ops[k].name, name) == 0)
            return &ops[k];
    return NULL;
}

int ox_op_known(const char *op_type)
{
    return op_type && find_op(op_type) != NULL;
}

/* Each view an importer tensor can be (ox_tensor) is read only by the converters that take it
 * apart: why input t of a node converted by fn is refused for view kind (0 flattened, 1
 * padded, 2 channel shuffle's), or NULL. The channels-last view is checked in onnx_view.c. */
static const char *view_refusal(const ox_tensor *t, ox_op_fn fn, int kind)
{
    if (!t || t->kind != OX_VALUE)
        return NULL;
    if (kind == 0 && t->view_flat && fn != ox_op_reshape && fn != ox_op_gather)
        return "is a flattened (1-D) view of a value (nnop takes it only back to its shape: a "
               "Reshape, or a Gather of every element in order)";
    if (kind == 1 && t->view_padded && fn != ox_op_conv && fn != ox_op_pool && fn != ox_op_pad)
        return "is made by a Pad (nnop has no pad operator: it folds a zero Pad into the Conv or "
               "count_include_pad AveragePool that reads it)";
    if (kind == 2 && t->view_groups && fn != ox_op_reshape && fn != ox_op_transpose)
        return "is a 5-D view of a 4-D value (nnop takes it only as the middle of a channel "
               "shuffle: Reshape, Transpose, Reshape)";
    return NULL;
}

static nnop_status check_views(ox_ctx *ox, const Onnx__NodeProto *n, const ox_op *op)
{
    size_t k;
    int kind;
    for (kind = 0; kind < 3; kind++)
        for (k = 0; k < n->n_input; k++) {
            const ox_tensor *t = ox_in(ox, n, k);
            const char *why = view_refusal(t, op->fn, kind);
            if (why)
                return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "input '%s' %s", t->name, why);
        }
    return NNOP_OK;
}

nnop_status ox_convert_node(ox_ctx *ox, const Onnx__NodeProto *n)
{
    const ox_op *op = find_op(n->op_type ? n->op_type : "");
    nnop_status s;
    if (!op)
        return ox_fail(ox, NNOP_ERR_UNSUPPORTED, "operator not supported by nnop's importer");
    if ((s = check_views(ox, n, op)) != NNOP_OK)
        return s;
    return ox_reads_view(ox, n) ? ox_convert_on_views(ox, n, op->fn) : op->fn(ox, n);
}
