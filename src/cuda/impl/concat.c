/* concat.c: the implementation-list entry for channel concat, and the plan that lets
 * producers write straight into their channel slices of the concat's output: a computed
 * value whose slice has its own packed strides (channels-first at batch 1, say) lives there,
 * whoever produces it, and the step copies only the other inputs (kernels/resize.cu's
 * nnop__k_copy, one strided copy each); compile.c places the values in the slices.
 * Strided slices (channels-last, batch > 1) stay copies: cuDNN's conv engines take strided
 * outputs on sm_90, but the ones that did ran 2.7-3.7x slower than the packed write, far
 * more than the copy saves (U-Net's 1x1 conv: 4.7 -> 12.8 us at batch 1, 47.9 -> 177.7 us
 * at batch 32; GPU log 2026-12-03-h200-c, in git history: docs/performance.md). */
#include <stdio.h>
#include <stdlib.h>

#include "cuda/impl/impl.h"

struct nnop__concat_step {
    int n_in, dtype;
    int32_t x_slot[NNOP_MAX_CONCAT_INPUTS];
    nnop__kview xv[NNOP_MAX_CONCAT_INPUTS], yv[NNOP_MAX_CONCAT_INPUTS]; /* yv: the slice */
    int64_t y_offset[NNOP_MAX_CONCAT_INPUTS];                           /* in elements */
    int in_place[NNOP_MAX_CONCAT_INPUTS]; /* written into its slice by its producer */
    int n_in_place;
};

/* ------------------------------------------------------------------ the slice plan */
/* The slice of y (a view with v's dims and y's strides) has v's own strides. */
static int slice_contiguous(const nnop_tensor_desc *v, const nnop_tensor_desc *y)
{
    int d;
    for (d = 0; d < v->ndim; d++)
        if (v->dims[d] > 1 && v->strides[d] != y->strides[d])
            return 0;
    return 1;
}

/* Whether input i (value v, at element offset off of y) of concat node n can live in its
 * slice: computed by a step of the plan (no caller's memory, bound only at execute), not a
 * concat itself, the first time in the list, no conversion, an address cuDNN accepts. */
static int slice_fits(const nnop_plan *p, const nnop__node *n, int i, int64_t off)
{
    const nnop__value *v = &p->g->values[n->in[i]], *y = &p->g->values[n->out];
    int j;
    if (v->kind != NNOP_VALUE_NODE || v->output_index >= 0 || y->output_index >= 0 ||
        p->g->nodes[v->producer].op == NNOP_OP_CONCAT || v->desc.dtype != y->desc.dtype ||
        p->cuda->slice_in[n->in[i]] >= 0)
        return 0;
    for (j = 0; j < i; j++)
        if (n->in[j] == n->in[i])
            return 0;
    return off * (int64_t)nnop_dtype_size(y->desc.dtype) % 16 == 0 &&
           slice_contiguous(&v->desc, &y->desc);
}

nnop_status nnop__concat_plan_slices(nnop_plan *p)
{
    struct nnop__cuda_plan *cp = p->cuda;
    size_t nv = (size_t)p->g->n_values + 1;
    int32_t k, v;
    cp->slice_in = (int32_t *)nnop__calloc(nv, sizeof *cp->slice_in);
    cp->slice_off = (int64_t *)nnop__calloc(nv, sizeof *cp->slice_off);
    if (!cp->slice_in || !cp->slice_off)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    for (v = 0; v < p->g->n_values; v++)
        cp->slice_in[v] = -1;
    for (k = 0; k < p->g->n_nodes; k++) {
        const nnop__node *n = &p->g->nodes[k];
        int64_t c0 = 0;
        int i;
        if (n->op != NNOP_OP_CONCAT)
            continue;
        for (i = 0; i < n->n_in; i++) {
            int64_t off = c0 * p->g->values[n->out].desc.strides[1];
            c0 += p->g->values[n->in[i]].desc.dims[1];
            if (!slice_fits(p, n, i, off))
                continue;
            cp->slice_in[n->in[i]] = n->out;
            cp->slice_off[n->in[i]] = off;
        }
    }
    return NNOP_OK;
}

/* Value v is the output of a partition before part (so some step wrote it, into the slice). */
static int written_before(const nnop_plan *p, int32_t part, int32_t v)
{
    int32_t j;
    for (j = 0; j < part; j++)
        if (p->g->nodes[p->parts[j].first + p->parts[j].count - 1].out == v)
            return 1;
    return 0;
}

/* Whether input v's producer wrote it into its slice of y at element offset off (a value
 * listed twice lives in its first slice: the second is a copy); a planned value no step
 * wrote as its output (none is known, but the plan must not depend on it) keeps a buffer of
 * its own. */
static int written_in_place(nnop_plan *p, const nnop__impl_try *t, int32_t v, int32_t y,
                            int64_t off)
{
    struct nnop__cuda_plan *cp = p->cuda;
    if (cp->slice_in[v] != y || cp->slice_off[v] != off)
        return 0;
    if (written_before(p, t->part, v))
        return 1;
    cp->slice_in[v] = -1;
    return 0;
}

static int concat_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (p->g->nodes[t->first].op != NNOP_OP_CONCAT) {
        *why_not = "not a concat";
        return 0;
    }
    return 1;
}

static nnop_status concat_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_tensor_desc *y = &p->g->values[n->out].desc;
    nnop__concat_step *c = (nnop__concat_step *)nnop__calloc(1, sizeof *c);
    nnop__kview yv = nnop__kview_of(y);
    int64_t c0 = 0;
    nnop_status r = NNOP_OK;
    int i;
    if (!c)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    st->cat = c;
    st->kind = NNOP_STEP_CONCAT;
    st->y_slot = n->out;
    c->n_in = n->n_in;
    c->dtype = (int)y->dtype;
    for (i = 0; i < n->n_in && r == NNOP_OK; i++) {
        c->xv[i] = nnop__kview_of(&p->g->values[n->in[i]].desc);
        c->yv[i] = yv;
        c->yv[i].c = c->xv[i].c;
        c->y_offset[i] = c0 * yv.sc;
        c0 += c->xv[i].c;
        c->in_place[i] = written_in_place(p, t, n->in[i], n->out, c->y_offset[i]);
        c->n_in_place += c->in_place[i];
        r = nnop__slot_value(p, n->in[i], &c->x_slot[i]);
    }
    if (r != NNOP_OK) { /* the compile ends: no destroy will see this step */
        nnop__free(c);
        st->cat = NULL;
    }
    return r;
}

static nnop_status concat_run(nnop_plan *p, nnop__cuda_step *st)
{
    const nnop__concat_step *c = st->cat;
    char *y = (char *)p->cuda->slot[st->y_slot];
    size_t elem = nnop_dtype_size((nnop_dtype)c->dtype);
    nnop_status r = NNOP_OK;
    int i;
    for (i = 0; i < c->n_in && r == NNOP_OK; i++)
        if (!c->in_place[i])
            r = nnop__cuda_check(p->ctx,
                                 nnop__k_copy(p->cuda->slot[c->x_slot[i]],
                                              y + (size_t)c->y_offset[i] * elem, c->dtype,
                                              &c->xv[i], &c->yv[i], p->ctx->cuda->stream),
                                 "nnop__k_copy", __FILE__, __LINE__);
    return r;
}

static size_t concat_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    const nnop__concat_step *c = st->cat;
    int n = c->n_in_place == c->n_in
                    ? snprintf(buf, len,
                               "[concat: all %d inputs written into their slices by "
                               "their producers, no copy]",
                               c->n_in)
            : c->n_in_place
                    ? snprintf(buf, len,
                               "[own kernel: concat, %d of %d inputs written into "
                               "their slices by their producers, a copy for the rest]",
                               c->n_in_place, c->n_in)
                    : snprintf(buf, len, "[own kernel: concat, a copy per input (%d)]", c->n_in);
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

static void concat_destroy(nnop__cuda_step *st)
{
    nnop__free(st->cat);
    st->cat = NULL;
}

const nnop__impl nnop__impl_concat = {"own concat kernel", concat_fits,     concat_build,
                                      concat_run,          concat_describe, concat_destroy};
