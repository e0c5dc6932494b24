/* pointwise.c: epilogue operations after a producer as cuDNN pointwise nodes: bias,
 * scale+shift, residual add, activations (plain ReLU keeps its upper clip unset). Activations
 * without a cuDNN mode (hard-swish, hard-sigmoid, mish) and multiplies, subtracts and divides by
 * a tensor are refused: the cuDNN prefix entry splits them off to the own epilogue kernel. */
#include <stdlib.h>

#include "cuda/lower/lower_parts.h"

typedef struct act_map {
    int act;
    cudnnPointwiseMode_t mode;
} act_map;

static const act_map act_modes[] = {
        {NNOP_ACT_RELU, CUDNN_POINTWISE_RELU_FWD},
        {NNOP_ACT_RELU6, CUDNN_POINTWISE_RELU_FWD},
        {NNOP_ACT_CLAMP, CUDNN_POINTWISE_RELU_FWD},
        {NNOP_ACT_LEAKY_RELU, CUDNN_POINTWISE_RELU_FWD},
        {NNOP_ACT_GELU, CUDNN_POINTWISE_GELU_FWD},
        {NNOP_ACT_GELU_TANH, CUDNN_POINTWISE_GELU_APPROX_TANH_FWD},
        {NNOP_ACT_SIGMOID, CUDNN_POINTWISE_SIGMOID_FWD},
        {NNOP_ACT_TANH, CUDNN_POINTWISE_TANH_FWD},
        {NNOP_ACT_SILU, CUDNN_POINTWISE_SWISH_FWD},
        {NNOP_ACT_ELU, CUDNN_POINTWISE_ELU_FWD},
};

/* The double-valued parameters of an activation: relu clips and slope, elu alpha, swish
 * beta. Returns how many were filled. */
static int act_params(const nnop__act_attr *a, cudnnBackendAttributeName_t *names, double *v)
{
    switch (a->kind) {
    case NNOP_ACT_RELU6:
        names[0] = CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, v[0] = 0.0;
        names[1] = CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, v[1] = 6.0;
        return 2;
    case NNOP_ACT_CLAMP:
        names[0] = CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, v[0] = a->lo;
        names[1] = CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, v[1] = a->hi;
        return 2;
    case NNOP_ACT_LEAKY_RELU:
        names[0] = CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, v[0] = 0.0;
        names[1] = CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, v[1] = a->alpha;
        return 2;
    case NNOP_ACT_ELU:
        names[0] = CUDNN_ATTR_POINTWISE_ELU_ALPHA, v[0] = a->alpha;
        return 1;
    case NNOP_ACT_SILU:
        names[0] = CUDNN_ATTR_POINTWISE_SWISH_BETA, v[0] = 1.0;
        return 1;
    default:
        return 0; /* plain ReLU: lower clip 0 by default, upper clip unset */
    }
}

static nnop_status pw_desc(nnop_context *ctx, nnop__dnn_step *s, cudnnPointwiseMode_t mode,
                           const nnop__act_attr *a, cudnnBackendDescriptor_t *out)
{
    cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendAttributeName_t names[2];
    double v[2];
    int i, n = a ? act_params(a, names, v) : 0;
    nnop_status st;
    /* seen by the differential tester: fused engines drop a nonzero lower clip, and compute
     * leaky ReLU as max(x, alpha x), which is another function for alpha > 1 */
    if (a && a->kind == NNOP_ACT_CLAMP && a->lo != 0.0f)
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED,
                          "clamp with lo = %g: fused cuDNN engines ignore a nonzero lower clip",
                          (double)a->lo);
    if (a && a->kind == NNOP_ACT_LEAKY_RELU && a->alpha > 1.0f)
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED,
                          "leaky ReLU with alpha = %g > 1: cuDNN computes max(x, alpha x)",
                          (double)a->alpha);
    st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, out);
    if (st == NNOP_OK)
        st = NNOP_DNN_SET(ctx, *out, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1,
                          &mode);
    if (st == NNOP_OK)
        st = NNOP_DNN_SET(ctx, *out, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1,
                          &prec);
    nnop__fp_add_str(&s->fpb, "pointwise");
    nnop__fp_add_i64(&s->fpb, (int64_t)mode);
    for (i = 0; i < n; i++) {
        nnop__fp_add_i64(&s->fpb, (int64_t)names[i]);
        nnop__fp_add_bytes(&s->fpb, &v[i], sizeof v[i]);
    }
    for (i = 0; i < n && st == NNOP_OK; i++)
        st = nnop__dnn_set(ctx, *out, names[i], "CUDNN_ATTR_POINTWISE_<activation parameter>",
                           CUDNN_TYPE_DOUBLE, 1, &v[i], __FILE__, __LINE__);
    if (st == NNOP_OK)
        st = nnop__dnn_finalize(ctx, *out, "pointwise");
    return st;
}

/* One pointwise node y = mode(x[, b]). */
static nnop_status pw_op(nnop_context *ctx, nnop__dnn_step *s, cudnnPointwiseMode_t mode,
                         const nnop__act_attr *a, cudnnBackendDescriptor_t x,
                         cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t pd = NULL, op = NULL;
    const nnop__attr attrs[] = {NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, &pd),
                                NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, &x),
                                NNOP_ATTR(CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
                                          CUDNN_TYPE_BACKEND_DESCRIPTOR, b ? 1 : 0,
                                          &b), /* binary modes only */
                                NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, &y)};
    nnop_status st = pw_desc(ctx, s, mode, a, &pd);
    if (st == NNOP_OK)
        st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, &op);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, op, attrs, NNOP_COUNT(attrs), "pointwise operation");
    if (st == NNOP_OK && s->n_ops >= NNOP_STEP_MAX_OPS)
        st = nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "lowering: too many operations");
    if (st == NNOP_OK)
        s->ops[s->n_ops++] = op;
    return st;
}

/* A per-channel operand: [1, K, 1, 1] with strides [K, 1, K, K] (NHWC) or [K, 1, 1, 1]
 * (NCHW) for 4-D views, [1, 1, K] with strides [K, K, 1] for the 3-D matmul view. */
static nnop_status channel_tensor(nnop_plan *p, nnop__dnn_step *s, int ndim, const int64_t *vdims,
                                  const int64_t *vstrides, nnop_dtype dt, int32_t slot,
                                  cudnnBackendDescriptor_t *out)
{
    int64_t d[4] = {1, 1, 1, 1}, st[4] = {1, 1, 1, 1};
    if (ndim == 4) {
        int64_t K = vdims[1];
        d[1] = K;
        st[0] = K;
        if (vstrides[1] == 1)
            st[2] = K, st[3] = K;
    } else {
        int64_t K = vdims[ndim - 1];
        d[ndim - 1] = K;
        st[0] = K, st[1] = K;
    }
    return nnop__lower_tensor(p->ctx, s, ndim, d, st, dt, slot, out);
}

/* Device slot of a chain op's per-channel operand i: the uploaded constant or the runtime
 * value. */
static nnop_status operand_slot(nnop_plan *p, const nnop__chain *c, const nnop__chain_op *o, int i,
                                int32_t *slot)
{
    size_t bytes = (size_t)c->channels * nnop_dtype_size(o->dtype);
    void *buf;
    nnop_status st;
    if (!o->host[i]) {
        *slot = o->slot[i];
        return NNOP_OK;
    }
    buf = malloc(bytes);
    if (!buf)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "lowering: out of memory");
    nnop__from_f32(o->dtype, o->host[i], buf, c->channels);
    st = nnop__slot_upload_const(p, "constant", buf, bytes, slot);
    free(buf);
    return st;
}

static nnop_status channel_op(nnop_plan *p, const nnop__chain *c, const nnop__chain_op *o, int i,
                              cudnnPointwiseMode_t mode, nnop__dnn_step *s, int ndim,
                              const int64_t *dims, const int64_t *strides,
                              cudnnBackendDescriptor_t in, cudnnBackendDescriptor_t out)
{
    cudnnBackendDescriptor_t b = NULL;
    int32_t slot = -1;
    nnop_status st = operand_slot(p, c, o, i, &slot);
    if (st == NNOP_OK)
        st = channel_tensor(p, s, ndim, dims, strides, o->dtype, slot, &b);
    if (st == NNOP_OK)
        st = pw_op(p->ctx, s, mode, NULL, in, b, out);
    return st;
}

static cudnnPointwiseMode_t act_mode(int act)
{
    size_t i;
    for (i = 0; i < sizeof act_modes / sizeof act_modes[0]; i++)
        if (act_modes[i].act == act)
            return act_modes[i].mode;
    return CUDNN_POINTWISE_IDENTITY;
}

/* The activations act_modes lacks, by name (for the refusal that splits them off). */
static const char *modeless_name(int act)
{
    return act == NNOP_ACT_HARDSWISH     ? "hard-swish"
           : act == NNOP_ACT_HARDSIGMOID ? "hard-sigmoid"
           : act == NNOP_ACT_MISH        ? "mish"
                                         : "(unknown)";
}

nnop_status nnop__lower_epilogue_chain(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s,
                                       int ndim, const int64_t *dims, const int64_t *strides,
                                       nnop_dtype dt, cudnnBackendDescriptor_t in)
{
    cudnnBackendDescriptor_t cur = in, next = NULL;
    nnop_status st = NNOP_OK;
    int k;
    for (k = 0; k < c->n_ops && st == NNOP_OK; k++) {
        st = nnop__lower_tensor(p->ctx, s, ndim, dims, strides, dt,
                                k + 1 == c->n_ops ? c->out_value : -1, &next);
        if (st == NNOP_OK)
            st = nnop__lower_epilogue_op(p, c, k, s, ndim, dims, strides, cur, next);
        cur = next;
    }
    return st;
}

nnop_status nnop__lower_epilogue_op(nnop_plan *p, const nnop__chain *c, int k, nnop__dnn_step *s,
                                    int ndim, const int64_t *dims, const int64_t *strides,
                                    cudnnBackendDescriptor_t in, cudnnBackendDescriptor_t out)
{
    const nnop__chain_op *o = &c->ops[k];
    cudnnBackendDescriptor_t mid = NULL, z = NULL;
    nnop_status st = NNOP_OK;
    switch (o->kind) {
    case NNOP_EPI_BIAS:
        return channel_op(p, c, o, 0, CUDNN_POINTWISE_ADD, s, ndim, dims, strides, in, out);
    case NNOP_EPI_SCALE_SHIFT:
        st = nnop__lower_tensor(p->ctx, s, ndim, dims, strides, NNOP_F32, -1, &mid);
        if (st == NNOP_OK)
            st = channel_op(p, c, o, 0, CUDNN_POINTWISE_MUL, s, ndim, dims, strides, in, mid);
        if (st == NNOP_OK)
            st = channel_op(p, c, o, 1, CUDNN_POINTWISE_ADD, s, ndim, dims, strides, mid, out);
        return st;
    case NNOP_EPI_ADD:
        st = nnop__lower_tensor(p->ctx, s, ndim, dims, strides, o->dtype, o->slot[0], &z);
        return st == NNOP_OK ? pw_op(p->ctx, s, CUDNN_POINTWISE_ADD, NULL, in, z, out) : st;
    case NNOP_EPI_ACT:
        if (act_mode(o->act.kind) == CUDNN_POINTWISE_IDENTITY)
            return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                              "activation %s has no cuDNN pointwise mode",
                              modeless_name(o->act.kind));
        return pw_op(p->ctx, s, act_mode(o->act.kind), &o->act, in, NULL, out);
    case NNOP_EPI_MUL:
    case NNOP_EPI_SUB:
    case NNOP_EPI_DIV:
        return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                          "%s by a tensor is not lowered to cuDNN (a constant 1,C,1,1 multiply or "
                          "subtract folds; fused engines with a second tensor operand are not "
                          "tried)",
                          o->kind == NNOP_EPI_MUL   ? "multiply"
                          : o->kind == NNOP_EPI_SUB ? "subtract"
                                                    : "divide");
    default:
        return nnop__fail(p->ctx, NNOP_ERR_UNSUPPORTED,
                          "batch-norm with runtime (non-constant) parameters is not lowered to "
                          "cuDNN");
    }
}
