/* norm.c: the implementation-list entry for the normalizations (layer norm over C or over C,
 * H, W; group norm; RMS norm): the own kernel (kernels/norm.cu), for group and instance
 * norm and what cuDNN's norm-forward (cudnn.c, tried first) refused, its reason kept. The
 * pointwise chain after the norm in its partition (GroupNorm + SiLU, a layer scale, a
 * residual add) runs in the same kernel, on each value before its store: one pass. */
#include <stdio.h>
#include <string.h>

#include "cuda/impl/impl.h"

static int is_norm(nnop_op_kind k)
{
    return k == NNOP_OP_LAYER_NORM || k == NNOP_OP_GROUP_NORM || k == NNOP_OP_RMS_NORM;
}

static int norm_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (!is_norm(p->g->nodes[t->first].op)) {
        *why_not = "not a normalization";
        return 0;
    }
    return 1;
}

/* Optional affine parameter i of node n: its slot (or -1), view, dtype and form. */
static nnop_status param(nnop_plan *p, const nnop__node *n, int i, int32_t *slot, nnop__kview *v,
                         int *dtype, int *per_element)
{
    const nnop_tensor_desc *d;
    *slot = -1;
    if (i >= n->n_in || n->in[i] == NNOP_NONE_ID)
        return NNOP_OK;
    d = &p->g->values[n->in[i]].desc;
    *v = nnop__kview_of(d);
    *dtype = (int)d->dtype;
    *per_element = d->ndim > 1;
    return nnop__slot_value(p, n->in[i], slot);
}

/* The partition's epilogue chain after the norm as the kernel's ops; its output the step's
 * (it has the norm output's view: pointwise ops keep their first operand's). */
static nnop_status fuse_epilogue(nnop_plan *p, const nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    nnop__chain c;
    nnop_status r;
    st->y_slot = n->out;
    st->epi.n_ops = 0;
    if (t->count == 1)
        return NNOP_OK;
    r = nnop__chain_build(p, t->first + 1, t->count - 1, 0, &c);
    if (r == NNOP_OK)
        r = nnop__step_epi_ops(p, &c, st);
    if (r == NNOP_OK &&
        !nnop__desc_equal(&p->g->values[n->out].desc, &p->g->values[c.out_value].desc))
        r = nnop__fail(p->ctx, NNOP_ERR_INTERNAL, "norm: the epilogue changed the output's view");
    st->y_slot = c.out_value;
    nnop__chain_free(&c);
    return r;
}

static nnop_status norm_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[t->first];
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    nnop__norm_kparams *k = &st->norm;
    nnop_status r = nnop__slot_value(p, n->in[0], &st->x_slot);
    if (r == NNOP_OK)
        r = param(p, n, 1, &st->gamma_slot, &k->gv, &k->g_dtype, &k->g_per_element);
    if (r == NNOP_OK && n->op != NNOP_OP_RMS_NORM)
        r = param(p, n, 2, &st->beta_slot, &k->bv, &k->b_dtype, &k->b_per_element);
    else
        st->beta_slot = -1;
    if (r == NNOP_OK)
        r = fuse_epilogue(p, t, st);
    if (r != NNOP_OK)
        return r;
    if (t->before[0]) { /* cuDNN's norm-forward refused it: say why (nnop_plan_describe) */
        char was[NNOP_REASON_LEN];
        snprintf(was, sizeof was, "%s", p->parts[t->part].reason);
        snprintf(p->parts[t->part].reason, sizeof p->parts[t->part].reason,
                 "cuDNN's norm-forward refused: %.140s%s%.70s", t->before, was[0] ? "; " : "", was);
    }
    st->kind = NNOP_STEP_NORM;
    k->n_ops = st->epi.n_ops;
    k->dtype = (int)x->dtype;
    k->xv = nnop__kview_of(x);
    k->rms = n->op == NNOP_OP_RMS_NORM;
    k->per_position = n->op == NNOP_OP_RMS_NORM ||
                      (n->op == NNOP_OP_LAYER_NORM && n->attr.norm.axes == NNOP_NORM_C);
    k->groups = n->op == NNOP_OP_GROUP_NORM ? n->attr.norm.groups : 1;
    k->eps = n->attr.norm.eps;
    return NNOP_OK;
}

static nnop_status norm_run(nnop_plan *p, nnop__cuda_step *st)
{
    void *const *slot = p->cuda->slot;
    st->norm.x = slot[st->x_slot];
    st->norm.y = slot[st->y_slot];
    st->norm.gamma = st->gamma_slot >= 0 ? slot[st->gamma_slot] : NULL;
    st->norm.beta = st->beta_slot >= 0 ? slot[st->beta_slot] : NULL;
    nnop__step_fill_ops(p, st);
    memcpy(st->norm.ops, st->epi.ops, (size_t)st->epi.n_ops * sizeof st->epi.ops[0]);
    return nnop__cuda_check(p->ctx, nnop__k_norm(&st->norm, p->ctx->cuda->stream), "nnop__k_norm",
                            __FILE__, __LINE__);
}

/* The kernel nnop__k_norm launches for the step's shape: the vector path when x and y are
 * 16-byte aligned (every buffer of the plan is; a caller's may not be), else the next; then
 * the fused epilogue, if any. */
static size_t norm_describe(const nnop_plan *p, const nnop__cuda_step *st, char *buf, size_t len)
{
    const nnop__norm_kparams *k = &st->norm;
    const char *what = k->rms ? "RMS norm" : "layer norm";
    const char *rows = nnop__k_norm_rows_warp(k) ? "a warp" : "a thread";
    int lanes = nnop__k_norm_vec_lanes(k);
    nnop__text t;
    (void)p;
    nnop__text_init(&t, buf, len);
    if (!k->per_position)
        nnop__textf(&t, "[own kernel: norm over %lld group%s, a block each", (long long)k->groups,
                    k->groups == 1 ? "" : "s");
    else if (lanes > 0)
        nnop__textf(&t,
                    "[own kernel: %s over C, 16-byte vectors, %d lane%s a position (%s a "
                    "position where x or y is not 16-byte aligned)",
                    what, lanes, lanes == 1 ? "" : "s", rows);
    else
        nnop__textf(&t, "[own kernel: %s over C, %s a position", what, rows);
    if (k->n_ops > 0) {
        nnop__textf(&t, "; then ");
        nnop__epi_ops_text(st->epi.ops, k->n_ops, &t);
        nnop__textf(&t, ", in the same pass");
    }
    nnop__textf(&t, "]");
    return t.used;
}

const nnop__impl nnop__impl_norm = {"own norm kernel", norm_fits,     norm_build,
                                    norm_run,          norm_describe, NULL};
