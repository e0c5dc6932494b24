/* lower.c: a canonical chain as one cuDNN operation graph: the producer output's view, the
 * producer (conv.c) and each epilogue op (pointwise.c) between real tensors at the partition
 * boundary and virtual FLOAT ones inside, and the first words of the step's fingerprint. */
#include "cuda/lower/lower.h"

/* The producer output's view: 4-D conv output, or [1, N, OUT] for a linear layer. */
static void producer_view(const nnop_plan *p, const nnop__chain *c, int *ndim, int64_t *dims,
                          int64_t *strides)
{
    const nnop_tensor_desc *d = &p->g->values[c->mid_value].desc;
    int i;
    if (p->g->nodes[c->producer].op == NNOP_OP_LINEAR) {
        *ndim = 3;
        dims[0] = 1, dims[1] = d->dims[0], dims[2] = d->dims[1];
        strides[0] = d->dims[0] * d->dims[1], strides[1] = d->dims[1], strides[2] = 1;
        return;
    }
    *ndim = d->ndim;
    for (i = 0; i < d->ndim; i++) {
        dims[i] = d->dims[i];
        strides[i] = d->strides[i];
    }
}

nnop_status nnop__lower_chain(nnop_plan *p, const nnop__chain *c, nnop__dnn_step *s)
{
    nnop_context *ctx = p->ctx;
    int64_t dims[NNOP_MAX_DIMS], strides[NNOP_MAX_DIMS];
    int ndim, is_linear = p->g->nodes[c->producer].op == NNOP_OP_LINEAR;
    nnop_dtype out_dt = p->g->values[c->out_value].desc.dtype;
    cudnnBackendDescriptor_t cur = NULL;
    nnop_status st;
    producer_view(p, c, &ndim, dims, strides);
    nnop__fp_init(&s->fpb);
    nnop__fp_add_str(&s->fpb, is_linear ? "nnop-dnn/matmul/v1" : "nnop-dnn/conv/v1");
    s->is_conv = !is_linear;
    s->fp32 = out_dt == NNOP_F32;
    st = nnop__lower_tensor(ctx, s, ndim, dims, strides, out_dt, c->n_ops ? -1 : c->out_value,
                            &cur);
    if (st == NNOP_OK)
        st = is_linear ? nnop__lower_matmul(p, c, s, cur) : nnop__lower_conv(p, c, s, cur);
    return st == NNOP_OK ? nnop__lower_epilogue_chain(p, c, s, ndim, dims, strides, out_dt, cur)
                         : st;
}
