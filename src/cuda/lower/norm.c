/* norm.c: a normalization as cuDNN's norm-forward operation, inference phase: layer norm and
 * RMS norm over C as rows of C contiguous channels ([N*H*W, C, 1, 1], cuDNN normalizing
 * every dim but the first), layer norm over C, H, W as the tensor itself; float32 scale and
 * bias, epsilon by value; the epilogue chain after it as pointwise operations on the same
 * view (a virtual FLOAT tensor between). */
#include <string.h>

#include "cuda/lower/lower_parts.h"
#include "platform/platform.h"

static int over_c(const nnop__node *n)
{
    return n->op == NNOP_OP_RMS_NORM || n->attr.norm.axes == NNOP_NORM_C;
}

/* The view cuDNN normalizes (every dim but the first). */
static void norm_view(const nnop__node *n, const nnop_tensor_desc *x, int64_t *xd, int64_t *xs)
{
    int i;
    if (over_c(n)) {
        xd[0] = x->dims[0] * x->dims[2] * x->dims[3], xd[1] = x->dims[1], xd[2] = xd[3] = 1;
        xs[0] = x->dims[1], xs[1] = 1, xs[2] = xs[3] = x->dims[1];
        return;
    }
    for (i = 0; i < 4; i++)
        xd[i] = x->dims[i], xs[i] = x->strides[i];
}

/* A parameter (scale or bias) as a FLOAT tensor: per element over C, H, W in its own strides,
 * or per channel (a row of the over-C view, or [1, C, 1, 1]). */
static nnop_status param_tensor(nnop_plan *p, const nnop__node *n, nnop__dnn_step *s,
                                const nnop_tensor_desc *d, int32_t slot,
                                cudnnBackendDescriptor_t *out)
{
    int64_t c = d->ndim == 4 ? d->dims[1] : d->dims[0], cd[4] = {1, c, 1, 1}, cs[4] = {c, 1, 1, 1};
    if (d->ndim == 4 && !over_c(n))
        return nnop__lower_tensor(p->ctx, s, 4, d->dims, d->strides, NNOP_F32, slot, out);
    if (over_c(n))
        cs[2] = cs[3] = c;
    return nnop__lower_tensor(p->ctx, s, 4, cd, cs, NNOP_F32, slot, out);
}

nnop_status nnop__lower_norm(nnop_plan *p, int32_t node, int32_t x_slot, int32_t scale_slot,
                             int32_t bias_slot, const nnop__chain *epi, nnop__dnn_step *s)
{
    nnop_context *ctx = p->ctx;
    const nnop__node *n = &p->g->nodes[node];
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    cudnnBackendNormMode_t mode = n->op == NNOP_OP_RMS_NORM ? CUDNN_RMS_NORM : CUDNN_LAYER_NORM;
    cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_INFERENCE;
    cudnnBackendDescriptor_t xt = NULL, yt = NULL, sc = NULL, bi = NULL, ep = NULL, op = NULL;
    int64_t xd[4], xs[4];
    const int fused = epi && epi->n_ops > 0;
    const nnop__attr attrs[] = {
            NNOP_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, 1, &mode),
            NNOP_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, 1, &phase),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, &xt),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, &sc),
            NNOP_ATTR(CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                      bias_slot >= 0 ? 1 : 0, &bi),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, &ep),
            NNOP_ATTR_DESC(CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, &yt)};
    nnop_status st;
    norm_view(n, x, xd, xs);
    nnop__fp_init(&s->fpb);
    nnop__fp_add_str(&s->fpb, "nnop-dnn/norm/v1");
    nnop__fp_add_i64(&s->fpb, (int64_t)mode);
    s->fp32 = x->dtype == NNOP_F32;
    st = nnop__lower_tensor(ctx, s, 4, xd, xs, x->dtype, x_slot, &xt);
    if (st == NNOP_OK)
        st = param_tensor(p, n, s, &p->g->values[n->in[1]].desc, scale_slot, &sc);
    if (st == NNOP_OK && bias_slot >= 0)
        st = param_tensor(p, n, s, &p->g->values[n->in[2]].desc, bias_slot, &bi);
    if (st == NNOP_OK)
        st = nnop__lower_scalar(ctx, s, n->attr.norm.eps, &ep);
    if (st == NNOP_OK)
        st = nnop__lower_tensor(ctx, s, 4, xd, xs, x->dtype, fused ? -1 : n->out, &yt);
    /* cuDNN's one norm-forward engine on sm_90 is runtime-compiled and took 389.9 us for a
     * layer norm the own kernel does in 29.3 us (f16 NHWC 64x96x56x56, H200, bench_kernels):
     * precompiled engines only, else the own kernel with this refusal as its reason */
    /* cuDNN's runtime-compiled norm engines: options.norm_rtc or NNOP_NORM_RTC=1 (nnop.h) */
    s->rtc_unsafe = nnop__norm_rtc(ctx) ? 0 : NNOP_RTC_NORM;
    if (st == NNOP_OK)
        st = nnop__dnn_create(ctx, s, CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, &op);
    if (st == NNOP_OK)
        st = nnop__dnn_set_all(ctx, op, attrs, NNOP_COUNT(attrs), "norm forward operation");
    if (st == NNOP_OK)
        st = nnop__dnn_add_op(ctx, s, op);
    return st == NNOP_OK && fused ? nnop__lower_epilogue_chain(p, epi, s, 4, xd, xs, x->dtype, yt)
                                  : st;
}
