/* depthwise.c: the implementation-list entry for depthwise convolutions (groups = C = K): the
 * own kernel (kernels/depthwise.cu) runs the conv and the per-channel head of its epilogue
 * (bias, batch-norm, activations, multiplies by a 1,C,1,1 or N,C,1,1 operand) before its one
 * store; the rest of the partition (a residual add and what follows it) is split off to the
 * own epilogue kernel. cuDNN's engines on sm_90 took 3-22 ms for these shapes where the data
 * is a few megabytes (issue 12: 1 x 256 x 74 x 74, 3x3, f16 NHWC: 22 ms). Channels-last,
 * constant weights go tap-major. A layer or RMS norm over C in the next partition, reading
 * only the conv, joins the step (t->absorbed): the kernel normalizes each position before
 * its store (ConvNeXt's block: 7x7 depthwise, layer norm). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/impl/impl.h"

static int depthwise_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_tensor_desc *x, *w;
    if (n->op != NNOP_OP_CONV) {
        *why_not = "not a convolution";
        return 0;
    }
    x = &p->g->values[n->in[0]].desc;
    w = &p->g->values[n->in[1]].desc;
    if (n->attr.conv.groups < 2 || n->attr.conv.groups != x->dims[1] || w->dims[0] != x->dims[1] ||
        w->dims[1] != 1) {
        *why_not = "not a depthwise convolution (groups = C = K)";
        return 0;
    }
    return 1;
}

void nnop__dw_tap_major(const void *w, const nnop_tensor_desc *d, void *out)
{
    const size_t es = nnop_dtype_size(d->dtype);
    const int64_t C = d->dims[0], R = d->dims[2], S = d->dims[3];
    int64_t c, r, s;
    for (c = 0; c < C; c++)
        for (r = 0; r < R; r++)
            for (s = 0; s < S; s++)
                memcpy((char *)out + (size_t)((r * S + s) * C + c) * es,
                       (const char *)w +
                               (size_t)(c * d->strides[0] + r * d->strides[2] + s * d->strides[3]) *
                                       es,
                       es);
}

/* The weights' slot and view. Channels-last, the kernel's threads run along channels: with
 * weights [C][R][S] each warp's load of one tap touched 32 lines (R*S elements apart), so
 * constant weights go tap-major ([R][S][C], nnop__dw_tap_major) and those loads are
 * contiguous; the kernel reads either through the view's strides. */
static nnop_status weights(nnop_plan *p, const nnop__node *n, nnop__cuda_step *st)
{
    const nnop__value *w = &p->g->values[n->in[1]];
    const nnop_tensor_desc *y = &p->g->values[n->out].desc;
    size_t bytes = nnop_tensor_bytes(&w->desc);
    void *tm;
    nnop_status r;
    st->dw.wv = nnop__kview_of(&w->desc);
    if (!nnop__value_is_const(p->g, n->in[1]) || y->strides[1] != 1 || y->dims[1] < 2)
        return nnop__slot_value(p, n->in[1], &st->w_slot);
    tm = malloc(bytes);
    if (!tm)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    nnop__dw_tap_major(w->data, &w->desc, tm);
    r = nnop__slot_upload_const(p, "constant", tm, bytes, &st->w_slot);
    free(tm);
    st->dw.wv.sn = 1;
    st->dw.wv.sc = 0;
    st->dw.wv.sh = st->dw.wv.w * st->dw.wv.n;
    st->dw.wv.sw = st->dw.wv.n;
    st->dw_tap_major = 1;
    return r;
}

/* Node e continues the chain from value cur with an op the kernel applies per channel: bias,
 * batch-norm, an activation, or a multiply/subtract/divide by a broadcast operand (a
 * residual add, or an operand of the output's shape, is left to the epilogue kernel). */
static int fusable(const nnop_graph *g, const nnop__node *e, int32_t cur)
{
    const nnop_tensor_desc *a = &g->values[cur].desc;
    if (e->in[0] != cur)
        return 0;
    switch (e->op) {
    case NNOP_OP_BIAS:
    case NNOP_OP_BATCHNORM:
    case NNOP_OP_ACT:
        return 1;
    case NNOP_OP_MUL:
    case NNOP_OP_SUB:
    case NNOP_OP_DIV:
        return nnop_tensor_elements(&g->values[e->in[1]].desc) != nnop_tensor_elements(a);
    default:
        return 0;
    }
}

/* The fusable head of the epilogue after the conv: its op count (at most the kernel's). */
static int32_t fused_count(const nnop_plan *p, const nnop__impl_try *t)
{
    int32_t k = 0, cur = p->g->nodes[t->first].out;
    while (1 + k < t->count && k < NNOP_EPI_MAX_OPS &&
           fusable(p->g, &p->g->nodes[t->first + 1 + k], cur))
        cur = p->g->nodes[t->first + 1 + k++].out;
    return k;
}

/* The epilogue head [first + 1, first + 1 + k) as the kernel's ops; its output is the step's. */
static nnop_status fuse_epilogue(nnop_plan *p, const nnop__impl_try *t, int32_t k,
                                 nnop__cuda_step *st)
{
    nnop__chain c;
    nnop_status r;
    st->epi.n_ops = 0;
    if (k == 0)
        return NNOP_OK;
    r = nnop__chain_build(p, t->first + 1, k, 0, &c);
    if (r == NNOP_OK)
        r = nnop__step_epi_ops(p, &c, st);
    st->y_slot = c.out_value;
    nnop__chain_free(&c);
    return r;
}

/* Channels-last with contiguous channels, within 32-bit indices, and a block that holds whole
 * positions of C threads (any alignment) or, when x and y are the plan's own buffers
 * (aligned: 4-element vectors), of C / 4: the kernel's norm path runs (nnop__k_depthwise). */
static int norm_views_fit(const nnop_graph *g, const nnop__node *conv, int32_t y)
{
    const nnop__value *xv = &g->values[conv->in[0]], *yv = &g->values[y];
    const nnop_tensor_desc *x = &xv->desc, *d = &yv->desc;
    const int64_t C = d->dims[1];
    const int own = xv->kind == NNOP_VALUE_NODE && xv->output_index < 0 && yv->output_index < 0;
    if (x->strides[1] != 1 || d->strides[1] != 1 || g->values[conv->out].desc.strides[1] != 1 ||
        C < 2 || !nnop__value_is_const(g, conv->in[1]))
        return 0; /* the kernel's norm path needs tap-major weights (weights()) */
    if (nnop_tensor_elements(x) >= INT32_MAX || nnop_tensor_elements(d) >= INT32_MAX)
        return 0;
    return nnop__k_dw_norm_block(C) > 0 || (own && C % 4 == 0 && nnop__k_dw_norm_block(C / 4) > 0);
}

/* The partition after t (the depthwise conv and its fused head, all of t's nodes) is a layer
 * or RMS norm over C of its output, the conv output's only reader and no graph output, with
 * 1-D affine parameters: the step then normalizes before its store (one pass, not two). */
int nnop__dw_norm_follows(const nnop_plan *p, const nnop__impl_try *t, int32_t fused)
{
    const nnop_graph *g = p->g;
    const nnop__partition *next;
    const nnop__node *m;
    int32_t cur = g->nodes[t->first + fused].out, i;
    if (1 + fused != t->count || t->part + 1 >= p->n_parts)
        return 0;
    next = &p->parts[t->part + 1];
    m = &g->nodes[next->first];
    if (next->count != 1 || m->in[0] != cur || g->values[cur].n_consumers != 1 ||
        g->values[cur].output_index >= 0)
        return 0;
    if (!(m->op == NNOP_OP_RMS_NORM ||
          (m->op == NNOP_OP_LAYER_NORM && m->attr.norm.axes == NNOP_NORM_C)))
        return 0;
    for (i = 1; i < m->n_in; i++)
        if (m->in[i] != NNOP_NONE_ID && g->values[m->in[i]].desc.ndim != 1)
            return 0;
    return norm_views_fit(g, &g->nodes[t->first], m->out);
}

/* The norm node m into the step: its kind, eps, affine parameters; its output the step's. */
static nnop_status fuse_norm(nnop_plan *p, const nnop__node *m, nnop__cuda_step *st)
{
    nnop__dw_kparams *k = &st->dw;
    const int has_beta = m->op != NNOP_OP_RMS_NORM && m->n_in > 2 && m->in[2] != NNOP_NONE_ID;
    nnop_status r = NNOP_OK;
    k->norm = m->op == NNOP_OP_RMS_NORM ? 2 : 1;
    k->norm_eps = m->attr.norm.eps;
    st->gamma_slot = st->beta_slot = -1;
    if (m->n_in > 1 && m->in[1] != NNOP_NONE_ID) {
        k->g_dtype = (int)p->g->values[m->in[1]].desc.dtype;
        k->gsn = p->g->values[m->in[1]].desc.strides[0];
        r = nnop__slot_value(p, m->in[1], &st->gamma_slot);
    }
    if (r == NNOP_OK && has_beta) {
        k->b_dtype = (int)p->g->values[m->in[2]].desc.dtype;
        k->bsn = p->g->values[m->in[2]].desc.strides[0];
        r = nnop__slot_value(p, m->in[2], &st->beta_slot);
    }
    st->y_slot = m->out;
    return r;
}

static nnop_status depthwise_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_conv_params *cp = &n->attr.conv;
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const int32_t k = fused_count(p, t);
    nnop_status r = nnop__slot_value(p, n->in[0], &st->x_slot);
    if (r == NNOP_OK)
        r = weights(p, n, st);
    st->y_slot = n->out;
    if (r == NNOP_OK)
        r = fuse_epilogue(p, t, k, st);
    st->dw.norm = 0;
    if (r == NNOP_OK && nnop__dw_norm_follows(p, t, k)) {
        r = fuse_norm(p, &p->g->nodes[p->parts[t->part + 1].first], st);
        t->absorbed = 1;
    }
    if (r != NNOP_OK)
        return r;
    st->kind = NNOP_STEP_DEPTHWISE;
    st->dtype = (int)x->dtype;
    st->dw.dtype = (int)x->dtype;
    st->dw.xv = nnop__kview_of(x);
    st->dw.yv = nnop__kview_of(&p->g->values[st->dw.norm ? st->y_slot : n->out].desc);
    st->dw.pad_h = (int)cp->pad[0], st->dw.pad_w = (int)cp->pad[1];
    st->dw.stride_h = (int)cp->stride[0], st->dw.stride_w = (int)cp->stride[1];
    st->dw.dil_h = (int)cp->dilation[0], st->dw.dil_w = (int)cp->dilation[1];
    if (1 + k < t->count) {
        t->taken = 1 + k;
        t->who = k ? "own depthwise kernel took the conv and its per-channel epilogue"
                   : "own depthwise kernel took the conv";
        snprintf(t->why, sizeof t->why,
                 "a %s is not per-channel: it runs on the own epilogue kernel",
                 nnop__op(p->g->nodes[t->first + 1 + k].op)->name);
    }
    return NNOP_OK;
}

static nnop_status depthwise_run(nnop_plan *p, nnop__cuda_step *st)
{
    st->dw.x = p->cuda->slot[st->x_slot];
    st->dw.w = p->cuda->slot[st->w_slot];
    st->dw.y = p->cuda->slot[st->y_slot];
    st->dw.gamma = st->dw.norm && st->gamma_slot >= 0 ? p->cuda->slot[st->gamma_slot] : NULL;
    st->dw.beta = st->dw.norm && st->beta_slot >= 0 ? p->cuda->slot[st->beta_slot] : NULL;
    nnop__step_fill_ops(p, st);
    st->dw.n_ops = st->epi.n_ops;
    memcpy(st->dw.ops, st->epi.ops, (size_t)st->epi.n_ops * sizeof st->epi.ops[0]);
    return nnop__cuda_check(p->ctx, nnop__k_depthwise(&st->dw, p->ctx->cuda->stream),
                            "nnop__k_depthwise", __FILE__, __LINE__);
}

static size_t depthwise_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf,
                                 size_t len)
{
    nnop__text t;
    (void)p;
    nnop__text_init(&t, buf, len);
    nnop__textf(&t, "[own kernel: depthwise conv%s%s",
                st->dw_tap_major ? ", tap-major weights" : "",
                st->epi.n_ops ? ", epilogue fused: " : "");
    nnop__epi_ops_text(st->epi.ops, st->epi.n_ops, &t);
    nnop__textf(&t, "%s]",
                st->dw.norm == 1   ? "; then the layer norm over C, in the same kernel"
                : st->dw.norm == 2 ? "; then the RMS norm over C, in the same kernel"
                                   : "");
    return t.used;
}

const nnop__impl nnop__impl_depthwise = {"own depthwise kernel", depthwise_fits,
                                         depthwise_build,        depthwise_run,
                                         depthwise_describe,     NULL};
