/* deconv.c: the implementation-list entry for the transposed convolutions cuDNN's
 * data-gradient convolution (cudnn.c) did not take: the own gather kernel (kernels/deconv.cu)
 * runs the convolution, and the rest of the partition (bias, batch-norm, activation) is split
 * off to the own epilogue kernel. */
#include <stdio.h>

#include "cuda/impl/impl.h"

static int deconv_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (p->g->nodes[t->first].op != NNOP_OP_CONV_TRANSPOSE) {
        *why_not = "not a transposed convolution";
        return 0;
    }
    return 1;
}

static nnop_status deconv_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_conv_transpose_params *cp = &n->attr.deconv;
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    nnop__deconv_kparams *k = &st->dc;
    nnop_status r = nnop__slot_value(p, n->in[0], &st->x_slot);
    if (r == NNOP_OK)
        r = nnop__slot_value(p, n->in[1], &st->w_slot);
    if (r != NNOP_OK)
        return r;
    st->kind = NNOP_STEP_DECONV;
    st->y_slot = n->out;
    k->dtype = (int)x->dtype;
    k->xv = nnop__kview_of(x);
    k->wv = nnop__kview_of(&p->g->values[n->in[1]].desc);
    k->yv = nnop__kview_of(&p->g->values[n->out].desc);
    k->groups = cp->groups;
    k->pad_h = cp->pad[0], k->pad_w = cp->pad[1];
    k->stride_h = cp->stride[0], k->stride_w = cp->stride[1];
    k->dil_h = cp->dilation[0], k->dil_w = cp->dilation[1];
    if (t->count > 1) {
        t->taken = 1;
        t->who = "own transposed-conv kernel took the conv";
        snprintf(t->why, sizeof t->why, "the epilogue runs on the own epilogue kernel");
    }
    return NNOP_OK;
}

static nnop_status deconv_run(nnop_plan *p, nnop__cuda_step *st)
{
    st->dc.x = p->cuda->slot[st->x_slot];
    st->dc.w = p->cuda->slot[st->w_slot];
    st->dc.y = p->cuda->slot[st->y_slot];
    return nnop__cuda_check(p->ctx, nnop__k_deconv(&st->dc, p->ctx->cuda->stream), "nnop__k_deconv",
                            __FILE__, __LINE__);
}

static size_t deconv_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[own kernel: transposed conv]");
    (void)p, (void)st;
    return n > 0 ? (size_t)n : 0;
}

const nnop__impl nnop__impl_deconv = {
        "own transposed-conv kernel", deconv_fits, deconv_build, deconv_run, deconv_describe, NULL};
