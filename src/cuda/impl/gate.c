/* gate.c: the implementation-list entry for a squeeze-excitation gate: a 1x1 conv on
 * N x C x 1 x 1 values with its per-channel epilogue, whose only consumer is a second such
 * conv (the next partition), both run by the own gate kernel (kernels/gate.cu: two launches,
 * the hidden values in a float scratch slot; one for narrow gates). Offered the global average
 * pool in front of them (packed channels-last), the step pools too: the pool's chunk sums are
 * added by the gate kernel, not by a finishing kernel. The step takes the next partitions
 * with it (t->absorbed). On cuDNN the two convs and their split-off activations were four launches
 * of about 2 us each (issue 15: EfficientNet-B0's gates were half its batch-1 time). */
#include <stdio.h>
#include <string.h>

#include "cuda/impl/impl.h"

#define GATE_MAX_SMEM 49152 /* dynamic shared memory without an opt-in */

struct nnop__gate_step {
    nnop__gate_kparams k;
    int32_t w1_slot, w2_slot, h_slot;
    /* a global average pool in front (its input, view and chunk sums), or none */
    int pool;
    int32_t pool_x_slot, sums_slot;
    nnop__kview pool_xv;
    int32_t slots1[NNOP_EPI_MAX_OPS][4], slots2[NNOP_EPI_MAX_OPS][4];
};

/* Node n is a conv with constant 1x1 weights, one group and no padding, on a 1x1 image. */
static int conv_on_pixel(const nnop_graph *g, const nnop__node *n)
{
    const nnop_tensor_desc *x, *w;
    if (n->op != NNOP_OP_CONV || !nnop__value_is_const(g, n->in[1]))
        return 0;
    x = &g->values[n->in[0]].desc;
    w = &g->values[n->in[1]].desc;
    return x->ndim == 4 && x->dims[2] == 1 && x->dims[3] == 1 && x->dims[0] <= 65535 &&
           w->dims[2] == 1 && w->dims[3] == 1 && n->attr.conv.groups == 1 &&
           n->attr.conv.pad[0] == 0 && n->attr.conv.pad[1] == 0;
}

/* Nodes [first + 1, first + count) are per-channel epilogue ops: bias, batch-norm, act. */
static int per_channel_tail(const nnop_graph *g, int32_t first, int32_t count)
{
    int32_t i;
    for (i = first + 1; i < first + count; i++) {
        const nnop__node *e = &g->nodes[i];
        if ((e->op != NNOP_OP_BIAS && e->op != NNOP_OP_BATCHNORM && e->op != NNOP_OP_ACT) ||
            e->in[0] != g->nodes[i - 1].out)
            return 0;
    }
    return 1;
}

/* Partitions i and i + 1 are the gate's two 1x1 conv chains, the second reading only the
 * first, within the kernel's shared memory. */
static int conv_pair(const nnop_plan *p, int32_t i)
{
    const nnop_graph *g = p->g;
    const nnop__partition *a, *b;
    const nnop__value *h;
    const nnop__node *c1, *c2;
    if (i + 1 >= p->n_parts)
        return 0;
    a = &p->parts[i], b = &p->parts[i + 1];
    h = &g->values[g->nodes[a->first + a->count - 1].out];
    c1 = &g->nodes[a->first], c2 = &g->nodes[b->first];
    return conv_on_pixel(g, c1) && per_channel_tail(g, a->first, a->count) &&
           conv_on_pixel(g, c2) && c2->in[0] == g->nodes[a->first + a->count - 1].out &&
           h->n_consumers == 1 && h->output_index < 0 && per_channel_tail(g, b->first, b->count) &&
           nnop__gate_smem_bytes(g->values[c1->in[0]].desc.dims[1], h->desc.dims[1]) <=
                   GATE_MAX_SMEM;
}

/* Partition t is a global average pool over packed channels-last x whose only reader is the
 * first conv of a gate: the step then also pools (its chunk sums added by the gate kernel). */
static int pool_first(const nnop_plan *p, const nnop__impl_try *t)
{
    const nnop_graph *g = p->g;
    const nnop__node *n = &g->nodes[t->first];
    const nnop__value *m = &g->values[n->out];
    nnop__kview xv;
    if (n->op != NNOP_OP_GLOBAL_AVG_POOL || t->count != 1 || m->n_consumers != 1 ||
        m->output_index >= 0 || t->part + 2 >= p->n_parts)
        return 0;
    xv = nnop__kview_of(&g->values[n->in[0]].desc);
    return nnop__gap_sums_bytes(&xv, (int)m->desc.dtype) > 0 &&
           g->nodes[p->parts[t->part + 1].first].in[0] == n->out;
}

static int gate_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    *why_not = "not two 1x1 convs on 1x1 images (after a pool), the second the first's only "
               "consumer, within the kernel's shared memory";
    if (pool_first(p, t))
        return conv_pair(p, t->part + 1);
    return conv_pair(p, t->part);
}

/* The chain of partition [first, first + count) (weights folded); its ops in st->epi with
 * their slots copied to slots[]. */
static nnop_status chain(nnop_plan *p, int32_t first, int32_t count, nnop__cuda_step *st,
                         nnop__chain *c, int32_t slots[NNOP_EPI_MAX_OPS][4], nnop__epi_op *ops,
                         int *n_ops)
{
    nnop_status r = nnop__chain_build(p, first, count, 1, c);
    if (r == NNOP_OK)
        r = nnop__step_epi_ops(p, c, st);
    if (r == NNOP_OK) {
        memcpy(slots, st->op_slots, sizeof st->op_slots);
        memcpy(ops, st->epi.ops, sizeof st->epi.ops);
        *n_ops = st->epi.n_ops;
    }
    return r;
}

static void strides(nnop__gate_kparams *k, const nnop_graph *g, const nnop__node *c1,
                    const nnop__node *c2, int32_t out)
{
    const nnop_tensor_desc *x = &g->values[c1->in[0]].desc, *y = &g->values[out].desc;
    const nnop_tensor_desc *w1 = &g->values[c1->in[1]].desc, *w2 = &g->values[c2->in[1]].desc;
    k->dtype = (int)x->dtype;
    k->n = x->dims[0], k->c = x->dims[1], k->mid = w1->dims[0], k->k = w2->dims[0];
    k->xsn = x->strides[0], k->xsc = x->strides[1];
    k->ysn = y->strides[0], k->ysc = y->strides[1];
    k->w1sk = w1->strides[0], k->w1sc = w1->strides[1];
    k->w2sk = w2->strides[0], k->w2sc = w2->strides[1];
}

/* The pool in front of the gate: its input, view and chunk-sum scratch. */
static nnop_status pool_part(nnop_plan *p, const nnop__node *n, nnop__cuda_step *st)
{
    struct nnop__gate_step *gs = st->gate;
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    nnop_status r = nnop__slot_value(p, n->in[0], &gs->pool_x_slot);
    gs->pool = 1;
    gs->pool_xv = nnop__kview_of(x);
    gs->k.inv = 1.0f / (float)(x->dims[2] * x->dims[3]);
    if (r == NNOP_OK)
        r = nnop__slot_run_scratch(p, nnop__gap_sums_bytes(&gs->pool_xv, (int)x->dtype),
                                   &gs->sums_slot);
    return r;
}

/* The step's two chains (after the pool, when it pools), strides and scratch. */
static nnop_status build_gate(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st, int pooled)
{
    struct nnop__gate_step *gs = st->gate;
    const nnop__partition *a = &p->parts[t->part + pooled], *b = &p->parts[t->part + pooled + 1];
    nnop__chain c1, c2;
    nnop_status r = pooled ? pool_part(p, &p->g->nodes[t->first], st) : NNOP_OK;
    if (r != NNOP_OK)
        return r;
    r = chain(p, a->first, a->count, st, &c1, gs->slots1, gs->k.ops1, &gs->k.n_ops1);
    st->x_slot = c1.x_slot;
    gs->w1_slot = c1.w_slot;
    nnop__chain_free(&c1);
    if (r != NNOP_OK)
        return r;
    r = chain(p, b->first, b->count, st, &c2, gs->slots2, gs->k.ops2, &gs->k.n_ops2);
    gs->w2_slot = c2.w_slot;
    st->y_slot = c2.out_value;
    nnop__chain_free(&c2);
    if (r != NNOP_OK)
        return r;
    strides(&gs->k, p->g, &p->g->nodes[a->first], &p->g->nodes[b->first], st->y_slot);
    return nnop__slot_run_scratch(p, nnop__gate_scratch_bytes(gs->k.n, gs->k.mid), &gs->h_slot);
}

static nnop_status gate_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const int pooled = pool_first(p, t);
    nnop_status r;
    st->gate = (struct nnop__gate_step *)nnop__calloc(1, sizeof *st->gate);
    if (!st->gate)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    r = build_gate(p, t, st, pooled);
    if (r != NNOP_OK) { /* the compile ends: no destroy will see this step */
        nnop__free(st->gate);
        st->gate = NULL;
        return r;
    }
    st->kind = NNOP_STEP_GATE;
    st->dtype = st->gate->k.dtype;
    t->absorbed = 1 + pooled;
    return NNOP_OK;
}

static nnop_status gate_run(nnop_plan *p, nnop__cuda_step *st)
{
    struct nnop__gate_step *gs = st->gate;
    gs->k.x = p->cuda->slot[st->x_slot];
    gs->k.w1 = p->cuda->slot[gs->w1_slot];
    gs->k.w2 = p->cuda->slot[gs->w2_slot];
    gs->k.y = p->cuda->slot[st->y_slot];
    gs->k.h = (float *)p->cuda->slot[gs->h_slot];
    gs->k.sums = NULL;
    if (gs->pool) {
        nnop_status r;
        gs->k.sums = (const float *)p->cuda->slot[gs->sums_slot];
        r = nnop__cuda_check(p->ctx,
                             nnop__k_gap_sums(p->cuda->slot[gs->pool_x_slot], gs->k.dtype,
                                              &gs->pool_xv, (float *)gs->k.sums, &gs->k.chunks,
                                              p->ctx->cuda->stream),
                             "nnop__k_gap_sums", __FILE__, __LINE__);
        if (r != NNOP_OK)
            return r;
    }
    nnop__bind_epi_ops(p, gs->k.ops1, gs->k.n_ops1, gs->slots1);
    nnop__bind_epi_ops(p, gs->k.ops2, gs->k.n_ops2, gs->slots2);
    return nnop__cuda_check(p->ctx, nnop__k_gate(&gs->k, p->ctx->cuda->stream), "nnop__k_gate",
                            __FILE__, __LINE__);
}

static size_t gate_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    const nnop__gate_kparams *k = &st->gate->k;
    int n;
    (void)p;
    n = snprintf(buf, len,
                 "[own kernel: squeeze-excitation gate, %s1x1 convs %lld -> %lld -> %lld "
                 "channels with %d + %d epilogue ops, a warp a row]",
                 st->gate->pool ? "global average pool (chunk sums added by the gate), " : "",
                 (long long)k->c, (long long)k->mid, (long long)k->k, k->n_ops1, k->n_ops2);
    return n > 0 ? (size_t)n : 0;
}

nnop__gate_step *nnop__gate_step_run_copy(const nnop__gate_step *s)
{
    nnop__gate_step *c = (nnop__gate_step *)nnop__calloc(1, sizeof *c);
    if (c)
        *c = *s; /* the kernel's arguments, written by each run; the rest is slot numbers */
    return c;
}

static void gate_destroy(nnop__cuda_step *st)
{
    nnop__free(st->gate);
    st->gate = NULL;
}

const nnop__impl nnop__impl_gate = {"own gate kernel", gate_fits,     gate_build,
                                    gate_run,          gate_describe, gate_destroy};
