/* igemm.c: the implementation-list entry for convolutions too small to fill the GPU: 16-bit
 * channels-last, groups 1, constant weights, at least 64 input and output channels, and no
 * more 64 x 64 output tiles than the GPU has SMs (ResNet-50 at batch 1). The own split-K
 * implicit GEMM (kernels/igemm_conv.cu) runs the conv and its whole epilogue chain, residual
 * adds included, before one store. cuDNN 9.14's sm_90 engines run these shapes on a few
 * blocks: ResNet-50's batch-1 3x3 convs took 6-12 us each, launch-bound (GPU log
 * 2026-12-04-h200-b, in git history: docs/performance.md). Needs compute capability 9.0
 * (thread-block clusters). Experimental: correct on the GPU (gpu.conv_igemm), but on ResNet-50 at
 * batch 1 slower than those engines so far (0.445 against 0.294 ms; ncu: a fixed 2000-3000
 * instructions a warp on one warp a scheduler, GPU log 2026-12-04-h200-e), so igemm_fits takes a
 * conv only where NNOP_ENABLE_IMPL names this entry. */
#include <stdio.h>
#include <string.h>

#include "cuda/impl/impl.h"
#include "platform/platform.h"

#define IGEMM_MIN_CHANNELS 64 /* below, a 64-wide tile is mostly padding */
#define IGEMM_NAME         "own implicit-GEMM conv"

/* The operand of an ADD, or of a MUL/SUB/DIV that is not a broadcast, has y's packed view. */
static int operand_fits(const nnop_graph *g, const nnop__node *e, int32_t cur)
{
    const nnop_tensor_desc *y = &g->values[cur].desc;
    int32_t other = e->in[0] == cur ? e->in[1] : e->in[0];
    const nnop_tensor_desc *b = &g->values[other].desc;
    switch (e->op) {
    case NNOP_OP_ADD:
        return nnop__desc_equal(b, y);
    case NNOP_OP_MUL:
    case NNOP_OP_SUB:
    case NNOP_OP_DIV:
        return e->in[0] == cur &&
               (nnop_tensor_elements(b) != nnop_tensor_elements(y) || nnop__desc_equal(b, y));
    default:
        return 1;
    }
}

/* Every node after the conv continues the chain in y's packed view, of y's dtype. */
static int chain_fits(const nnop_plan *p, const nnop__impl_try *t)
{
    const nnop_graph *g = p->g;
    int32_t i, cur = g->nodes[t->first].out;
    for (i = t->first + 1; i < t->first + t->count; i++) {
        const nnop__node *e = &g->nodes[i];
        if ((e->in[0] != cur && e->in[1] != cur) || !operand_fits(g, e, cur) ||
            !nnop__desc_equal(&g->values[e->out].desc, &g->values[cur].desc))
            return 0;
        cur = e->out;
    }
    return 1;
}

static const char *conv_refusal(const nnop_plan *p, const nnop__node *n)
{
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *w = &p->g->values[n->in[1]].desc;
    const nnop_tensor_desc *y = &p->g->values[n->out].desc;
    if (n->op != NNOP_OP_CONV || n->attr.conv.groups != 1)
        return "not a convolution of one group";
    if (p->ctx->cuda->cc_major < 9)
        return "needs compute capability 9.0 (thread-block clusters)";
    if (x->dtype == NNOP_F32 || y->dtype != x->dtype || !nnop__value_is_const(p->g, n->in[1]))
        return "not a 16-bit conv with constant weights";
    if (!nnop__fits_layout(x, NNOP_NHWC) || !nnop__fits_layout(y, NNOP_NHWC))
        return "x or y not packed channels-last";
    if (x->dims[1] % 8 || y->dims[1] % 8 || x->dims[1] < IGEMM_MIN_CHANNELS ||
        y->dims[1] < IGEMM_MIN_CHANNELS)
        return "channels not multiples of 8 of at least 64";
    if (nnop_tensor_elements(x) >= INT32_MAX || nnop_tensor_elements(y) >= INT32_MAX ||
        nnop_tensor_elements(w) >= INT32_MAX)
        return "tensors beyond 32-bit indices";
    if (nnop__igemm_tiles(y->dims[0] * y->dims[2] * y->dims[3], (int)y->dims[1]) >
        p->ctx->cuda->sm_count)
        return "output fills the GPU without a split: cuDNN's engines";
    return NULL;
}

static int igemm_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    const char *no = conv_refusal(p, &p->g->nodes[t->first]);
    if (!no && !chain_fits(p, t))
        no = "an epilogue operand not packed like the output";
    /* experimental (see the top of this file) */
    if (!no && !nnop__impl_listed(p->ctx, 1, IGEMM_NAME))
        no = "experimental: on only where options.enable_impl or NNOP_ENABLE_IMPL names it";
    *why_not = no ? no : "";
    return no == NULL;
}

static void shape_params(const nnop_plan *p, const nnop__node *n, nnop__igemm_kparams *k)
{
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *w = &p->g->values[n->in[1]].desc;
    const nnop_tensor_desc *y = &p->g->values[n->out].desc;
    const nnop_conv_params *cp = &n->attr.conv;
    memset(k, 0, sizeof *k);
    k->dtype = (int)x->dtype;
    k->n = (int)x->dims[0], k->c = (int)x->dims[1], k->h = (int)x->dims[2];
    k->w = (int)x->dims[3];
    k->k = (int)y->dims[1], k->p = (int)y->dims[2], k->q = (int)y->dims[3];
    k->r = (int)w->dims[2], k->s = (int)w->dims[3];
    k->pad_h = (int)cp->pad[0], k->pad_w = (int)cp->pad[1];
    k->stride_h = (int)cp->stride[0], k->stride_w = (int)cp->stride[1];
    k->dil_h = (int)cp->dilation[0], k->dil_w = (int)cp->dilation[1];
}

/* The weights, folded or not (as the chain left them in c->w_slot), packed [K][R][S][C]. */
static nnop_status pack_weights(nnop_plan *p, const nnop__chain *c, nnop__cuda_step *st)
{
    const nnop_tensor_desc *w = &p->g->values[p->g->nodes[c->producer].in[1]].desc;
    nnop_status r;
    if (nnop__const_memo_find(p, "igemm weights", c->w_slot, NULL, 0, &st->w_slot))
        return NNOP_OK;
    r = nnop__slot_alloc(p, nnop_tensor_bytes(w), &st->w_slot);
    if (r == NNOP_OK)
        r = NNOP_CU(p->ctx,
                    nnop__k_igemm_weights(p->cuda->slot[c->w_slot], p->cuda->slot[st->w_slot],
                                          (int)w->dims[0], (int)w->dims[1], (int)w->dims[2],
                                          (int)w->dims[3], w->strides, p->ctx->cuda->stream));
    return r == NNOP_OK ? nnop__const_memo_keep(p, "igemm weights", c->w_slot, NULL, 0, st->w_slot)
                        : r;
}

static nnop_status igemm_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    nnop__chain c;
    nnop_status r = nnop__chain_build(p, t->first, t->count, 1, &c);
    shape_params(p, &p->g->nodes[t->first], &st->ig);
    if (r == NNOP_OK)
        r = nnop__step_epi_ops(p, &c, st);
    if (r == NNOP_OK)
        r = pack_weights(p, &c, st);
    if (r == NNOP_OK) {
        st->kind = NNOP_STEP_IGEMM;
        st->x_slot = c.x_slot;
        st->y_slot = c.out_value;
        st->folded = c.folded;
        st->ig.n_ops = st->epi.n_ops; /* the kinds, for the kernel's form; pointers at run */
        memcpy(st->ig.ops, st->epi.ops, (size_t)st->epi.n_ops * sizeof st->epi.ops[0]);
        if (nnop__igemm_prepare(&st->ig, p->ctx->cuda->sm_count) != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(t->why, sizeof t->why,
                     "the own implicit-GEMM conv: the device runs no cluster of its blocks");
            r = NNOP_ERR_UNSUPPORTED;
        }
    }
    nnop__chain_free(&c);
    return r;
}

static nnop_status igemm_run(nnop_plan *p, nnop__cuda_step *st)
{
    st->ig.x = p->cuda->slot[st->x_slot];
    st->ig.wp = p->cuda->slot[st->w_slot];
    st->ig.y = p->cuda->slot[st->y_slot];
    nnop__step_fill_ops(p, st);
    memcpy(st->ig.ops, st->epi.ops, (size_t)st->epi.n_ops * sizeof st->epi.ops[0]);
    return nnop__cuda_check(p->ctx, nnop__k_igemm_conv(&st->ig, p->ctx->cuda->stream),
                            "nnop__k_igemm_conv", __FILE__, __LINE__);
}

static size_t igemm_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "[own kernel: implicit-GEMM conv, split %d ways%s, epilogue of %d op%s fused]",
                     st->ig.splits, st->folded ? ", bn/bias folded" : "", st->ig.n_ops,
                     st->ig.n_ops == 1 ? "" : "s");
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

const nnop__impl nnop__impl_igemm = {IGEMM_NAME, igemm_fits,     igemm_build,
                                     igemm_run,  igemm_describe, NULL};
