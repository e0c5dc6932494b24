/* blaslt.c: linear partitions (linear [+ bias] [+ ReLU or tanh-GELU], batch-norm folded) on
 * cuBLASLt with its bias/activation epilogues. Its kernels ship compiled, while cuDNN's
 * matmul engines on sm_90 are runtime-compiled: so under the precompiled-first policies a
 * linear layer no longer waits for NVRTC in a cold start, nor falls back to nnop's own
 * (simple) linear kernel under the precompiled-only one.
 *
 * Row-major y [N, OUT] = x [N, IN] w^T ([OUT, IN]) is, column-major, y^T [OUT, N] =
 * op(w) [OUT, IN] x^T [IN, N] with w stored [IN, OUT] (ld IN) and op = transpose; the bias
 * runs along OUT, the rows of y^T, which is how cuBLASLt's epilogue applies it. */
#include <stdio.h>
#include <stdlib.h>

#include "cuda/impl/impl.h"

#define LT_WORKSPACE_MAX ((size_t)32 << 20) /* what cuBLASLt may ask for, unless limited */

struct nnop__lt_step {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t w, x, y;
    cublasLtMatmulAlgo_t algo;
    size_t workspace;
    int32_t bias_slot;    /* -1: no bias */
    const char *epilogue; /* for nnop_plan_describe */
    /* what the matmul descriptor was made with, for an execution context's copy */
    nnop_dtype dtype;
    cublasLtEpilogue_t epi;
    cudaDataType_t bias_type;
    int run_copy; /* 1: a copy whose layouts are the original's (only op is its own) */
};

static nnop_status cublas_check(nnop_context *ctx, cublasStatus_t s, const char *call,
                                const char *file, int line)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return NNOP_OK;
    return nnop__fail(ctx,
                      /* a refused configuration: the caller takes another path */
                      s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE
                              ? NNOP_ERR_UNSUPPORTED
                      : s == CUBLAS_STATUS_ALLOC_FAILED ? NNOP_ERR_OUT_OF_MEMORY
                                                        : NNOP_ERR_CUDA,
                      "%s failed: %s (%d): %s (%s:%d)", call, cublasLtGetStatusName(s), (int)s,
                      cublasLtGetStatusString(s), file, line);
}

#define NNOP_LT(ctx, call) cublas_check((ctx), (call), #call, __FILE__, __LINE__)

static cudaDataType_t lt_type(nnop_dtype t)
{
    return t == NNOP_F16 ? CUDA_R_16F : t == NNOP_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

/* The chain after the matmul as one of cuBLASLt's epilogues; 0 if it is not one. */
static int lt_epilogue(const nnop__chain *c, cublasLtEpilogue_t *out, const char **name)
{
    int k = 0, bias = 0, act = NNOP_ACT_IDENTITY;
    if (k < c->n_ops && c->ops[k].kind == NNOP_EPI_BIAS)
        bias = 1, k++;
    if (k < c->n_ops && c->ops[k].kind == NNOP_EPI_ACT &&
        (c->ops[k].act.kind == NNOP_ACT_RELU || c->ops[k].act.kind == NNOP_ACT_GELU_TANH))
        act = (int)c->ops[k++].act.kind;
    if (k != c->n_ops)
        return 0;
    if (act == NNOP_ACT_RELU) {
        *out = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
        *name = bias ? "bias+relu" : "relu";
    } else if (act == NNOP_ACT_GELU_TANH) {
        *out = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
        *name = bias ? "bias+gelu_tanh" : "gelu_tanh";
    } else {
        *out = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
        *name = bias ? "bias" : "none";
    }
    return 1;
}

static nnop_status lt_handle(nnop_context *ctx)
{
    return ctx->cuda->lt ? NNOP_OK : NNOP_LT(ctx, cublasLtCreate(&ctx->cuda->lt));
}

static nnop_status layouts(nnop_context *ctx, nnop__lt_step *s, cudaDataType_t t, uint64_t n,
                           uint64_t in, uint64_t out)
{
    nnop_status st = NNOP_LT(ctx, cublasLtMatrixLayoutCreate(&s->w, t, in, out, (int64_t)in));
    if (st == NNOP_OK)
        st = NNOP_LT(ctx, cublasLtMatrixLayoutCreate(&s->x, t, in, n, (int64_t)in));
    if (st == NNOP_OK)
        st = NNOP_LT(ctx, cublasLtMatrixLayoutCreate(&s->y, t, out, n, (int64_t)out));
    return st;
}

static nnop_status matmul_desc(nnop_context *ctx, nnop__lt_step *s, nnop_dtype t,
                               cublasLtEpilogue_t epi, cudaDataType_t bias_type)
{
    cublasComputeType_t comp = t == NNOP_F32 && ctx->opts.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                     : CUBLAS_COMPUTE_32F;
    cublasOperation_t trans = CUBLAS_OP_T;
    nnop_status st = NNOP_LT(ctx, cublasLtMatmulDescCreate(&s->op, comp, CUDA_R_32F));
    s->dtype = t;
    s->epi = epi;
    s->bias_type = bias_type;
    if (st == NNOP_OK)
        st = NNOP_LT(ctx, cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &trans,
                                                         sizeof trans));
    if (st == NNOP_OK)
        st = NNOP_LT(ctx, cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi,
                                                         sizeof epi));
    if (st == NNOP_OK && s->bias_slot >= 0)
        st = NNOP_LT(ctx, cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                                         &bias_type, sizeof bias_type));
    return st;
}

/* The first algorithm cuBLASLt's heuristics offer within the workspace limit; a
 * deterministic context excludes split-K reductions across CTAs. */
static nnop_status pick_algo(nnop_context *ctx, nnop__lt_step *s)
{
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    size_t limit = ctx->opts.workspace_limit && ctx->opts.workspace_limit < LT_WORKSPACE_MAX
                           ? ctx->opts.workspace_limit
                           : LT_WORKSPACE_MAX;
    uint32_t none = CUBLASLT_REDUCTION_SCHEME_NONE;
    int found = 0;
    nnop_status st = NNOP_LT(ctx, cublasLtMatmulPreferenceCreate(&pref));
    if (st == NNOP_OK)
        st = NNOP_LT(ctx,
                     cublasLtMatmulPreferenceSetAttribute(
                             pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit));
    if (st == NNOP_OK && ctx->opts.deterministic)
        st = NNOP_LT(ctx,
                     cublasLtMatmulPreferenceSetAttribute(
                             pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &none, sizeof none));
    if (st == NNOP_OK)
        st = NNOP_LT(ctx, cublasLtMatmulAlgoGetHeuristic(ctx->cuda->lt, s->op, s->w, s->x, s->y,
                                                         s->y, pref, 1, &res, &found));
    if (pref)
        (void)cublasLtMatmulPreferenceDestroy(pref);
    if (st == NNOP_OK && found < 1)
        st = nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "cuBLASLt offers no algorithm");
    if (st == NNOP_OK) {
        s->algo = res.algo;
        s->workspace = res.workspaceSize;
    }
    return st;
}

void nnop__lt_step_destroy(nnop__lt_step *s)
{
    if (!s)
        return;
    if (s->op)
        (void)cublasLtMatmulDescDestroy(s->op);
    if (s->run_copy) {
        free(s);
        return;
    }
    if (s->w)
        (void)cublasLtMatrixLayoutDestroy(s->w);
    if (s->x)
        (void)cublasLtMatrixLayoutDestroy(s->x);
    if (s->y)
        (void)cublasLtMatrixLayoutDestroy(s->y);
    free(s);
}

/* The bias as a device slot in the output's dtype: cuBLASLt 13 refuses a float32 bias with
 * 16-bit outputs (CUBLAS_STATUS_INVALID_VALUE from the heuristics, H200). A folded constant
 * bias is rounded once more, to the dtype the output is rounded to anyway. */
static nnop_status bias_operand(nnop_plan *p, const nnop__chain *c, nnop__lt_step *s, nnop_dtype t,
                                cudaDataType_t *type)
{
    const nnop__chain_op *o = &c->ops[0];
    size_t bytes = (size_t)c->channels * nnop_dtype_size(t);
    void *h;
    nnop_status st;
    s->bias_slot = -1;
    if (c->n_ops == 0 || o->kind != NNOP_EPI_BIAS)
        return NNOP_OK;
    if (!o->host[0]) { /* a graph input, used as is */
        s->bias_slot = o->slot[0];
        *type = lt_type(o->dtype);
        return NNOP_OK;
    }
    *type = lt_type(t);
    h = malloc(bytes);
    if (!h)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    st = nnop_convert(NNOP_F32, o->host[0], t, h, c->channels);
    if (st == NNOP_OK)
        st = nnop__slot_upload_const(p, "constant", h, bytes, &s->bias_slot);
    free(h);
    return st;
}

static nnop_status build(nnop_plan *p, const nnop__chain *c, nnop__lt_step *s)
{
    const nnop__node *n = &p->g->nodes[c->producer];
    const nnop_tensor_desc *x = &p->g->values[n->in[0]].desc;
    const nnop_tensor_desc *y = &p->g->values[c->out_value].desc;
    cublasLtEpilogue_t epi;
    cudaDataType_t bias_type = CUDA_R_32F;
    nnop_status st;
    if (x->ndim != 2 || y->dtype != x->dtype || !lt_epilogue(c, &epi, &s->epilogue))
        return NNOP_ERR_UNSUPPORTED;
    st = lt_handle(p->ctx);
    if (st == NNOP_OK)
        st = bias_operand(p, c, s, x->dtype, &bias_type);
    if (st == NNOP_OK)
        st = layouts(p->ctx, s, lt_type(x->dtype), (uint64_t)x->dims[0], (uint64_t)x->dims[1],
                     (uint64_t)c->channels);
    if (st == NNOP_OK)
        st = matmul_desc(p->ctx, s, x->dtype, epi, bias_type);
    if (st == NNOP_OK)
        st = pick_algo(p->ctx, s);
    return st;
}

/* Whether the nodes after the linear one will fold into [bias] [ReLU or tanh-GELU]: checked
 * before the chain is built, which uploads (and may fold) the weights. */
static int chain_fits(const nnop_plan *p, int32_t first, int32_t count)
{
    const nnop__node *lin = &p->g->nodes[first];
    int const_biases = 0, runtime_biases = 0, bn = 0, act = 0;
    int32_t i;
    if (lin->in[2] != NNOP_NONE_ID)
        nnop__value_is_const(p->g, lin->in[2]) ? const_biases++ : runtime_biases++;
    for (i = first + 1; i < first + count; i++) {
        const nnop__node *n = &p->g->nodes[i];
        int k = n->op == NNOP_OP_ACT ? (int)n->attr.act.kind : -1;
        if (k == NNOP_ACT_IDENTITY)
            continue;
        if (act)
            return 0;
        if (n->op == NNOP_OP_BIAS)
            nnop__value_is_const(p->g, n->in[1]) ? const_biases++ : runtime_biases++;
        else if (nnop__bn_is_const(p->g, n))
            bn++;
        else if (k == NNOP_ACT_RELU || k == NNOP_ACT_GELU_TANH)
            act = 1;
        else
            return 0;
    }
    if (runtime_biases)
        return runtime_biases == 1 && const_biases == 0 && bn == 0;
    return bn == 0 ||
           nnop__value_is_const(p->g, lin->in[1]); /* batch-norm folds into constant weights */
}

nnop_status nnop__step_build_blaslt(nnop_plan *p, int32_t first, int32_t count, nnop__cuda_step *st)
{
    nnop__lt_step *s;
    nnop__chain c;
    nnop_status r;
    if (p->g->nodes[first].op != NNOP_OP_LINEAR || !chain_fits(p, first, count))
        return NNOP_ERR_UNSUPPORTED;
    s = (nnop__lt_step *)calloc(1, sizeof *s);
    if (!s)
        return nnop__fail(p->ctx, NNOP_ERR_OUT_OF_MEMORY, "nnop_graph_compile: out of memory");
    r = nnop__chain_build(p, first, count, 1, &c);
    if (r == NNOP_OK)
        r = build(p, &c, s);
    if (r == NNOP_OK) {
        st->kind = NNOP_STEP_BLASLT;
        st->lt = s;
        st->x_slot = c.x_slot;
        st->w_slot = c.w_slot;
        st->y_slot = c.out_value;
        st->folded = c.folded;
    } else {
        nnop__lt_step_destroy(s);
    }
    nnop__chain_free(&c);
    return r;
}

nnop_status nnop__step_run_blaslt(nnop_plan *p, nnop__cuda_step *st)
{
    const nnop__lt_step *s = st->lt;
    void **slot = p->cuda->slot;
    const float one = 1.0f, zero = 0.0f;
    nnop_status r = NNOP_OK;
    if (s->bias_slot >= 0) /* a graph input's pointer changes with each binding */
        r = NNOP_LT(p->ctx, cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                           &slot[s->bias_slot], sizeof(void *)));
    if (r == NNOP_OK)
        r = NNOP_LT(p->ctx,
                    cublasLtMatmul(p->ctx->cuda->lt, s->op, &one, slot[st->w_slot], s->w,
                                   slot[st->x_slot], s->x, &zero, slot[st->y_slot], s->y,
                                   slot[st->y_slot], s->y, &s->algo, nnop__step_workspace(p, st),
                                   s->workspace, p->ctx->cuda->stream));
    return r;
}

/* The run sets the bias pointer in the matmul descriptor (a graph input's changes with each
 * binding): a copy has a descriptor of its own, made as the original's was. */
nnop_status nnop__lt_step_run_copy(nnop_context *ctx, const nnop__lt_step *s, nnop__lt_step **out)
{
    nnop__lt_step *c = (nnop__lt_step *)malloc(sizeof *c);
    nnop_status st;
    *out = NULL;
    if (!c)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "out of memory");
    *c = *s;
    c->op = NULL;
    c->run_copy = 1;
    st = lt_handle(ctx);
    if (st == NNOP_OK)
        st = matmul_desc(ctx, c, s->dtype, s->epi, s->bias_type);
    if (st != NNOP_OK) {
        nnop__lt_step_destroy(c);
        return st;
    }
    *out = c;
    return NNOP_OK;
}

size_t nnop__lt_step_workspace(const nnop__lt_step *s)
{
    return s ? s->workspace : 0;
}

size_t nnop__lt_step_describe(const nnop__lt_step *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "[cublasLt matmul, epilogue %s, workspace %zu B", s->epilogue,
                     s->workspace);
    return n > 0 ? (size_t)n : 0;
}

/* ------------------------------------------------------------------ the entry */
static int blaslt_fits(const nnop_plan *p, const nnop__impl_try *t, const char **why_not)
{
    if (p->g->nodes[t->first].op != NNOP_OP_LINEAR) {
        *why_not = "not a linear layer";
        return 0;
    }
    if (nnop__cublaslt_load_error()[0]) { /* loaded at run time (device/libs.c) */
        *why_not = nnop__cublaslt_load_error();
        return 0;
    }
    return 1;
}

/* A linear partition: the longest prefix cuBLASLt's epilogues take (linear [+ bias]
 * [+ ReLU/GELU]), the rest on the own epilogue kernel; refused when cuBLASLt takes nothing
 * (the own linear kernel is next in the list). cuDNN's matmul engines are not used (see
 * cudnn.c). */
static nnop_status blaslt_build(nnop_plan *p, nnop__impl_try *t, nnop__cuda_step *step)
{
    int32_t cut;
    nnop_status st = NNOP_ERR_UNSUPPORTED;
    for (cut = t->count; cut >= 1 && st == NNOP_ERR_UNSUPPORTED; cut--) {
        st = nnop__step_build_blaslt(p, t->first, cut, step);
        if (st == NNOP_ERR_UNSUPPORTED) {
            nnop__clear_error(p->ctx);
        } else if (st == NNOP_OK && cut < t->count) {
            t->taken = cut;
            t->who = "cuBLASLt took the prefix";
            snprintf(t->why, sizeof t->why, "its epilogues take linear [+ bias] [+ ReLU/GELU]");
        }
    }
    if (st == NNOP_ERR_UNSUPPORTED)
        snprintf(t->why, sizeof t->why, "cuBLASLt has no algorithm for it");
    return st;
}

static size_t blaslt_describe(const nnop_plan *p, const nnop__cuda_step *s, char *buf, size_t len)
{
    size_t m = nnop__lt_step_describe(s->lt, buf, len);
    int n = m < len ? (int)m +
                              snprintf(buf + m, len - m, "%s]", s->folded ? ", bn/bias folded" : "")
                    : (int)m;
    (void)p;
    return n > 0 ? (size_t)n : 0;
}

static void blaslt_destroy(nnop__cuda_step *st)
{
    nnop__lt_step_destroy(st->lt);
    st->lt = NULL;
}

const nnop__impl nnop__impl_blaslt = {"cublasLt",      blaslt_fits,
                                      blaslt_build,    nnop__step_run_blaslt,
                                      blaslt_describe, blaslt_destroy};
