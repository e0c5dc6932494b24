/* pointwise.c: bias add, activations (incl. clamp), residual add and the elementwise binary ops
 * mul, sub, div (b the same shape as a, or N,C,1,1 / 1,C,1,1 broadcast over 4-D a). */
#include <math.h>

#include "ops_common.h"

static nnop_status check_channel_param(const nnop_tensor_desc *x, const nnop_tensor_desc *p,
                                       const char *what, char *msg, size_t msg_len)
{
    nnop_status st = nnop__check_nchw_rank(x, msg, msg_len);
    if (st != NNOP_OK)
        return st;
    if (p->ndim != 1 || p->dims[0] != x->dims[1]) {
        NNOP_MSG("wrong channel count: %s must be 1-D with %lld elements (x has C = %lld), "
                 "got %d-D with %lld in dim 0",
                 what, (long long)x->dims[1], (long long)x->dims[1], p->ndim,
                 (long long)p->dims[0]);
        return NNOP_ERR_SHAPE;
    }
    return NNOP_OK;
}

static nnop_status bias_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                              nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    nnop_status st = check_channel_param(in[0], in[1], "bias", msg, msg_len);
    (void)node;
    if (st == NNOP_OK)
        *out = *in[0];
    return st;
}

static void bias_reference(const nnop__node *node, const float *const *in,
                           const nnop_tensor_desc *const *in_desc, float *out,
                           const nnop_tensor_desc *out_desc)
{
    nnop__view4 v = nnop__view(in_desc[0]);
    int64_t n, c, h, w;
    (void)node;
    (void)out_desc;
    for (n = 0; n < v.n; n++)
        for (c = 0; c < v.c; c++)
            for (h = 0; h < v.h; h++)
                for (w = 0; w < v.w; w++) {
                    int64_t i = nnop__at(&v, n, c, h, w);
                    out[i] = in[0][i] + in[1][c];
                }
}

static nnop_status act_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                             nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop__act_attr *a = &node->attr.act;
    if ((int)a->kind < (int)NNOP_ACT_IDENTITY || (int)a->kind > (int)NNOP_ACT_MISH) {
        NNOP_MSG("unknown activation kind %d", (int)a->kind);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (a->kind == NNOP_ACT_CLAMP && !(a->lo <= a->hi)) {
        NNOP_MSG("clamp bounds lo = %g > hi = %g (or NaN)", (double)a->lo, (double)a->hi);
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    if (!isfinite(a->alpha)) {
        NNOP_MSG("activation alpha is not finite");
        return NNOP_ERR_INVALID_ARGUMENT;
    }
    *out = *in[0];
    return NNOP_OK;
}

/* relu6(x + 3) / 6; NaN stays NaN */
static double hard_sigmoid(double x)
{
    return x <= -3.0 ? 0.0 : (x >= 3.0 ? 1.0 : x / 6.0 + 0.5);
}

/* The meaning of each activation, in double precision. */
static double act_value(const nnop__act_attr *a, double x)
{
    const double sqrt_2_over_pi = 0.7978845608028654;
    switch (a->kind) {
    case NNOP_ACT_IDENTITY:
        return x;
    case NNOP_ACT_RELU: /* NaN stays NaN, as in PyTorch */
        return x < 0.0 ? 0.0 : x;
    case NNOP_ACT_RELU6:
        return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x);
    case NNOP_ACT_CLAMP:
        return x < a->lo ? a->lo : (x > a->hi ? a->hi : x);
    case NNOP_ACT_LEAKY_RELU:
        return x > 0.0 ? x : a->alpha * x;
    case NNOP_ACT_GELU:
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case NNOP_ACT_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
    case NNOP_ACT_SIGMOID:
        return 1.0 / (1.0 + exp(-x));
    case NNOP_ACT_TANH:
        return tanh(x);
    case NNOP_ACT_SILU:
        return x / (1.0 + exp(-x));
    case NNOP_ACT_ELU:
        return x > 0.0 ? x : a->alpha * expm1(x); /* exp(x) - 1 would round tiny x to 0 */
    case NNOP_ACT_HARDSWISH:                      /* PyTorch: x * relu6(x + 3) / 6 */
        return x * hard_sigmoid(x);
    case NNOP_ACT_HARDSIGMOID:
        return hard_sigmoid(x);
    case NNOP_ACT_MISH: /* x * tanh(softplus(x)), softplus without overflow */
        return x * tanh((x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x))));
    }
    return x;
}

static void act_reference(const nnop__node *node, const float *const *in,
                          const nnop_tensor_desc *const *in_desc, float *out,
                          const nnop_tensor_desc *out_desc)
{
    int64_t i, count = nnop_tensor_elements(in_desc[0]);
    (void)out_desc;
    for (i = 0; i < count; i++) /* same packed layout in and out */
        out[i] = (float)act_value(&node->attr.act, in[0][i]);
}

static nnop_status add_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                             nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    int i;
    (void)node;
    if (in[0]->ndim != in[1]->ndim) {
        NNOP_MSG("operands have %d and %d dims", in[0]->ndim, in[1]->ndim);
        return NNOP_ERR_SHAPE;
    }
    for (i = 0; i < in[0]->ndim; i++)
        if (in[0]->dims[i] != in[1]->dims[i]) {
            NNOP_MSG("operand shapes differ in dim %d: %lld vs %lld", i, (long long)in[0]->dims[i],
                     (long long)in[1]->dims[i]);
            return NNOP_ERR_SHAPE;
        }
    for (i = 0; i < in[0]->ndim; i++) /* same offsets: dims of 1 may have any stride */
        if (in[0]->dims[i] > 1 && in[0]->strides[i] != in[1]->strides[i]) {
            NNOP_MSG("operand layouts differ (a is %s, b is %s)", nnop__layout_name(in[0]),
                     nnop__layout_name(in[1]));
            return NNOP_ERR_SHAPE;
        }
    *out = *in[0];
    return NNOP_OK;
}

static void add_reference(const nnop__node *node, const float *const *in,
                          const nnop_tensor_desc *const *in_desc, float *out,
                          const nnop_tensor_desc *out_desc)
{
    int64_t i, count = nnop_tensor_elements(in_desc[0]);
    (void)node;
    (void)out_desc;
    for (i = 0; i < count; i++)
        out[i] = in[0][i] + in[1][i];
}

/* a op b: b has a's shape and layout, or a is 4-D N,C,H,W and b is N,C,1,1 or 1,C,1,1. */
static nnop_status binary_infer(const nnop__node *node, const nnop_tensor_desc *const *in,
                                nnop_tensor_desc *out, char *msg, size_t msg_len)
{
    const nnop_tensor_desc *a = in[0], *b = in[1];
    int i, same = a->ndim == b->ndim;
    (void)node;
    for (i = 0; same && i < a->ndim; i++)
        same = a->dims[i] == b->dims[i];
    if (same) {
        for (i = 0; i < a->ndim; i++) /* same offsets: dims of 1 may have any stride */
            if (a->dims[i] > 1 && a->strides[i] != b->strides[i]) {
                NNOP_MSG("operand layouts differ (a is %s, b is %s)", nnop__layout_name(a),
                         nnop__layout_name(b));
                return NNOP_ERR_SHAPE;
            }
        *out = *a;
        return NNOP_OK;
    }
    if (a->ndim == 4 && b->ndim == 4 && b->dims[1] == a->dims[1] && b->dims[2] == 1 &&
        b->dims[3] == 1 && (b->dims[0] == a->dims[0] || b->dims[0] == 1)) {
        *out = *a;
        return NNOP_OK;
    }
    if (a->ndim == 4 && b->ndim == 4 && a->dims[0] == 1)
        NNOP_MSG("b is [%lld,%lld,%lld,%lld] but must be a's shape [1,%lld,%lld,%lld] or "
                 "broadcast as [1,%lld,1,1] (the broadcast operand goes second)",
                 (long long)b->dims[0], (long long)b->dims[1], (long long)b->dims[2],
                 (long long)b->dims[3], (long long)a->dims[1], (long long)a->dims[2],
                 (long long)a->dims[3], (long long)a->dims[1]);
    else if (a->ndim == 4 && b->ndim == 4)
        NNOP_MSG("b is [%lld,%lld,%lld,%lld] but must be a's shape [%lld,%lld,%lld,%lld] or "
                 "broadcast as [%lld,%lld,1,1] or [1,%lld,1,1] (the broadcast operand goes second)",
                 (long long)b->dims[0], (long long)b->dims[1], (long long)b->dims[2],
                 (long long)b->dims[3], (long long)a->dims[0], (long long)a->dims[1],
                 (long long)a->dims[2], (long long)a->dims[3], (long long)a->dims[0],
                 (long long)a->dims[1], (long long)a->dims[1]);
    else if (a->ndim != b->ndim)
        NNOP_MSG("operands have %d and %d dims (b must have a's shape, or N,C,1,1 or 1,C,1,1 "
                 "with a 4-D)",
                 a->ndim, b->ndim);
    else
        for (i = 0; i < a->ndim; i++)
            if (a->dims[i] != b->dims[i]) {
                NNOP_MSG("operand shapes differ in dim %d: %lld vs %lld (only 4-D operands "
                         "broadcast)",
                         i, (long long)a->dims[i], (long long)b->dims[i]);
                break;
            }
    return NNOP_ERR_SHAPE;
}

static double binary_value(nnop_op_kind op, double x, double y)
{
    return op == NNOP_OP_MUL ? x * y : op == NNOP_OP_SUB ? x - y : x / y;
}

static void binary_reference(const nnop__node *node, const float *const *in,
                             const nnop_tensor_desc *const *in_desc, float *out,
                             const nnop_tensor_desc *out_desc)
{
    nnop__view4 av = nnop__view(in_desc[0]), bv = nnop__view(in_desc[1]);
    int64_t n, c, h, w, count = nnop_tensor_elements(in_desc[0]);
    (void)out_desc;
    if (nnop_tensor_elements(in_desc[1]) == count) { /* same shape, same offsets, any rank */
        for (n = 0; n < count; n++)
            out[n] = (float)binary_value(node->op, in[0][n], in[1][n]);
        return;
    }
    if (bv.n == 1) /* a broadcast dim reads index 0 */
        bv.sn = 0;
    if (bv.h == 1)
        bv.sh = 0;
    if (bv.w == 1)
        bv.sw = 0;
    for (n = 0; n < av.n; n++)
        for (c = 0; c < av.c; c++)
            for (h = 0; h < av.h; h++)
                for (w = 0; w < av.w; w++) {
                    int64_t i = nnop__at(&av, n, c, h, w);
                    out[i] = (float)binary_value(node->op, in[0][i],
                                                 in[1][nnop__at(&bv, n, c, h, w)]);
                }
}

const nnop__op_def nnop__op_bias = {"bias", NNOP_ROLE_EPILOGUE, bias_infer, bias_reference};
const nnop__op_def nnop__op_act = {"act", NNOP_ROLE_EPILOGUE, act_infer, act_reference};
const nnop__op_def nnop__op_add = {"add", NNOP_ROLE_EPILOGUE, add_infer, add_reference};
const nnop__op_def nnop__op_mul = {"mul", NNOP_ROLE_EPILOGUE, binary_infer, binary_reference};
const nnop__op_def nnop__op_sub = {"sub", NNOP_ROLE_EPILOGUE, binary_infer, binary_reference};
const nnop__op_def nnop__op_div = {"div", NNOP_ROLE_EPILOGUE, binary_infer, binary_reference};
