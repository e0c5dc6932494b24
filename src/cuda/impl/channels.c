/* channels.c: the implementation-list entries for the ops that work across channels without
 * weights: local response normalization on its own kernel (kernels/lrn.cu), the channel
 * shuffle as one strided copy a group (kernels/resize.cu's nnop__k_copy: group i's C / groups
 * consecutive input channels go to output channels i, i + groups, i + 2 groups...), and the
 * channel slice as one copy. */
#include <stdio.h>

#include "cuda/impl/impl.h"

static int is_op(const nnop_plan *p, const nnop__impl_try *t, nnop_op_kind op, const char *what,
                 const char **why_not)
{
    if (p->g->nodes[t->first].op != op) {
        *why_not = what;
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- LRN */
static int lrn_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    return is_op(p, t, NNOP_OP_LRN, "not an LRN", why_not);
}

static nnop_status lrn_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop__lrn_attr *a = &n->attr.lrn;
    nnop__lrn_kparams *k = &st->lrn;
    st->kind = NNOP_STEP_LRN;
    st->y_slot = n->out;
    k->xv = nnop__kview_of(&p->g->values[n->in[0]].desc);
    k->yv = nnop__kview_of(&p->g->values[n->out].desc);
    k->dtype = (int)p->g->values[n->in[0]].desc.dtype;
    k->before = (a->size - 1) / 2;
    k->after = a->size / 2;
    k->k = (float)((double)a->alpha / (double)a->size);
    k->beta = a->beta;
    k->bias = a->bias;
    return nnop__slot_value(p, n->in[0], &st->x_slot);
}

static nnop_status lrn_run(nnop_plan *p, nnop__cuda_step *st)
{
    st->lrn.x = p->cuda->slot[st->x_slot];
    st->lrn.y = p->cuda->slot[st->y_slot];
    return nnop__cuda_check(p->ctx, nnop__k_lrn(&st->lrn, p->ctx->cuda->stream), "nnop__k_lrn",
                            __FILE__, __LINE__);
}

static size_t lrn_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[own kernel: LRN over %lld channels]",
                     (long long)(st->lrn.before + st->lrn.after + 1));
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

const nnop__impl nnop__impl_lrn = {"own LRN kernel", lrn_fits,     lrn_build,
                                   lrn_run,          lrn_describe, NULL};

/* ---------------------------------------------------------------- channel shuffle */
static int shuffle_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    return is_op(p, t, NNOP_OP_CHANNEL_SHUFFLE, "not a channel shuffle", why_not);
}

/* What the shuffle's and the slice's strided copies share: x and y, their views, the dtype. */
static void copy_step(const nnop_plan *p, const nnop__node *n, nnop__cuda_step *st)
{
    st->kind = NNOP_STEP_SHUFFLE;
    st->y_slot = n->out;
    st->xv = nnop__kview_of(&p->g->values[n->in[0]].desc);
    st->yv = nnop__kview_of(&p->g->values[n->out].desc);
    st->dtype = (int)p->g->values[n->in[0]].desc.dtype;
}

static nnop_status shuffle_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    copy_step(p, n, st);
    st->shuffle_groups = n->attr.shuffle_groups;
    return nnop__slot_value(p, n->in[0], &st->x_slot);
}

/* Group i: input channels [i * per, (i + 1) * per) to output channels i + j * groups. */
static nnop_status shuffle_run(nnop_plan *p, nnop__cuda_step *st)
{
    const int64_t groups = st->shuffle_groups, per = st->xv.c / groups;
    const size_t elem = st->dtype == NNOP_F32 ? 4 : 2;
    const char *x = (const char *)p->cuda->slot[st->x_slot];
    char *y = (char *)p->cuda->slot[st->y_slot];
    nnop__kview xv = st->xv, yv = st->yv;
    int64_t i;
    xv.c = per;
    yv.c = per;
    yv.sc = st->yv.sc * groups;
    for (i = 0; i < groups; i++) {
        nnop_status s = nnop__cuda_check(p->ctx,
                                         nnop__k_copy(x + (size_t)(i * per * st->xv.sc) * elem,
                                                      y + (size_t)(i * st->yv.sc) * elem, st->dtype,
                                                      &xv, &yv, p->ctx->cuda->stream),
                                         "nnop__k_copy", __FILE__, __LINE__);
        if (s != NNOP_OK)
            return s;
    }
    return NNOP_OK;
}

static size_t shuffle_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[own kernel: channel shuffle, %lld groups, a copy each]",
                     (long long)st->shuffle_groups);
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

const nnop__impl nnop__impl_shuffle = {"own channel-shuffle copies",
                                       shuffle_fits,
                                       shuffle_build,
                                       shuffle_run,
                                       shuffle_describe,
                                       NULL};

/* ---------------------------------------------------------------- channel slice */
static int slice_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    return is_op(p, t, NNOP_OP_CHANNEL_SLICE, "not a channel slice", why_not);
}

static nnop_status slice_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    copy_step(p, n, st);
    st->slice_start = n->attr.slice[0];
    st->xv.c = n->attr.slice[1];
    return nnop__slot_value(p, n->in[0], &st->x_slot);
}

static nnop_status slice_run(nnop_plan *p, nnop__cuda_step *st)
{
    const size_t elem = st->dtype == NNOP_F32 ? 4 : 2;
    const char *x = (const char *)p->cuda->slot[st->x_slot];
    return nnop__cuda_check(p->ctx,
                            nnop__k_copy(x + (size_t)(st->slice_start * st->xv.sc) * elem,
                                         p->cuda->slot[st->y_slot], st->dtype, &st->xv, &st->yv,
                                         p->ctx->cuda->stream),
                            "nnop__k_copy", __FILE__, __LINE__);
}

static size_t slice_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[own kernel: channel slice %lld..%lld, a copy]",
                     (long long)st->slice_start, (long long)(st->slice_start + st->xv.c - 1));
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

const nnop__impl nnop__impl_slice = {"own channel-slice copy", slice_fits, slice_build, slice_run,
                                     slice_describe,           NULL};
