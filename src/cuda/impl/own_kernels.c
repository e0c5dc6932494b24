/* own_kernels.c: partitions run by nnop's own kernels (three entries of the implementation
 * list): pointwise epilogue chains (standalone or split off a producer), the linear layers
 * cuBLASLt refused, pooling (cuDNN's resample crashes for bf16 on sm_90 and is
 * runtime-compiled only), global average pooling (standalone reductions are unsupported on
 * sm_90), softmax and flatten (a layout transpose for NHWC). */
#include <stdio.h>
#include <string.h>

#include "cuda/impl/impl.h"

nnop__kview nnop__kview_of(const nnop_tensor_desc *d)
{
    nnop__kview v = {1, 1, 1, 1, 0, 0, 0, 0};
    int64_t *dims[4], *strides[4];
    int i;
    dims[0] = &v.n, dims[1] = &v.c, dims[2] = &v.h, dims[3] = &v.w;
    strides[0] = &v.sn, strides[1] = &v.sc, strides[2] = &v.sh, strides[3] = &v.sw;
    for (i = 0; i < d->ndim && i < 4; i++) {
        *dims[i] = d->dims[i];
        *strides[i] = d->strides[i];
    }
    return v;
}

/* Per-channel float constants of a chain op become float32 device slots. */
static nnop_status epi_operands(nnop_plan *p, const nnop__chain *c, int k, nnop__cuda_step *st)
{
    const nnop__chain_op *o = &c->ops[k];
    nnop__epi_op *e = &st->epi.ops[k];
    nnop_status r = NNOP_OK;
    int i;
    e->kind = o->kind;
    e->dtype = (int)o->dtype;
    e->act = (int)o->act.kind;
    e->alpha = o->act.alpha;
    e->lo = o->act.lo;
    e->hi = o->act.hi;
    e->eps = o->eps;
    e->bmode = o->bmode;
    e->bsn = o->bsn;
    e->bsc = o->bsc;
    e->xsn = o->xsn;
    for (i = 0; i < 4; i++)
        st->op_slots[k][i] = o->slot[i];
    for (i = 0; i < 2 && r == NNOP_OK; i++)
        if (o->host[i]) {
            e->dtype = (int)NNOP_F32;
            r = nnop__slot_upload_const(p, "constant", o->host[i],
                                        (size_t)c->channels * sizeof(float), &st->op_slots[k][i]);
        }
    return r;
}

nnop_status nnop__step_epi_ops(nnop_plan *p, const nnop__chain *c, nnop__cuda_step *st)
{
    nnop_status r = NNOP_OK;
    int k;
    for (k = 0; k < c->n_ops && r == NNOP_OK; k++)
        r = epi_operands(p, c, k, st);
    st->epi.n_ops = c->n_ops;
    return r;
}

nnop_status nnop__step_build_epilogue(nnop_plan *p, int32_t first, int32_t count,
                                      nnop__cuda_step *st)
{
    nnop__chain c;
    const nnop_tensor_desc *x, *y;
    nnop_status r = nnop__chain_build(p, first, count, 0, &c);
    if (r == NNOP_OK)
        r = nnop__step_epi_ops(p, &c, st);
    if (r == NNOP_OK) {
        x = &p->g->values[c.mid_value].desc;
        y = &p->g->values[c.out_value].desc;
        st->kind = NNOP_STEP_EPILOGUE;
        st->x_slot = c.x_slot;
        st->y_slot = c.out_value;
        st->epi.x_dtype = (int)x->dtype;
        st->epi.y_dtype = (int)y->dtype;
        st->epi.count = nnop_tensor_elements(x);
        st->epi.C = x->ndim > 1 ? x->dims[1] : 1;
        st->epi.cstride = x->ndim > 1 ? x->strides[1] : 1;
        st->epi.n_ops = c.n_ops;
        if (!nnop__desc_equal(x, y))
            r = nnop__fail(p->ctx, NNOP_ERR_INTERNAL, "epilogue: input and output layouts differ");
    }
    nnop__chain_free(&c);
    return r;
}

/* The shape and dtypes of the linear partition [first, first + count) in k (the rest zero). */
static void linear_shape(const nnop_graph *g, int32_t first, int32_t count, nnop__linear_kparams *k)
{
    const nnop__node *n = &g->nodes[first];
    const nnop_tensor_desc *x = &g->values[n->in[0]].desc;
    memset(k, 0, sizeof *k);
    k->dtype = (int)x->dtype;
    k->y_dtype = (int)g->values[g->nodes[first + count - 1].out].desc.dtype;
    k->n = x->dims[0];
    k->in = x->dims[1];
    k->out = g->values[n->out].desc.dims[1];
}

nnop_status nnop__step_build_linear(nnop_plan *p, int32_t first, int32_t count, nnop__cuda_step *st)
{
    nnop__chain c;
    nnop_status r = nnop__chain_build(p, first, count, 0, &c);
    if (r == NNOP_OK)
        r = nnop__step_epi_ops(p, &c, st);
    st->kind = NNOP_STEP_LINEAR;
    st->x_slot = c.x_slot;
    st->w_slot = c.w_slot;
    st->y_slot = c.out_value;
    linear_shape(p->g, first, count, &st->lin);
    nnop__chain_free(&c);
    return r;
}

static void pool_params(const nnop__node *n, nnop__cuda_step *st)
{
    const nnop_pool_params *pp = &n->attr.pool.p;
    int i;
    st->pool.is_max = n->attr.pool.kind == NNOP_POOL_MAX;
    st->pool.count_include_pad = pp->count_include_pad;
    for (i = 0; i < 2; i++) {
        st->pool.window[i] = pp->window[i];
        st->pool.stride[i] = pp->stride[i];
        st->pool.pad[i] = pp->pad[i];
        st->pool.pad_end[i] = pp->pad_end[i];
    }
}

nnop_status nnop__step_build_kernel(nnop_plan *p, int32_t part, nnop__cuda_step *st)
{
    const nnop__node *n = &p->g->nodes[p->parts[part].first];
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    static const nnop__step_kind kinds[NNOP_OP_KIND_COUNT] = {
            [NNOP_OP_POOL] = NNOP_STEP_POOL,
            [NNOP_OP_GLOBAL_AVG_POOL] = NNOP_STEP_GAP,
            [NNOP_OP_SOFTMAX] = NNOP_STEP_SOFTMAX,
            [NNOP_OP_FLATTEN] = NNOP_STEP_FLATTEN};
    if (p->parts[part].count != 1 || kinds[n->op] == NNOP_STEP_DNN)
        return nnop__fail(p->ctx, NNOP_ERR_INTERNAL,
                          "CUDA backend: partition %d (op %s) has no kernel", (int)part,
                          nnop__op(n->op)->name);
    st->kind = kinds[n->op];
    st->xv = nnop__kview_of(x);
    st->yv = nnop__kview_of(&p->g->values[n->out].desc);
    st->dtype = (int)x->dtype;
    st->y_slot = n->out;
    st->scratch_slot = -1;
    if (st->kind == NNOP_STEP_POOL)
        pool_params(n, st);
    if (st->kind == NNOP_STEP_GAP) {
        size_t bytes = nnop__gap_scratch_bytes(&st->xv, st->dtype);
        nnop_status r = bytes ? nnop__slot_run_scratch(p, bytes, &st->scratch_slot) : NNOP_OK;
        if (r != NNOP_OK)
            return r;
    }
    return nnop__slot_value(p, n->in[0], &st->x_slot);
}

void nnop__epi_ops_text(const nnop__epi_op *ops, int n, nnop__text *t)
{
    static const char *const kinds[] = {"bias",       "scale/shift", "batch-norm", "add",
                                        "activation", "mul",         "sub",        "div"};
    int k;
    for (k = 0; k < n; k++)
        nnop__textf(t, "%s%s", k ? " + " : "", kinds[ops[k].kind]);
}

void nnop__bind_epi_ops(nnop_plan *p, nnop__epi_op *ops, int n, int32_t (*slots)[4])
{
    int k, i;
    for (k = 0; k < n; k++)
        for (i = 0; i < 4; i++)
            ops[k].p[i] = slots[k][i] >= 0 ? p->cuda->slot[slots[k][i]] : NULL;
}

void nnop__step_fill_ops(nnop_plan *p, nnop__cuda_step *st)
{
    nnop__bind_epi_ops(p, st->epi.ops, st->epi.n_ops, st->op_slots);
}

static cudaError_t launch(nnop_plan *p, nnop__cuda_step *st, cudaStream_t s)
{
    const void *x = p->cuda->slot[st->x_slot];
    void *y = p->cuda->slot[st->y_slot];
    switch (st->kind) {
    case NNOP_STEP_EPILOGUE:
        st->epi.x = x;
        st->epi.y = y;
        nnop__step_fill_ops(p, st);
        return nnop__k_epilogue(&st->epi, s);
    case NNOP_STEP_POOL:
        st->pool.x = x;
        st->pool.y = y;
        st->pool.dtype = st->dtype;
        st->pool.xv = st->xv;
        st->pool.yv = st->yv;
        return nnop__k_pool(&st->pool, s);
    case NNOP_STEP_LINEAR:
        nnop__step_fill_ops(p, st);
        st->lin.x = x;
        st->lin.w = p->cuda->slot[st->w_slot];
        st->lin.y = y;
        st->lin.epi = st->epi;
        return nnop__k_linear(&st->lin, s);
    case NNOP_STEP_GAP:
        return nnop__k_gap(x, y, st->dtype, &st->xv, &st->yv,
                           st->scratch_slot >= 0 ? (float *)p->cuda->slot[st->scratch_slot] : NULL,
                           s);
    case NNOP_STEP_SOFTMAX:
        return nnop__k_softmax(x, y, st->dtype, &st->xv, s);
    default:
        return nnop__k_flatten(x, y, st->dtype, &st->xv, s);
    }
}

nnop_status nnop__step_run_kernel(nnop_plan *p, nnop__cuda_step *st)
{
    static const char *const names[] = {"",
                                        "nnop__k_epilogue",
                                        "nnop__k_pool",
                                        "nnop__k_gap",
                                        "nnop__k_softmax",
                                        "nnop__k_flatten",
                                        "nnop__k_linear"};
    return nnop__cuda_check(p->ctx, launch(p, st, p->ctx->cuda->stream), names[st->kind], __FILE__,
                            __LINE__);
}

/* ------------------------------------------------------------------ the entries */
static const char *kernel_name(nnop__step_kind k)
{
    static const char *const names[] = {"cudnn",           "epilogue",  "pool",
                                        "global_avg_pool", "softmax",   "flatten",
                                        "linear",          "stem conv", "cublasLt"};
    return names[k];
}
static size_t own_describe(const nnop_plan *p, const nnop__cuda_step *s, char *buf, size_t len)
{
    const int gemv = s->kind == NNOP_STEP_LINEAR && nnop__linear_gemv_fits(&s->lin);
    int n = snprintf(buf, len, "[own kernel: %s%s]",
                     gemv ? "linear as matrix-vector" : kernel_name(s->kind),
                     s->folded ? ", bn/bias folded" : "");
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

static nnop_fusion_role role_of(const nnop_plan *p, const nnop__impl_try *t)
{
    return nnop__op(p->g->nodes[t->first].op)->role;
}

/* The fallback for linear layers cuBLASLt does not take (e.g. fp32 without TF32). */
static int linear_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (p->g->nodes[t->first].op != NNOP_OP_LINEAR) {
        *why_not = "not a linear layer";
        return 0;
    }
    return 1;
}

static nnop_status linear_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    snprintf(p->parts[t->part].reason, sizeof p->parts[t->part].reason, "own linear kernel: %s",
             t->before);
    return nnop__step_build_linear(p, t->first, t->count, st);
}

/* Linear layers at small batch, ahead of cuBLASLt: the matrix-vector kernel reads the weights
 * once at about copy bandwidth, where cuBLASLt's GEMM tiles took 12.9 us for ResNet-50's
 * classifier at batch 1 (H200). */
static int gemv_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    nnop__linear_kparams k;
    if (p->g->nodes[t->first].op != NNOP_OP_LINEAR) {
        *why_not = "not a linear layer";
        return 0;
    }
    linear_shape(p->g, t->first, t->count, &k);
    if (!nnop__linear_gemv_fits(&k)) {
        *why_not = "batch above 8, over 12288 inputs or a dtype change";
        return 0;
    }
    return 1;
}

static nnop_status gemv_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    return nnop__step_build_linear(p, t->first, t->count, st);
}

static int epilogue_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (role_of(p, t) != NNOP_ROLE_EPILOGUE) {
        *why_not = "not a pointwise partition";
        return 0;
    }
    return 1;
}

static nnop_status epilogue_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    return nnop__step_build_epilogue(p, t->first, t->count, st);
}

/* Standalone ops: pooling, global average pooling, softmax, flatten. */
static int kernel_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (role_of(p, t) != NNOP_ROLE_STANDALONE) {
        *why_not = "not a standalone op";
        return 0;
    }
    return 1;
}

static nnop_status kernel_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *st)
{
    return nnop__step_build_kernel(p, t->part, st);
}

const nnop__impl nnop__impl_own_linear = {"own linear kernel",   linear_fits,  linear_build,
                                          nnop__step_run_kernel, own_describe, NULL};
const nnop__impl nnop__impl_own_gemv = {"own matrix-vector kernel", gemv_fits,    gemv_build,
                                        nnop__step_run_kernel,      own_describe, NULL};
const nnop__impl nnop__impl_own_epilogue = {"own epilogue kernel", epilogue_fits, epilogue_build,
                                            nnop__step_run_kernel, own_describe,  NULL};
const nnop__impl nnop__impl_own_kernel = {"own kernel",          kernel_fits,  kernel_build,
                                          nnop__step_run_kernel, own_describe, NULL};
