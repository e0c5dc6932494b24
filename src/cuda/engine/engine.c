/* engine.c: engine selection for one cuDNN operation graph: heuristics A, B, FALLBACK;
 * filters by policy (runtime-compiled, deterministic, TF32, workspace limit, never engine 0
 * for a fused conv graph: cudnn-backend-notes 7.2); first plan that finalizes, or the
 * fastest of the top candidates timed with CUDA events when autotuning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/engine/engine.h"
#include "platform/platform.h"

#define MAX_CANDS       96
#define MAX_NOTES       32
#define AUTOTUNE_TOP_K  6
#define AUTOTUNE_WARMUP 3
#define AUTOTUNE_RUNS   20
/* The GPU is held this long before the timed runs, so that all of them are queued and the
 * events time the GPU, not the ~8 us host cost of each cudnnBackendExecute. */
#define AUTOTUNE_SPIN_NS 1000000

typedef struct cand {
    cudnnBackendDescriptor_t cfg;
    int64_t engine;
    int rtc, nondet, tf32;
} cand;

typedef struct search {
    cand c[MAX_CANDS];
    int n;
    int per_mode[3];
    int skipped_eng0, skipped_policy, skipped_shape, failed;
    char last_fail[384];
} search;

static nnop_status read_notes(nnop_context *ctx, cudnnBackendDescriptor_t cfg, cand *c)
{
    cudnnBackendDescriptor_t e = NULL;
    cudnnBackendBehaviorNote_t bn[MAX_NOTES];
    cudnnBackendNumericalNote_t nn[MAX_NOTES];
    int64_t n = 0, i;
    nnop_status st =
            NNOP_DNN(ctx, cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &e));
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e));
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                    CUDNN_TYPE_INT64, 1, &n, &c->engine));
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                                    CUDNN_TYPE_BEHAVIOR_NOTE, MAX_NOTES, &n, bn));
    for (i = 0; st == NNOP_OK && i < n; i++)
        c->rtc |= bn[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    if (st == NNOP_OK)
        st = NNOP_DNN(ctx, cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                                    CUDNN_TYPE_NUMERICAL_NOTE, MAX_NOTES, &n, nn));
    for (i = 0; st == NNOP_OK && i < n; i++) {
        c->nondet |= nn[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
        c->tf32 |= nn[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
                   nn[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
    }
    if (e)
        (void)cudnnBackendDestroyDescriptor(e);
    return st;
}

static int known(const search *s, int64_t engine)
{
    int i;
    for (i = 0; i < s->n; i++)
        if (s->c[i].engine == engine)
            return 1;
    return 0;
}

/* Keep the configs of result list cfgs[0..got) not seen before. */
static void take_results(nnop_context *ctx, search *s, cudnnBackendDescriptor_t *cfgs, int64_t got,
                         int mode_index)
{
    int64_t i;
    for (i = 0; i < got; i++) {
        cand c;
        memset(&c, 0, sizeof c);
        c.cfg = cfgs[i];
        if (s->n < MAX_CANDS && read_notes(ctx, cfgs[i], &c) == NNOP_OK && !known(s, c.engine)) {
            s->c[s->n++] = c;
            s->per_mode[mode_index]++;
        } else {
            (void)cudnnBackendDestroyDescriptor(cfgs[i]);
        }
    }
}

static nnop_status heuristics(nnop_context *ctx, nnop__dnn_step *st, cudnnBackendHeurMode_t mode,
                              int mode_index, search *s)
{
    cudnnBackendDescriptor_t h = NULL, cfgs[MAX_CANDS];
    int64_t count = 0, got = 0, i;
    const nnop__attr attrs[] = {
            NNOP_ATTR_DESC(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, &st->graph),
            NNOP_ATTR(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)};
    nnop_status r =
            NNOP_DNN(ctx, cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &h));
    if (r == NNOP_OK)
        r = nnop__dnn_set_all(ctx, h, attrs, NNOP_COUNT(attrs), "engine heuristics");
    if (r == NNOP_OK)
        r = NNOP_DNN(ctx, cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL));
    if (count > MAX_CANDS)
        count = MAX_CANDS;
    for (i = 0; r == NNOP_OK && i < count; i++)
        r = NNOP_DNN(ctx,
                     cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[i]));
    count = i;
    if (r == NNOP_OK && count > 0)
        r = NNOP_DNN(ctx,
                     cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                              CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs));
    if (r != NNOP_OK)
        got = 0;
    take_results(ctx, s, cfgs, got, mode_index);
    for (i = got; i < count; i++)
        (void)cudnnBackendDestroyDescriptor(cfgs[i]);
    if (h)
        (void)cudnnBackendDestroyDescriptor(h);
    return r;
}

/* 0: usable in this pass; 1: skipped for now (runtime-compiled, first pass); 2: never. */
static int filter(const nnop_context *ctx, const nnop__dnn_step *st, const cand *c, int pass,
                  search *s)
{
    const nnop_context_options *o = &ctx->opts;
    if (c->engine == 0 && st->is_conv && st->n_ops > 1) {
        s->skipped_eng0 += pass == 0;
        return 2;
    }
    if (c->rtc && st->rtc_unsafe) {
        s->skipped_shape += pass == 0;
        return 2;
    }
    if ((o->deterministic && c->nondet) || (st->fp32 && !o->allow_tf32 && c->tf32) ||
        (c->rtc && o->policy == NNOP_POLICY_PRECOMPILED_ONLY)) {
        s->skipped_policy += pass == 0;
        return 2;
    }
    if (c->rtc && pass == 0 && o->policy == NNOP_POLICY_PREFER_PRECOMPILED)
        return 1;
    return 0;
}

/* ------------------------------------------------------------------ autotuning */
/* One scratch block for every real tensor of s (contents irrelevant to timing) and the
 * workspace after them. */
static nnop_status scratch(nnop_context *ctx, const nnop__dnn_step *s, int64_t ws, void **mem,
                           void **ptrs, void **wsp)
{
    size_t off = 0, total = (size_t)ws + 256;
    int i;
    nnop_status st;
    for (i = 0; i < s->n_io; i++)
        total += ((size_t)s->bytes[i] + 255) / 256 * 256;
    st = NNOP_CU(ctx, cudaMalloc(mem, total));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaMemsetAsync(*mem, 0, total, ctx->cuda->stream));
    for (i = 0; st == NNOP_OK && i < s->n_io; i++) {
        ptrs[i] = (char *)*mem + off;
        off += ((size_t)s->bytes[i] + 255) / 256 * 256;
    }
    *wsp = ws ? (char *)*mem + off : NULL;
    return st;
}

/* GPU time of AUTOTUNE_RUNS executes queued behind a spin kernel, per execute. */
static nnop_status timed_runs(nnop_context *ctx, cudnnBackendDescriptor_t plan,
                              cudnnBackendDescriptor_t vp, cudaEvent_t e0, cudaEvent_t e1,
                              float *us)
{
    cudaStream_t strm = ctx->cuda->stream;
    float ms = 0.0f;
    int i;
    nnop_status st = NNOP_OK;
    for (i = 0; i < AUTOTUNE_WARMUP && st == NNOP_OK; i++)
        st = NNOP_DNN(ctx, cudnnBackendExecute(ctx->cuda->handle, plan, vp));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, nnop__k_spin(AUTOTUNE_SPIN_NS, strm));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventRecord(e0, strm));
    for (i = 0; i < AUTOTUNE_RUNS && st == NNOP_OK; i++)
        st = NNOP_DNN(ctx, cudnnBackendExecute(ctx->cuda->handle, plan, vp));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventRecord(e1, strm));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventSynchronize(e1));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventElapsedTime(&ms, e0, e1));
    *us = ms * 1000.0f / AUTOTUNE_RUNS;
    return st;
}

/* Mean GPU time of one execute of plan on scratch buffers. */
static nnop_status time_plan(nnop_context *ctx, const nnop__dnn_step *s,
                             cudnnBackendDescriptor_t plan, int64_t ws, float *us)
{
    void *mem = NULL, *wsp = NULL, *ptrs[NNOP_STEP_MAX_IO];
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudnnBackendDescriptor_t vp = NULL;
    nnop_status st = scratch(ctx, s, ws, &mem, ptrs, &wsp);
    if (st == NNOP_OK)
        st = nnop__dnn_make_vpack(ctx, s, ptrs, wsp, &vp);
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventCreate(&e0));
    if (st == NNOP_OK)
        st = NNOP_CU(ctx, cudaEventCreate(&e1));
    if (st == NNOP_OK)
        st = timed_runs(ctx, plan, vp, e0, e1, us);
    if (vp)
        (void)cudnnBackendDestroyDescriptor(vp);
    if (e0)
        (void)cudaEventDestroy(e0);
    if (e1)
        (void)cudaEventDestroy(e1);
    (void)cudaStreamSynchronize(ctx->cuda->stream);
    (void)cudaFree(mem);
    return st;
}

/* ------------------------------------------------------------------ selection */
static void keep(nnop__dnn_step *st, search *s, int i, cudnnBackendDescriptor_t plan, int64_t ws,
                 float us)
{
    if (st->plan)
        (void)cudnnBackendDestroyDescriptor(st->plan);
    if (st->cfg)
        (void)cudnnBackendDestroyDescriptor(st->cfg);
    st->plan = plan;
    st->cfg = s->c[i].cfg;
    s->c[i].cfg = NULL;
    st->engine = s->c[i].engine;
    st->rtc = s->c[i].rtc;
    st->workspace = ws;
    st->time_us = us;
}

static int autotuning(const nnop_context *ctx)
{
    return ctx->opts.autotune || ctx->opts.policy == NNOP_POLICY_FASTEST;
}

/* Try the candidates of one pass; returns how many plans were kept/timed. */
static int try_pass(nnop_plan *p, nnop__dnn_step *st, search *s, int pass, int built)
{
    nnop_context *ctx = p->ctx;
    int i, limit = autotuning(ctx) ? AUTOTUNE_TOP_K : 1;
    for (i = 0; i < s->n && built < limit; i++) {
        cudnnBackendDescriptor_t plan = NULL;
        int64_t ws = 0;
        float us = 0.0f;
        if (!s->c[i].cfg || filter(ctx, st, &s->c[i], pass, s) != 0)
            continue;
        if (nnop__dnn_build_plan(ctx, s->c[i].cfg, &plan, &ws) != NNOP_OK ||
            (ctx->opts.workspace_limit && (size_t)ws > ctx->opts.workspace_limit) ||
            (limit > 1 && time_plan(ctx, st, plan, ws, &us) != NNOP_OK)) {
            int n = snprintf(s->last_fail, sizeof s->last_fail,
                             "eng%lld: ", (long long)s->c[i].engine);
            nnop__copy_text(s->last_fail + n, sizeof s->last_fail - (size_t)n,
                            plan ? "over the workspace limit or failed to run"
                                 : nnop__error_body(ctx));
            if (plan)
                (void)cudnnBackendDestroyDescriptor(plan);
            s->failed++;
            (void)cudnnBackendDestroyDescriptor(s->c[i].cfg);
            s->c[i].cfg = NULL;
            continue;
        }
        if (!st->plan || us < st->time_us)
            keep(st, s, i, plan, ws, us);
        else
            (void)cudnnBackendDestroyDescriptor(plan);
        built++;
    }
    return built;
}

static int cache_usable(const nnop_context *ctx)
{
    return ctx->plan_cache && ctx->cuda->cache_ok;
}

/* Heuristics, then the passes; times go to the plan cache's counters. */
static void search_engines(nnop_plan *p, nnop__dnn_step *st, search *s)
{
    static const cudnnBackendHeurMode_t modes[3] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B,
                                                    CUDNN_HEUR_MODE_FALLBACK};
    nnop_context *ctx = p->ctx;
    uint64_t t0 = nnop__monotonic_ns();
    int i, built;
    for (i = 0; i < 3; i++)
        (void)heuristics(ctx, st, modes[i], i, s); /* a mode may refuse a graph: not fatal */
    if (ctx->plan_cache)
        nnop__cache_add_time(ctx->plan_cache, NNOP_CACHE_T_HEURISTICS, nnop__monotonic_ns() - t0);
    t0 = nnop__monotonic_ns();
    built = try_pass(p, st, s, 0, 0);
    if (!built || (autotuning(ctx) && built < AUTOTUNE_TOP_K))
        built = try_pass(p, st, s, 1, built);
    st->tuned = autotuning(ctx) && built > 1;
    if (ctx->plan_cache)
        nnop__cache_add_time(ctx->plan_cache,
                             autotuning(ctx) ? NNOP_CACHE_T_AUTOTUNE : NNOP_CACHE_T_FINALIZE,
                             nnop__monotonic_ns() - t0);
    for (i = 0; i < s->n; i++)
        if (s->c[i].cfg)
            (void)cudnnBackendDestroyDescriptor(s->c[i].cfg);
}

/* An earlier step of this plan with the same fingerprint (same lowered graph, uids
 * included), or NULL. */
static nnop__dnn_step *find_twin(const struct nnop__cuda_plan *cp, const nnop__fp *fp)
{
    int32_t i;
    for (i = 0; i < cp->n_memo; i++)
        if (cp->memo_fp[i].lo == fp->lo && cp->memo_fp[i].hi == fp->hi)
            return cp->memo_step[i];
    return NULL;
}

static void share_plan(nnop__dnn_step *st, const nnop__dnn_step *twin)
{
    st->plan = twin->plan;
    st->plan_shared = 1;
    st->cached = twin->cached;
    st->engine = twin->engine;
    st->rtc = twin->rtc;
    st->workspace = twin->workspace;
    st->tuned = twin->tuned;
    st->time_us = twin->time_us;
}

/* Remember st's choice for identical later steps (best effort: a full memo only costs time). */
static void remember(struct nnop__cuda_plan *cp, nnop__dnn_step *st, const nnop__fp *fp)
{
    if (cp->n_memo == cp->cap_memo) {
        int32_t cap = cp->cap_memo ? 2 * cp->cap_memo : 32;
        nnop__fp *f = (nnop__fp *)realloc(cp->memo_fp, (size_t)cap * sizeof *f);
        nnop__dnn_step **d;
        if (!f)
            return;
        cp->memo_fp = f;
        d = (nnop__dnn_step **)realloc(cp->memo_step, (size_t)cap * sizeof *d);
        if (!d)
            return;
        cp->memo_step = d;
        cp->cap_memo = cap;
    }
    cp->memo_fp[cp->n_memo] = *fp;
    cp->memo_step[cp->n_memo++] = st;
}

/* Heuristics (or the plan cache) for a step with no twin earlier in the plan. */
static nnop_status select_fresh(nnop_plan *p, nnop__dnn_step *st, const nnop__fp *fp, char *why,
                                size_t len)
{
    nnop_context *ctx = p->ctx;
    search *s;
    nnop_status r;
    int no_engine = 0;
    if (cache_usable(ctx) && nnop__dnn_from_cache(p, st, fp, &no_engine) == NNOP_OK) {
        nnop__clear_error(ctx);
        return NNOP_OK;
    }
    if (no_engine) {
        snprintf(why, len, "no engine under this policy (a search remembered by the plan cache)");
        return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "%s", why);
    }
    r = nnop__dnn_graph(ctx, st); /* a graph cuDNN refuses: the caller splits the chain */
    if (r != NNOP_OK) {
        nnop__copy_text(why, len, nnop__error_body(ctx));
        return r;
    }
    s = (search *)nnop__calloc(1, sizeof *s);
    if (!s)
        return nnop__fail(ctx, NNOP_ERR_OUT_OF_MEMORY, "engine selection: out of memory");
    search_engines(p, st, s);
    if (st->plan) {
        nnop__free(s);
        if (ctx->plan_cache)
            nnop__cache_count(ctx->plan_cache, NNOP_CACHE_EV_PLAN_BUILT);
        if (cache_usable(ctx))
            nnop__dnn_to_cache(ctx, st, fp);
        nnop__clear_error(ctx);
        return NNOP_OK;
    }
    snprintf(why, len,
             "no engine: heuristics A/B/FALLBACK offered %d/%d/%d engines, %d refused by policy, "
             "%d engine-0 fallbacks refused for a fused graph, %d runtime-compiled refused for "
             "this shape class, %d failed%s%s",
             s->per_mode[0], s->per_mode[1], s->per_mode[2], s->skipped_policy, s->skipped_eng0,
             s->skipped_shape, s->failed, s->failed ? "; last: " : "", s->last_fail);
    if (cache_usable(ctx) && s->failed == 0) /* refused outright, not a failure to build or run */
        nnop__dnn_no_engine_to_cache(ctx, fp);
    nnop__free(s);
    return nnop__fail(ctx, NNOP_ERR_UNSUPPORTED, "%s", why);
}

static nnop_status select_engine(nnop_plan *p, nnop__dnn_step *st, char *why, size_t len)
{
    nnop_context *ctx = p->ctx;
    nnop__fp fp = nnop__dnn_fingerprint(ctx, st);
    nnop__dnn_step *twin = find_twin(p->cuda, &fp);
    nnop_status status;
    if (twin) {
        share_plan(st, twin);
        return NNOP_OK;
    }
    status = select_fresh(p, st, &fp, why, len);
    if (status == NNOP_OK)
        remember(p->cuda, st, &fp);
    return status;
}

void nnop__engine_reshare(nnop_plan *p, nnop__dnn_step *d)
{
    nnop__fp fp;
    nnop__dnn_step *twin;
    if (!d || !d->plan_shared)
        return;
    fp = nnop__dnn_fingerprint(p->ctx, d);
    twin = find_twin(p->cuda, &fp);
    if (twin)
        share_plan(d, twin);
}

nnop_status nnop__engine_select(nnop_plan *p, nnop__dnn_step *st, char *why, size_t len)
{
    uint64_t t0 = nnop__monotonic_ns();
    nnop_status status = select_engine(p, st, why, len);
    p->cuda->prof.select_ns += nnop__monotonic_ns() - t0;
    return status;
}
