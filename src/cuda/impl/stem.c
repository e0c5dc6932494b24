/* stem.c: first-layer convolutions on 3-channel channels-last fp16/bf16 input (the ResNet
 * stem). cuDNN's sm_90 engines handle C=3 poorly (H200, cuDNN 9.14, 32x3x224x224 -> 64,
 * 7x7/2: 89 us). Two remedies, tried in this order:
 * - the own tensor-core kernel of stem_conv.cu for stride 2, <= 7x7, <= 4 channels, 64
 *   outputs, epilogue bias and/or ReLU (batch-norm folded into them);
 * - otherwise the channels zero-padded to 4, which sm_90's engines run about 1.4x faster
 *   (62 us): the weights are padded once at compile time, the input by an own kernel before
 *   each execute.
 * The own kernel also takes the ResNet max pool after it (3x3, stride 2, padding 1), when that
 * alone reads the conv: the conv's output, four times the pool's, is then never written
 * (t->absorbed; issue 12: a 129 us pass of its own at batch 256 on H200). */
#include <stdio.h>
#include <string.h>

#include "cuda/impl/impl.h"

#define STEM_C        3
#define STEM_PADDED_C 4

int nnop__stem_applies(const nnop_plan *p, int32_t first)
{
    const nnop__node *n = &p->g->nodes[first];
    const nnop_tensor_desc *x;
    if (n->op != NNOP_OP_CONV || n->attr.conv.groups != 1 ||
        p->g->values[n->in[1]].kind != NNOP_VALUE_CONSTANT)
        return 0;
    x = &p->g->values[n->in[0]].desc;
    /* channels-last x and w by their strides (an N x 3 x 1 x 1 NCHW x fits NHWC offsets, but
     * its weights do not) */
    return x->ndim == 4 && x->dims[1] == STEM_C && x->dtype != NNOP_F32 &&
           nnop__layout_of(x) == NNOP_NHWC &&
           nnop__layout_of(&p->g->values[n->in[1]].desc) == NNOP_NHWC;
}

nnop_status nnop__stem_pad(nnop_plan *p, nnop__chain *c, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[c->producer];
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *w = &p->g->values[n->in[1]].desc;
    int es = (int)nnop_dtype_size(x->dtype);
    int32_t xpad = -1, wpad = -1;
    nnop_status r;
    c->x_desc =
            nnop_tensor_4d(x->dtype, NNOP_NHWC, x->dims[0], STEM_PADDED_C, x->dims[2], x->dims[3]);
    c->w_desc =
            nnop_tensor_4d(w->dtype, NNOP_NHWC, w->dims[0], STEM_PADDED_C, w->dims[2], w->dims[3]);
    r = nnop__slot_run_scratch(p, nnop_tensor_bytes(&c->x_desc), &xpad);
    if (r == NNOP_OK &&
        !nnop__const_memo_find(p, "stem padded weights", c->w_slot, NULL, 0, &wpad)) {
        r = nnop__slot_alloc(p, nnop_tensor_bytes(&c->w_desc), &wpad);
        if (r == NNOP_OK) /* weights [K, R, S, 3] -> [K, R, S, 4], on the device */
            r = nnop__cuda_check(p->ctx,
                                 nnop__k_pad_channels(p->cuda->slot[c->w_slot], p->cuda->slot[wpad],
                                                      es, w->dims[0] * w->dims[2] * w->dims[3],
                                                      STEM_C, STEM_PADDED_C, p->ctx->cuda->stream),
                                 "nnop__k_pad_channels(weights)", __FILE__, __LINE__);
        if (r == NNOP_OK)
            r = nnop__const_memo_keep(p, "stem padded weights", c->w_slot, NULL, 0, wpad);
    }
    if (r != NNOP_OK)
        return r;
    st->padded = 1;
    st->pad_src = c->x_slot;
    st->pad_dst = xpad;
    st->pad_pixels = x->dims[0] * x->dims[2] * x->dims[3];
    st->pad_cin = STEM_C;
    st->pad_cout = STEM_PADDED_C;
    st->pad_elem = es;
    c->x_slot = xpad;
    c->w_slot = wpad;
    c->xw_override = 1;
    return NNOP_OK;
}

nnop_status nnop__stem_run(nnop_plan *p, const nnop__cuda_step *st)
{
    return nnop__cuda_check(p->ctx,
                            nnop__k_pad_channels(p->cuda->slot[st->pad_src],
                                                 p->cuda->slot[st->pad_dst], st->pad_elem,
                                                 st->pad_pixels, st->pad_cin, st->pad_cout,
                                                 p->ctx->cuda->stream),
                            "nnop__k_pad_channels", __FILE__, __LINE__);
}

/* ------------------------------------------------------------------ own stem kernel */
static int conv_fits_kernel(const nnop_plan *p, const nnop__node *n)
{
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *w = &p->g->values[n->in[1]].desc;
    const nnop_tensor_desc *y = &p->g->values[n->out].desc;
    const nnop_conv_params *cp = &n->attr.conv;
    return p->ctx->cuda->cc_major >= 8 && cp->groups == 1 && cp->stride[0] == 2 &&
           cp->stride[1] == 2 && cp->dilation[0] == 1 && cp->dilation[1] == 1 &&
           p->g->values[n->in[1]].kind == NNOP_VALUE_CONSTANT && x->ndim == 4 &&
           x->dtype != NNOP_F32 && nnop__layout_of(x) == NNOP_NHWC && y->dtype == x->dtype &&
           nnop__fits_layout(y, NNOP_NHWC) && nnop__fits_layout(w, NNOP_NHWC) &&
           nnop__stem_conv_fits((int)w->dims[2], (int)w->dims[3], (int)x->dims[1], (int)w->dims[0]);
}

/* Epilogue nodes the kernel takes once folded: constant bias and batch-norm, then ReLU. */
static int epilogue_fits_kernel(const nnop_plan *p, int32_t first, int32_t count)
{
    int32_t i, relu_seen = 0;
    for (i = first + 1; i < first + count; i++) {
        const nnop__node *n = &p->g->nodes[i];
        int affine = (n->op == NNOP_OP_BIAS && nnop__value_is_const(p->g, n->in[1])) ||
                     nnop__bn_is_const(p->g, n);
        if (affine && !relu_seen)
            continue;
        if (n->op == NNOP_OP_ACT && n->attr.act.kind == NNOP_ACT_IDENTITY)
            continue;
        if (n->op == NNOP_OP_ACT && n->attr.act.kind == NNOP_ACT_RELU && !relu_seen) {
            relu_seen = 1;
            continue;
        }
        return 0;
    }
    return 1;
}

static void kernel_params(const nnop_plan *p, const nnop__node *n, nnop__stem_kparams *k)
{
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *w = &p->g->values[n->in[1]].desc;
    const nnop_tensor_desc *y = &p->g->values[n->out].desc;
    memset(k, 0, sizeof *k);
    k->dtype = (int)x->dtype;
    k->n = (int)x->dims[0], k->c = (int)x->dims[1], k->h = (int)x->dims[2];
    k->w = (int)x->dims[3];
    k->oh = (int)y->dims[2], k->ow = (int)y->dims[3];
    k->r = (int)w->dims[2], k->s = (int)w->dims[3];
    k->pad_h = (int)n->attr.conv.pad[0], k->pad_w = (int)n->attr.conv.pad[1];
}

/* The folded chain in the kernel's terms: an optional bias (uploaded), an optional ReLU. */
static nnop_status kernel_epilogue(nnop_plan *p, const nnop__chain *c, nnop__cuda_step *st)
{
    int k = 0;
    st->stem_bias_slot = -1;
    if (k < c->n_ops && c->ops[k].kind == NNOP_EPI_BIAS && c->ops[k].host[0]) {
        nnop_status r =
                nnop__slot_upload_const(p, "constant", c->ops[k].host[0],
                                        (size_t)c->channels * sizeof(float), &st->stem_bias_slot);
        if (r != NNOP_OK)
            return r;
        k++;
    }
    if (k < c->n_ops && c->ops[k].kind == NNOP_EPI_ACT && c->ops[k].act.kind == NNOP_ACT_RELU) {
        st->stem.relu = 1;
        k++;
    }
    return k == c->n_ops ? NNOP_OK : NNOP_ERR_UNSUPPORTED;
}

/* ------------------------------------------------------------------ the pool after it */
static int is_stem_pool(const nnop__node *m)
{
    const nnop_pool_params *q = &m->attr.pool.p;
    return m->op == NNOP_OP_POOL && m->attr.pool.kind == NNOP_POOL_MAX && q->window[0] == 3 &&
           q->window[1] == 3 && q->stride[0] == 2 && q->stride[1] == 2 && q->pad[0] == 1 &&
           q->pad[1] == 1 && q->pad_end[0] == 0 && q->pad_end[1] == 0;
}

int nnop__stem_pool_follows(const nnop_plan *p, const nnop__impl_try *t)
{
    const nnop_graph *g = p->g;
    const int32_t cur = g->nodes[t->first + t->count - 1].out;
    const nnop__node *m;
    if (t->part + 1 >= p->n_parts || p->parts[t->part + 1].count != 1)
        return 0;
    m = &g->nodes[p->parts[t->part + 1].first];
    return is_stem_pool(m) && m->in[0] == cur && g->values[cur].n_consumers == 1 &&
           g->values[cur].output_index < 0 &&
           g->values[m->out].desc.dtype == g->values[cur].desc.dtype &&
           nnop__fits_layout(&g->values[m->out].desc, NNOP_NHWC);
}

/* The pool node m into the step: its output is the step's. */
static void fuse_pool(nnop_plan *p, const nnop__node *m, nnop__cuda_step *st)
{
    const nnop_tensor_desc *y = &p->g->values[m->out].desc;
    st->stem.pool = 1;
    st->stem.ph = (int)y->dims[2], st->stem.pw = (int)y->dims[3];
    st->y_slot = m->out;
}

static nnop_status kernel_weights(nnop_plan *p, const nnop__chain *c, nnop__cuda_step *st)
{
    const nnop_tensor_desc *w = &p->g->values[p->g->nodes[c->producer].in[1]].desc;
    nnop_status r;
    if (nnop__const_memo_find(p, "stem kernel weights", c->w_slot, NULL, 0, &st->w_slot))
        return NNOP_OK;
    r = nnop__slot_alloc(p, nnop__stem_weights_bytes(st->stem.r), &st->w_slot);
    if (r == NNOP_OK) /* weights folded or not, as the chain left them in c->w_slot */
        r = NNOP_CU(p->ctx,
                    nnop__k_stem_weights(p->cuda->slot[c->w_slot], p->cuda->slot[st->w_slot],
                                         (int)w->dims[2], (int)w->dims[3], (int)w->dims[1],
                                         w->strides, p->ctx->cuda->stream));
    return r == NNOP_OK
                   ? nnop__const_memo_keep(p, "stem kernel weights", c->w_slot, NULL, 0, st->w_slot)
                   : r;
}

/* The partition [first, first + count) as the own stem kernel, NNOP_ERR_UNSUPPORTED (no
 * message) when the kernel does not take it; with the max pool at node pool_node (the next
 * partition) too, unless pool_node < 0. */
static nnop_status build_kernel(nnop_plan *p, int32_t first, int32_t count, int32_t pool_node,
                                nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[first];
    nnop__chain c;
    nnop_status r;
    if (n->op != NNOP_OP_CONV || !conv_fits_kernel(p, n) || !epilogue_fits_kernel(p, first, count))
        return NNOP_ERR_UNSUPPORTED;
    kernel_params(p, n, &st->stem);
    r = nnop__chain_build(p, first, count, 1, &c);
    if (r == NNOP_OK)
        r = kernel_epilogue(p, &c, st);
    if (r == NNOP_OK)
        r = kernel_weights(p, &c, st);
    if (r == NNOP_OK) {
        st->kind = NNOP_STEP_STEM;
        st->x_slot = c.x_slot;
        st->y_slot = c.out_value;
        st->folded = c.folded;
        if (pool_node >= 0)
            fuse_pool(p, &p->g->nodes[pool_node], st);
        r = NNOP_CU(p->ctx, nnop__stem_conv_prepare(&st->stem, p->ctx->cuda->sm_count));
    }
    nnop__chain_free(&c);
    return r;
}

nnop_status nnop__stem_run_kernel(nnop_plan *p, nnop__cuda_step *st)
{
    st->stem.x = p->cuda->slot[st->x_slot];
    st->stem.y = p->cuda->slot[st->y_slot];
    st->stem.wp = p->cuda->slot[st->w_slot];
    st->stem.bias =
            st->stem_bias_slot >= 0 ? (const float *)p->cuda->slot[st->stem_bias_slot] : NULL;
    return nnop__cuda_check(p->ctx, nnop__k_stem_conv(&st->stem, p->ctx->cuda->stream),
                            "nnop__k_stem_conv", __FILE__, __LINE__);
}

/* ------------------------------------------------------------------ the entry */
static int stem_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    const nnop__node *n = &p->g->nodes[t->first];
    if (n->op != NNOP_OP_CONV || !conv_fits_kernel(p, n)) {
        *why_not = "not a stride-2 channels-last 16-bit conv of <= 4 channels and 64 outputs";
        return 0;
    }
    if (!epilogue_fits_kernel(p, t->first, t->count)) {
        *why_not = "epilogue other than bias/batch-norm then ReLU";
        return 0;
    }
    return 1;
}

static nnop_status stem_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const int pool = nnop__stem_pool_follows(p, t);
    nnop_status r =
            build_kernel(p, t->first, t->count, pool ? p->parts[t->part + 1].first : -1, st);
    if (r == NNOP_ERR_UNSUPPORTED)
        snprintf(t->why, sizeof t->why, "the own stem kernel does not take this chain");
    if (r == NNOP_OK && pool)
        t->absorbed = 1;
    return r;
}

static size_t stem_describe(const nnop_plan *p, const nnop__cuda_step *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[own kernel: stem conv%s%s]", s->folded ? ", bn/bias folded" : "",
                     s->stem.pool ? ", 3x3/2 max pool fused" : "");
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

const nnop__impl nnop__impl_stem_kernel = {"own stem kernel",     stem_fits,     stem_build,
                                           nnop__stem_run_kernel, stem_describe, NULL};
